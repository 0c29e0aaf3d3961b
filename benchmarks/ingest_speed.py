"""Indexing speed, the whole path (read, chunk, encode, FAISS, BM25, save), before and after
issue 49, side by side in one process on the same corpora:

- before: every file read first, then every chunk encoded in one token-sorted pass by the
  FP32 MiniLM graph (`model.onnx`), as `finrag index` did before;
- after: `Retriever.build` as `finrag index` runs it now: the dynamic INT8 graph
  (`model.int8-dynamic.onnx`, the default encoder on CPU), each distinct chunk text encoded
  once, in a thread while the next files are read.

Corpora: the 25 inline-XBRL filings of ../shared/data/filings (*.html), then the four PDFs
of its pdf/ folder. Prints, per corpus and path, wall and CPU seconds, pages/s, chunks/s,
seconds per filing and the distinct texts encoded, and the load average around each run.

`--load-only` measures PDF loading alone (`documents.pdf_loader`: pages a second of each
PDF, then a shelf of --shelf-pages pages in --workers processes).

    python benchmarks/ingest_speed.py [--filings ../shared/data/filings] [--engines-dir engines]
        [--paths before after] [--rounds 1]
    python benchmarks/ingest_speed.py --load-only [--shelf-pages 6400] [--workers 1]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))
from index_speed import cpu_name, cpu_seconds, load_line  # noqa: E402
from reproduce import print_command  # noqa: E402

from retriever_trt.documents.pdf.pdf_loader import load  # noqa: E402
from retriever_trt.indexing.chunking import DEFAULT_OVERLAP  # noqa: E402

FILINGS = REPO.parent / "shared" / "data" / "filings"
SHELF_TARGET_S = 600.0
# The server's chunk size (pipeline.settings.Settings.chunk_tokens), which `finrag index` uses.
CHUNK_TOKENS = 120
BATCH = 64


def build_before(fp32: Any, corpus: Path, out: Path) -> tuple[Any, int]:
    """The index as `finrag index` built it before: read all, then encode all in FP32."""
    from retriever_trt.indexing.encoding import encode_sorted
    from retriever_trt.indexing.ingest import ingest
    from retriever_trt.search.retriever import Retriever, chunk_counter
    from retriever_trt.store.faiss_index import VectorIndex

    store, report = ingest(corpus, CHUNK_TOKENS, DEFAULT_OVERLAP, chunk_counter(fp32))
    store.build_bm25()
    vectors = encode_sorted(fp32, [store.index_text(i) for i in range(len(store))], BATCH)
    index = VectorIndex.for_embedder(fp32, "Flat", corpus_hash=store.corpus_hash)
    index.build(vectors)
    Retriever(fp32, index, store).save(out)
    return report, len(store)


def build_after(int8: Any, corpus: Path, out: Path) -> tuple[Any, int]:
    from retriever_trt.search.retriever import Retriever

    built = Retriever.build(int8, corpus, out, chunk_tokens=CHUNK_TOKENS, progress=False)
    return built.ingest_report, len(built.store)


def html_shelf(filings: Path, folder: Path) -> Path:
    """A folder of links to the filings' HTML files (the folder also holds pdf/ and a README)."""
    shelf = folder / "html"
    shelf.mkdir()
    for path in sorted(filings.glob("*.html")):
        (shelf / path.name).symlink_to(path.resolve())
    return shelf


def whole_path(args: argparse.Namespace) -> None:
    from retriever_trt.embedders.loader import default_embedder, load_embedder

    int8 = default_embedder(args.engines_dir, progress=False)
    encoders = {"before": load_embedder(int8.path.parent / "model.onnx"), "after": int8}
    builders = {"before": build_before, "after": build_after}
    print(f"{'corpus':6} {'path':6} {'files':>5} {'pages':>6} {'chunks':>7} {'encoded':>7} "
          f"{'wall s':>7} {'CPU s':>7} {'pages/s':>7} {'chunks/s':>8} {'s/file':>6}  load")
    with tempfile.TemporaryDirectory(prefix="finrag-ingest-") as tmp:
        corpora = {"html": html_shelf(args.filings, Path(tmp)), "pdf": args.filings / "pdf"}
        for r in range(args.rounds):
            for name, corpus in corpora.items():
                for path in args.paths:
                    out = Path(tmp) / f"idx-{name}-{path}-{r}"
                    before_load = os.getloadavg()[0]
                    wall, cpu = time.perf_counter(), cpu_seconds()
                    report, chunks = builders[path](encoders[path], corpus, out)
                    wall, cpu = time.perf_counter() - wall, cpu_seconds() - cpu
                    encoded = report.encoded or chunks
                    print(f"{name:6} {path:6} {report.files:5d} {report.pages:6d} {chunks:7d} "
                          f"{encoded:7d} {wall:7.1f} {cpu:7.1f} {report.pages / wall:7.1f} "
                          f"{chunks / wall:8.1f} {wall / report.files:6.2f}  "
                          f"{before_load:.1f}-{os.getloadavg()[0]:.1f}", flush=True)


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
    ap.add_argument("--filings", type=Path, default=FILINGS,
                    help="folder of the filings (*.html, and pdf/ of PDFs)")
    ap.add_argument("--engines-dir", type=Path, default=REPO / "engines",
                    help="where the encoder's ONNX files are (exported there when missing)")
    ap.add_argument("--paths", nargs="+", choices=["before", "after"],
                    default=["before", "after"], help="the indexing paths to time, in order")
    ap.add_argument("--rounds", type=int, default=1, help="alternations of the paths")
    ap.add_argument("--load-only", action="store_true", help="time PDF loading alone")
    ap.add_argument("--shelf-pages", type=int, default=6400,
                    help="--load-only: pages of the shelf (0: skip)")
    ap.add_argument("--workers", type=int, default=1,
                    help="--load-only: processes loading the shelf")
    args = ap.parse_args()
    pdfs = sorted((args.filings / "pdf").glob("*.pdf"))
    if not pdfs or not any(args.filings.glob("*.html")):
        sys.exit(f"error: expected *.html and pdf/*.pdf in {args.filings}")
    print_command(__file__)
    print(f"{cpu_name()}, {os.cpu_count()} CPUs; {load_line()}")
    if not args.load_only:
        whole_path(args)
        return
    per_file(pdfs)
    if args.shelf_pages:
        shelf(pdfs, args.shelf_pages, args.workers)


if __name__ == "__main__":
    main()
