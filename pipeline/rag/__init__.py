"""The RAG core: intent -> retrieve -> generate over one LLM engine and one retriever.

Nothing here knows about HTTP (no FastAPI or starlette imports); `pipeline.server` is the
edge that serves it.
"""

from pipeline.rag.batcher import MicroBatcher
from pipeline.rag.host_buffers import HostBufferPool, HostMemory, StagingEmbedder
from pipeline.rag.index_loading import load_retriever
from pipeline.rag.pipeline import (
    Answer,
    AskOptions,
    FinalEvent,
    RAGPipeline,
    StreamEvent,
    TokenEvent,
    source_dict,
)
from pipeline.rag.stages import GenerateStage, IntentStage

__all__ = ["Answer", "AskOptions", "FinalEvent", "GenerateStage", "HostBufferPool", "HostMemory",
           "IntentStage", "MicroBatcher", "RAGPipeline", "StagingEmbedder", "StreamEvent",
           "TokenEvent", "load_retriever", "source_dict"]
