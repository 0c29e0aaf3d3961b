"""`FinragReplica`: one full pipeline (its own engine, retriever and FastAPI app) in a Ray
Serve replica, answering the requests the ingress forwards to it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from ray import serve

from pipeline.replicas.asgi_call import Forwarded, Head, call
from pipeline.replicas.router import METRICS_STAT
from pipeline.settings import Settings


class FinragReplica:
    async def __init__(self, settings: Settings) -> None:
        from pipeline.rag import RAGPipeline
        from pipeline.server.app import create_app

        self.name = serve.get_replica_context().replica_id.unique_id
        if settings.audit_log:
            # One hash chain per writer: replicas never append to one file together.
            settings = settings.model_copy(update={"audit_log": f"{settings.audit_log}.{self.name}"})
        self.pipeline = await asyncio.to_thread(RAGPipeline.from_settings, settings, False)
        self.app = create_app(settings, pipeline=self.pipeline)
        self._lifespan = self.app.router.lifespan_context(self.app)
        await self._lifespan.__aenter__()
        # The constructor returns (Serve marks the replica running) once the warm-up is done.
        while not self.app.state.ready and self.app.state.start_error is None:
            await asyncio.sleep(0.1)
        if self.app.state.start_error is not None:
            raise self.app.state.start_error

    async def handle(self, request: Forwarded,
                     affinity: str | None = None) -> AsyncIterator[Head | bytes]:
        """The answer to one forwarded request (`affinity` is for the router)."""
        async for item in call(self.app, request, self.name):
            yield item

    def record_routing_stats(self) -> dict[str, str]:
        """Serve carries this to the ingress's router: the replica's /metrics (live.py)."""
        return {METRICS_STAT: self.pipeline.metrics.render().decode()}

    def check_health(self) -> None:
        """Serve replaces a replica whose engine loop has stopped."""
        if not self.pipeline.engine.is_running:
            raise RuntimeError(f"replica {self.name}: the engine loop is not running")

    async def __del__(self) -> None:
        if hasattr(self, "_lifespan"):  # not when the constructor failed
            await self._lifespan.__aexit__(None, None, None)
        if hasattr(self, "pipeline"):
            self.pipeline.shutdown()
