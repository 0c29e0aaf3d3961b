"""`finrag serve --num-replicas N`: build the artifacts once, start or join Ray, run the app.

The driver builds engines/ (model, ONNX encoder, index) before any replica starts and hands
the replicas absolute paths, so N replicas load the same files read-only instead of racing
to build them, whatever their working directory.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from typing import Any

from pipeline.replicas.artifacts import build_artifacts
from pipeline.settings import Settings

RAY_INSTALL = "pip install 'finrag[ray]'"


def serve_replicas(settings: Settings) -> int:
    try:
        import ray
        from ray import serve
    except ImportError as exc:
        raise ImportError(f"--num-replicas {settings.num_replicas} needs Ray Serve ({exc}); "
                          f"install it with: {RAY_INSTALL}") from None
    from pipeline.replicas.deployment import APP_NAME, build_app

    settings = build_artifacts(settings)
    most = settings.max_replicas or settings.num_replicas
    # A local cluster gets a CPU per replica even on a smaller host: replicas share cores.
    local = {} if settings.ray_address else {"num_cpus": max(os.cpu_count() or 1, most)}
    ray.init(address=settings.ray_address, include_dashboard=False,
             log_to_driver=settings.log_level in ("debug", "trace"), **local)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    try:
        serve.start(http_options={"host": settings.host, "port": settings.port})
        try:
            serve.run(build_app(settings), name=APP_NAME, route_prefix="/")
        except RuntimeError as exc:
            why = _replica_error(serve, APP_NAME) or exc
            raise ValueError(f"the replicas did not start: {why}") from None
        print(f"finrag: {settings.num_replicas} replicas ready on http://{settings.host}:"
              f"{settings.port} (Ray Serve; X-Finrag-Replica names the one that answered)",
              file=sys.stderr, flush=True)
        stop.wait()
    finally:
        serve.shutdown()
        ray.shutdown()
    return 0


def _replica_error(serve: Any, app_name: str) -> str | None:
    """The last line of why a replica's constructor failed (Serve keeps its traceback)."""
    try:
        app = serve.status().applications[app_name]
    except Exception:  # noqa: BLE001 - only a better message is lost
        return None
    messages = [d.message for d in app.deployments.values() if d.message]
    lines = [line for m in messages for line in m.strip().splitlines() if line.strip()]
    return lines[-1].strip() if lines else None

