"""Refuse a PDF whose structure asks for more than its limits, before PDFium reads a page:
streams that inflate past `max_stream_bytes` (one) or `max_inflated_bytes` (all), and a
page count over `max_pages`.

Streams: every `stream` keyword of the file is tried as the start of a zlib (FlateDecode)
stream and inflated a block at a time, counting and dropping the output, so a 1 MB stream
of 1 GiB costs a second and no memory. A stream under another filter (or encrypted) does
not inflate and is not counted; the reading process's memory limit bounds those.

Pages: PDFium's count is what reading would cost, one page object per reference, so that
is the number checked. A page tree whose nodes list a child twice (each level doubles the
count: 2 kB for 524,288 pages) is refused by it as soon as the count passes the limit;
under the limit such a file costs what a real document of that many pages costs. (Counting
unique page objects would need a parser of our own: PDFium shows no page's object number.)
"""

from __future__ import annotations

import mmap
import re
import zlib
from pathlib import Path

import pypdfium2 as pdfium

from retriever_trt.documents.limits import MIB, DocumentLimits
from retriever_trt.documents.model import DocumentError

# After `stream`, the data starts past CRLF or LF (PDF 32000 7.3.8.1); "endstream" is not one.
_STREAM = re.compile(rb"(?<!end)stream\r?\n")
INFLATE_BLOCK = 1 << 20
# Compressed bytes fed to the inflater at a time.
FEED_BLOCK = 1 << 16


def check_pdf(path: Path, limits: DocumentLimits) -> None:
    try:
        with open(path, "rb") as fh:
            data = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError) as exc:  # ValueError: mmap of an empty file
        raise DocumentError(path, f"cannot read ({exc})") from None
    with data:
        _check_streams(path, data, limits)
    _check_pages(path, limits)


def _check_streams(path: Path, data: mmap.mmap, limits: DocumentLimits) -> None:
    total = 0
    for match in _STREAM.finditer(data):
        size = inflated_size(data, match.end(), limits.max_stream_bytes)
        if size > limits.max_stream_bytes:
            raise DocumentError(path, f"a stream at byte {match.end():,} inflates to over "
                                      f"{limits.max_stream_bytes / MIB:,.0f} MiB, the limit "
                                      "of one stream (document_max_stream_bytes)")
        total += size
        if total > limits.max_inflated_bytes:
            raise DocumentError(path, f"its streams inflate to over "
                                      f"{limits.max_inflated_bytes / MIB:,.0f} MiB, the limit "
                                      "of one document (document_max_inflated_bytes)")


def inflated_size(data: mmap.mmap, start: int, limit: int) -> int:
    """The bytes the zlib stream at `start` inflates to, counted up to just past `limit`;
    0 where no zlib stream starts there."""
    inflater, size, pos = zlib.decompressobj(), 0, start
    try:
        while not inflater.eof and size <= limit:
            pending = inflater.unconsumed_tail
            if not pending:
                if pos >= len(data):
                    break
                pending, pos = data[pos:pos + FEED_BLOCK], pos + FEED_BLOCK
            size += len(inflater.decompress(pending, INFLATE_BLOCK))
    except zlib.error:
        pass  # not a zlib stream (another filter, encrypted), or its end is damaged
    return size


def _check_pages(path: Path, limits: DocumentLimits) -> None:
    try:
        pdf = pdfium.PdfDocument(str(path))
    except pdfium.PdfiumError:
        return  # the loader says why it does not open
    try:
        pages = len(pdf)
    finally:
        pdf.close()
    if pages > limits.max_pages:
        raise DocumentError(path, f"{pages:,} pages, over the limit of {limits.max_pages:,} "
                                  "(document_max_pages)")
