"""What one document may cost to read, checked before a loader reads it: pages, the bytes
its compressed streams inflate to (one stream, and all of them together), the chunks it
makes, and, for an upload read in its own process (`retriever_trt/live/read_job.py`), the wall
time and memory. A file a few kB long can otherwise ask for hours of work or gigabytes
(a PDF page tree that lists each child twice, a zip or Flate bomb).

Each limit is a server setting (`document_max_*`, docs/documents_api.md) and a refused
document's error names it.
"""

from __future__ import annotations

from dataclasses import dataclass

MIB = 1 << 20
GIB = 1 << 30
# A real 10-K is at most ~400 pages; 2,000 leaves room for long exhibits and proxies.
DEFAULT_MAX_PAGES = 2000
# A 10-K PDF's largest content stream inflates to a few MB, a Word file's document.xml to
# ~10 MB; a 10-K as a whole to tens of MB.
DEFAULT_MAX_STREAM_BYTES = 64 * MIB
DEFAULT_MAX_INFLATED_BYTES = 256 * MIB
# Apple's 10-K as a PDF is 586 chunks of 120 tokens, Netflix's 10-Q 541; 8,000 is over
# ten times that, and about what a loaded 2-core machine encodes in the time limit below
# (~2.3 chunks/s, benchmarks/RESULTS.md "Documents while serving").
DEFAULT_MAX_CHUNKS = 8000
# A backstop for what the structural checks do not foresee: a 10-Q took 234 s to become
# ready on a loaded 2-core machine.
DEFAULT_MAX_SECONDS = 3600.0
# The reading process's address space: reading Apple's 10-K PDF fits in 1 GiB.
DEFAULT_MAX_MEMORY_BYTES = 4 * GIB


@dataclass(frozen=True)
class DocumentLimits:
    max_pages: int = DEFAULT_MAX_PAGES
    max_stream_bytes: int = DEFAULT_MAX_STREAM_BYTES
    max_inflated_bytes: int = DEFAULT_MAX_INFLATED_BYTES
    max_chunks: int = DEFAULT_MAX_CHUNKS
    max_seconds: float = DEFAULT_MAX_SECONDS
    max_memory_bytes: int = DEFAULT_MAX_MEMORY_BYTES

    def __post_init__(self) -> None:
        for name in ("max_pages", "max_stream_bytes", "max_inflated_bytes", "max_chunks",
                     "max_seconds", "max_memory_bytes"):
            if getattr(self, name) <= 0:
                raise ValueError(f"document limit {name} must be positive, "
                                 f"got {getattr(self, name)}")


DEFAULT_LIMITS = DocumentLimits()
