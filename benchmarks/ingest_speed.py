"""PDF loading speed: pages a second of `documents.pdf_loader` (text with positions, table
detection, metadata), loading only (no chunking or embedding).

1. Each PDF of ../shared/data/filings/pdf (four Chromium-printed 10-K/10-Q filings), one
   load each: pages, seconds, pages/s, tables and paragraphs found.
2. A shelf: those PDFs loaded in turn until --shelf-pages pages are read (6,400 is the
   issue's ~40 PDF 10-Ks), in --workers processes; the target is the shelf in 10 minutes
   on this 2-core machine, i.e. >= 10.7 pages/s end to end.

    python benchmarks/ingest_speed.py [--shelf-pages 6400] [--workers 1]
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from retriever_trt.documents.pdf_loader import load  # noqa: E402

PDFS = REPO.parent / "shared" / "data" / "filings" / "pdf"
SHELF_TARGET_S = 600.0


def load_one(path: Path) -> tuple[int, int, int, float]:
    """(pages, tables, paragraphs, seconds) of one load."""
    start = time.perf_counter()
    doc = load(path, path.name)
    return doc.metadata.pages or 0, len(doc.tables()), len(doc.paragraphs()), \
        time.perf_counter() - start


def per_file(pdfs: list[Path]) -> None:
    print(f"{'file':32} {'pages':>6} {'seconds':>8} {'pages/s':>8} {'tables':>7} {'paragraphs':>10}")
    total_pages, total_s = 0, 0.0
    for path in pdfs:
        pages, tables, paragraphs, seconds = load_one(path)
        total_pages, total_s = total_pages + pages, total_s + seconds
        print(f"{path.name:32} {pages:6d} {seconds:8.2f} {pages / seconds:8.1f} {tables:7d} "
              f"{paragraphs:10d}")
    print(f"{'all':32} {total_pages:6d} {total_s:8.2f} {total_pages / total_s:8.1f}")


def shelf(pdfs: list[Path], pages_wanted: int, workers: int) -> None:
    queue: list[Path] = []
    pages = 0
    page_counts = {p: _pages(p) for p in pdfs}
    while pages < pages_wanted:
        for p in pdfs:
            queue.append(p)
            pages += page_counts[p]
            if pages >= pages_wanted:
                break
    start = time.perf_counter()
    with ProcessPoolExecutor(workers) as pool:
        read = sum(r[0] for r in pool.map(load_one, queue))
    seconds = time.perf_counter() - start
    rate = read / seconds
    print(f"shelf: {len(queue)} PDFs, {read} pages in {seconds:.1f} s with {workers} worker(s): "
          f"{rate:.1f} pages/s; {pages_wanted} pages would take {pages_wanted / rate:.0f} s "
          f"(target {SHELF_TARGET_S:.0f} s: {'PASS' if pages_wanted / rate <= SHELF_TARGET_S else 'FAIL'})")


def _pages(path: Path) -> int:
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(str(path))
    try:
        return len(pdf)
    finally:
        pdf.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pdfs", type=Path, default=PDFS, help="folder of PDFs")
    ap.add_argument("--shelf-pages", type=int, default=6400, help="pages of the shelf (0: skip)")
    ap.add_argument("--workers", type=int, default=1, help="processes loading the shelf")
    args = ap.parse_args()
    pdfs = sorted(args.pdfs.glob("*.pdf"))
    if not pdfs:
        sys.exit(f"error: no PDFs in {args.pdfs}")
    print("$ python " + " ".join(shlex.quote(a) for a in sys.argv))
    per_file(pdfs)
    if args.shelf_pages:
        shelf(pdfs, args.shelf_pages, args.workers)


if __name__ == "__main__":
    main()
