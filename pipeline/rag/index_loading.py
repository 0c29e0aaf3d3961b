"""Opening what the pipeline searches, from the settings: the saved index (built from the
corpus on the first run, or an empty store), and the uploaded documents kept in step with it."""

from __future__ import annotations

import sys
from typing import Any

from llm_engine import AsyncLLMEngine
from pipeline.settings import DOCUMENTS_DIR, Settings
from retriever_trt.store.vector_store import DEFAULT_MILVUS_FILE


def load_retriever(settings: Settings, embedder: Any, progress: bool = True) -> Any:
    """Load the saved index, or build it from the corpus (first run) and save it; an
    `--index` folder that is missing or holds only uploaded documents starts empty.

    A folder that is there but does not load (corrupt, truncated, half a folder) is an
    error naming the command that rebuilds it, never silently rebuilt over: it may be a
    folder the user keeps something else in.
    """
    from retriever_trt.search.retriever import Retriever
    from retriever_trt.store.storage import has_saved_dir

    path = settings.index_path
    kwargs = {"mode": settings.retrieval_mode, "rrf_k": settings.rrf_k,
              "bm25_weight": settings.bm25_weight,
              "row_match_weight": settings.row_match_weight}
    milvus = settings.milvus_config()
    # What a server keeps in an index folder besides a saved index: the uploads, and the
    # milvus-lite file of vector_store: milvus.
    held = {p.name for p in path.iterdir()} if path.is_dir() else set()
    uploads_only = bool(held) and held <= {DOCUMENTS_DIR, DEFAULT_MILVUS_FILE}
    if has_saved_dir(path) and not uploads_only:
        if progress:
            print(f"finrag: loading the index from {path}", file=sys.stderr)
        return Retriever.load(path, embedder, milvus=milvus, **kwargs)
    if uploads_only or (settings.index and not settings.corpus):
        if settings.corpus:
            raise FileNotFoundError(f"index {path}: holds uploaded documents but no index of "
                                    f"{settings.corpus}; serve it without --corpus, or move "
                                    f"{path / DOCUMENTS_DIR} away to build one there")
        if progress:
            print(f"finrag: no index in {path}: starting with an empty document store there "
                  "(add documents with POST /v1/documents)", file=sys.stderr)
        return Retriever.empty(embedder, milvus=milvus, **kwargs)
    if progress:
        print(f"finrag: building the index of {settings.corpus_path} into {path} "
              "(first run)", file=sys.stderr)
    built = Retriever.build(embedder, settings.corpus_path, path, progress=progress,
                            chunk_tokens=settings.chunk_tokens, **kwargs)
    # The folder keeps the FAISS index `finrag index` writes; Milvus takes its vectors.
    return built if milvus is None else Retriever.load(path, embedder, milvus=milvus, **kwargs)


def open_documents(settings: Settings, retriever: Any, embedder: Any,
                   engine: AsyncLLMEngine) -> Any:
    """The uploaded documents (`documents_dir`, else `DIR/documents` in the index folder),
    loaded and kept in step with the catalog every replica shares; they encode on fewer
    cores while `engine` answers questions."""
    from retriever_trt.documents.limits import DocumentLimits
    from retriever_trt.indexing.chunking import DEFAULT_OVERLAP
    from retriever_trt.indexing.parallel_encoder import EncodeThreads, QuestionActivity, all_cores
    from retriever_trt.live.live_documents import LiveConfig, LiveDocuments

    limits = DocumentLimits(settings.document_max_pages, settings.document_max_stream_bytes,
                            settings.document_max_inflated_bytes, settings.document_max_chunks,
                            settings.document_max_seconds, settings.document_max_memory_bytes)
    config = LiveConfig(settings.chunk_tokens, DEFAULT_OVERLAP, settings.ingest_workers,
                        settings.max_pending_documents, settings.max_upload_bytes,
                        settings.documents_poll_interval, limits,
                        EncodeThreads(settings.ingest_threads or all_cores(),
                                      settings.ingest_threads_busy, settings.ingest_nice))
    documents = LiveDocuments(retriever, embedder, settings.documents_path, config,
                              QuestionActivity(engine.has_unfinished_requests))
    documents.start()
    return documents
