"""The artifacts every replica loads (model, ONNX encoder, index), built once before any starts.

Both ways into replicas build them first: `finrag serve --num-replicas N` (launch.py) and a
Serve config's import_path (deployment.py's app_builder, a KubeRay RayService).
"""

from __future__ import annotations

import dataclasses
import os

from pipeline.settings import Settings


def build_artifacts(settings: Settings) -> Settings:
    """Build what is missing in engines/; the settings with absolute artifact paths."""
    from llm_engine.utils.model_path import resolve_model
    from pipeline.rag.index_loading import load_retriever
    from retriever_trt.embedders.loader import load_embedder

    engines = settings.engines_path.resolve()
    resolve_model(settings.model, engines)
    load_retriever(settings, load_embedder(settings.embedder, engines))
    model = settings.model if settings.model == "default" else os.path.abspath(settings.model)
    update = {"index": str(settings.index_path.resolve()),
              # the API keeps answering with the model's name as given
              "served_model_name": settings.served_model_name or settings.model,
              "engine": dataclasses.replace(settings.engine, engines_dir=str(engines), model=model)}
    for name in ("embedder", "audit_log", "documents_dir"):  # files named relative to where finrag started
        if getattr(settings, name):
            update[name] = os.path.abspath(getattr(settings, name))
    return settings.model_copy(update=update)
