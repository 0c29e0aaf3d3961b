"""Reading one upload (its loader, then chunking) in a process of its own, so that it can
be stopped: on a delete, past its time limit, or when it runs out of its memory.

A thread cannot be stopped inside PDFium or an XML parser, nor can the memory it took be
given back; a process is killed, and the kernel frees all of it at once. The parent
writes the request (a pickle) into a private folder, starts `python -m
retriever_trt.live.read_job REQUEST RESULT`, and polls it; the child caps its address space
(`max_memory_bytes`), reads, and writes its result (chunks, document info, pages, or the
problem) to a temporary file it renames, so a killed child leaves no half result. Starting
the child costs ~1 s of imports, small beside indexing a filing.
"""

from __future__ import annotations

import ctypes
import os
import pickle
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from retriever_trt.documents.limits import MIB, DocumentLimits
from retriever_trt.documents.model import DocumentError

POLL_S = 0.1
# prctl(2): PR_SET_PDEATHSIG, so a child whose server is killed (SIGKILL) dies with it.
PR_SET_PDEATHSIG = 1
REQUEST, RESULT = "request.pkl", "result.pkl"


class JobCancelled(Exception):
    """The document was deleted while it was indexed."""


@dataclass(frozen=True)
class ReadRequest:
    path: Path
    doc_id: str
    chunk_tokens: int
    overlap: int
    collection: str
    limits: DocumentLimits
    tokenizer: str | None  # a `tokenizers.Tokenizer` as JSON, to count chunk tokens


def read_in_child(request: ReadRequest, deadline: float,
                  cancelled: threading.Event) -> tuple[list[Any], Any, int]:
    """`ingest.read_document`'s (chunks, info, pages), read by a child process that is
    killed when `cancelled` is set (JobCancelled) or at `deadline` (monotonic time; a
    DocumentError naming document_max_seconds)."""
    with tempfile.TemporaryDirectory(prefix="finrag-read-") as tmp:
        folder = Path(tmp)
        (folder / REQUEST).write_bytes(pickle.dumps(request))
        child = subprocess.Popen([sys.executable, "-m", "retriever_trt.live.read_job",
                                  str(folder / REQUEST), str(folder / RESULT), str(os.getpid())],
                                 stdin=subprocess.DEVNULL)
        try:
            while child.poll() is None:
                if cancelled.wait(POLL_S):
                    raise JobCancelled(request.doc_id)
                if time.monotonic() > deadline:
                    raise DocumentError(request.path, "reading it took over "
                                        f"{request.limits.max_seconds:g} s, the limit of one "
                                        "document (document_max_seconds)")
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
        return _result(folder / RESULT, child.returncode, request)


def _result(path: Path, code: int, request: ReadRequest) -> tuple[list[Any], Any, int]:
    if not path.is_file():
        raise DocumentError(request.path, f"its reading process ended without a result "
                                          f"(exit {code}); past its memory limit of "
                                          f"{request.limits.max_memory_bytes / MIB:,.0f} MiB "
                                          "(document_max_memory_bytes)?")
    ok, value = pickle.loads(path.read_bytes())
    if not ok:
        raise DocumentError(request.path, value)
    return value


def _read(request: ReadRequest) -> tuple[bool, Any]:
    from retriever_trt.indexing.chunking import approx_token_counts, tokenizer_counter
    from retriever_trt.indexing.ingest import read_document

    count = approx_token_counts
    if request.tokenizer is not None:
        from tokenizers import Tokenizer

        count = tokenizer_counter(Tokenizer.from_str(request.tokenizer))
    try:
        return True, read_document(request.path, request.doc_id, request.chunk_tokens,
                                   request.overlap, count, request.collection, request.limits)
    except DocumentError as exc:
        return False, exc.problem
    except MemoryError:
        return False, (f"reading it needs more than its memory limit of "
                       f"{request.limits.max_memory_bytes / MIB:,.0f} MiB "
                       "(document_max_memory_bytes)")


def main(request_path: str, result_path: str, parent: str) -> None:
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != int(parent):
        return  # the server died before we could ask to die with it
    request: ReadRequest = pickle.loads(Path(request_path).read_bytes())
    cap = request.limits.max_memory_bytes
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    result = pickle.dumps(_read(request))
    tmp = Path(result_path + ".tmp")
    tmp.write_bytes(result)
    tmp.rename(result_path)


if __name__ == "__main__":
    main(*sys.argv[1:4])
