"""`Ingress`: the HTTP edge of the replica deployment.

It forwards every request to the replica deployment with its affinity key (affinity.py) and
streams the answer back, adding `X-Finrag-Replica`. A replica that dies before its answer
has started is retried on another (nothing reached the client); one that dies mid-stream
ends the stream with an error event; when every replica is full and the handle's queue too,
the answer is 503 with Retry-After, as admission answers in one process. GET /metrics
answers every live replica's metrics, labelled `replica` (live.py says how they come).
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator

from ray.exceptions import RayActorError
from ray.serve.exceptions import BackPressureError
from ray.serve.handle import DeploymentHandle, DeploymentResponseGenerator
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from pipeline.replicas.affinity import affinity_key
from pipeline.replicas.asgi_call import Forwarded, Head
from pipeline.replicas.live import metrics_texts
from pipeline.replicas.metrics_merge import merge
from pipeline.replicas.router import AFFINITY_KWARG
from pipeline.server.errors import error_body, is_openai
from pipeline.server.guards.access import ApiKeyMiddleware
from pipeline.server.streaming import sse as event

logger = logging.getLogger("ray.serve")  # into the replica logs Serve keeps
REPLICA_HEADER = "X-Finrag-Replica"


def _error(path: str, status: int, message: str, headers: dict[str, str] | None = None) -> Response:
    return Response(json.dumps(error_body(path, status, message)), status,
                    {**(headers or {}), REPLICA_HEADER: "none"}, media_type="application/json")


class Ingress:
    def __init__(self, replicas: DeploymentHandle, retries: int, retry_after_s: int,
                 api_keys: dict[bytes, frozenset[str] | None]) -> None:
        self.replicas = replicas.options(stream=True, method_name="handle")
        self.retries, self.retry_after_s = retries, retry_after_s
        # /metrics is answered here only with the key; without it a replica answers 401.
        self.keys = ApiKeyMiddleware(None, api_keys) if api_keys else None

    async def __call__(self, request: Request) -> Response:
        client = (request.client.host, request.client.port) if request.client else None
        fwd = Forwarded(request.method, request.url.path, request.url.query.encode(),
                        list(request.headers.raw), await request.body(), client,
                        request.url.scheme)
        texts = (metrics_texts() if fwd.method == "GET" and fwd.path == "/metrics"
                 and (self.keys is None or self.keys.authorized({"headers": fwd.headers}))
                 else None)
        if texts:  # else (no stats yet) one replica answers, as any GET
            return Response(merge(texts), 200, {REPLICA_HEADER: ",".join(sorted(texts))},
                            media_type="text/plain; version=0.0.4; charset=utf-8")
        key = affinity_key(fwd.method, fwd.path, fwd.body)
        for attempt in range(self.retries + 1):
            stream = self.replicas.remote(fwd, **{AFFINITY_KWARG: key})
            try:
                head = await stream.__anext__()
            except BackPressureError:
                return _error(fwd.path, 503, "server busy: every replica is full and the "
                              f"queue too; retry in {self.retry_after_s} s",
                              {"Retry-After": str(self.retry_after_s)})
            except RayActorError as exc:  # the replica died before answering: nothing sent
                logger.warning("finrag: replica failed before answering (attempt %d): %s",
                               attempt + 1, exc)
                continue
            return self._response(fwd.path, head, stream)
        return _error(fwd.path, 503, "no replica could answer (replicas failed or are being "
                      f"replaced); retry in {self.retry_after_s} s",
                      {"Retry-After": str(self.retry_after_s)})

    def _response(self, path: str, head: Head, stream: DeploymentResponseGenerator) -> Response:
        # Serve's proxy writes its own X-Request-Id (the same id, which it forwarded).
        headers = [*((k, v) for k, v in head.headers if k.lower() != b"x-request-id"),
                   (REPLICA_HEADER.lower().encode(), head.replica.encode())]
        if not head.more:
            response = Response(head.body, head.status)
        else:
            sse = any(k.lower() == b"content-type" and v.startswith(b"text/event-stream")
                      for k, v in head.headers)
            response = StreamingResponse(self._rest(path, head, stream, sse), head.status)
        response.raw_headers = headers
        return response

    async def _rest(self, path: str, head: Head, stream: DeploymentResponseGenerator,
                    sse: bool) -> AsyncIterator[bytes]:
        yield head.body
        try:
            async for piece in stream:
                yield piece
        except RayActorError as exc:
            logger.error("finrag: replica %s died mid-stream: %s", head.replica, exc)
            if sse:  # the status line is gone: the error is the last event, as in one process
                message = f"replica {head.replica} failed mid-answer; ask again"
                yield event(error_body(path, 502, message) if is_openai(path)
                            else {"type": "error", "message": message})
