"""pdfplumber's tables against finrag's PDF reader, on the pages of a sample of filings that
hold their primary statements: the share of the HTML twin's tagged statement facts each
shows in a cell with the same row label, period and value (`pdf_statements_eval.py`'s
measure), and pages read a second.

Both are measured on equal footing past the table extraction: pdfplumber's tables
(`extract_tables` with the text strategies, statements having no ruling lines) of each page
where finrag's reader located a statement become `TableBlock`s with the caption finrag read
there, and go through the same chunking, statement grouping, column periods, row records and
self-checks. So the difference is the table extraction alone: cells, rows, wrapped labels,
header rows. Speed: finrag reads the whole filing (every page, tables found where amounts
line up); pdfplumber's figure is for the statement pages only (its table extraction on every
page would take far longer).

pdfplumber is not a finrag dependency: `pip install pdfplumber` for this comparison only.

    python3 benchmarks/pdfplumber_compare.py [--pdfs FILE_OR_DIR ...] [--html DIR]
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))
from pdf_statements_eval import CHUNK_TOKENS, FILINGS, GOLD_KINDS, gold, read_now, read_twins  # noqa: E402

from pipeline.rag.answers.filings.printed.statement_rows import statement_tables  # noqa: E402
from retriever_trt.documents.model import Document, TableBlock  # noqa: E402
from retriever_trt.indexing.chunking import chunk_document  # noqa: E402

# Text positions decide cells and rows: a statement printed from HTML has no ruling lines.
# "text": pdfplumber's text strategies as documented; "tuned": a column needs 6 words
# aligned, not 3 (fewer false columns cutting labels: "Gro" | "ss margin").
SETTINGS = {"text": {"vertical_strategy": "text", "horizontal_strategy": "text"},
            "tuned": {"vertical_strategy": "text", "horizontal_strategy": "text",
                      "min_words_vertical": 6}}
_TRAILING_SIGN = re.compile(r"\s*\$$")
SAMPLE = ("aapl-10-k-2024-11-01", "jnj-10-q-2025-07-24", "tsla-10-q-2025-07-24",
          "v-10-k-2024-11-13", "ibm-10-q-2025-07-24", "ko-10-k-2025-02-20",
          "meta-10-k-2025-01-30", "nvda-10-k-2025-02-26")


def _signs_moved(row: list[str]) -> list[str]:
    """A "$" that ends a cell moved to the amount in the next ("Products $" | "294,866"),
    as a reader of pdfplumber's cells would."""
    out = list(row)
    for j in range(len(out) - 1):
        if _TRAILING_SIGN.search(out[j]) and out[j + 1]:
            out[j], out[j + 1] = _TRAILING_SIGN.sub("", out[j]), f"$ {out[j + 1]}"
    return out


def plumber_document(pdf: Path, doc: Document, captions: dict[int, str], settings: dict
                     ) -> tuple[Document, float]:
    """`doc` with its blocks replaced by pdfplumber's tables of the pages in `captions`
    (each captioned as finrag read that page's statement), and the seconds it took."""
    import pdfplumber  # noqa: PLC0415 (optional: benchmark only)

    blocks = []
    start = time.perf_counter()
    with pdfplumber.open(pdf) as plumbed:
        for page, caption in sorted(captions.items()):
            for rows in plumbed.pages[page - 1].extract_tables(settings):
                rows = [_signs_moved([cell or "" for cell in row]) for row in rows if any(row)]
                if rows:
                    blocks.append(TableBlock(rows, caption, page))
    return Document(doc.doc_id, doc.title, doc.metadata, blocks), time.perf_counter() - start


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pdfs", type=Path, nargs="+", default=[FILINGS / "pdf"],
                    help="PDF files or folders; of a folder's, those of SAMPLE if any")
    ap.add_argument("--html", type=Path, default=FILINGS)
    args = ap.parse_args()
    found = [p for d in args.pdfs for p in (sorted(d.glob("*.pdf")) if d.is_dir() else [d])]
    pdfs = [p for p in found if p.is_file() and p.stem in SAMPLE] or \
        [p for p in found if p.is_file()]
    if not pdfs:
        print("pdfplumber_compare: no PDFs; give --pdfs and --html", file=sys.stderr)
        return 2
    n = ours_found = pages = plumber_pages = 0
    ours_s = 0.0
    plumber_found = dict.fromkeys(SETTINGS, 0)
    plumber_s = dict.fromkeys(SETTINGS, 0.0)
    print(f"{'filing':24} {'facts':>5} {'finrag':>7} " +
          " ".join(f"{'plumber ' + name:>14}" for name in SETTINGS) + f" {'pages':>5}")
    for twin in read_twins(pdfs, args.html):
        pdf, doc, chunks = twin.pdf, twin.doc, twin.chunks
        ours_s += twin.seconds
        pages += doc.metadata.pages or 0
        captions: dict[int, str] = {}
        for st in statement_tables(chunks, doc.metadata):
            if st.kind in GOLD_KINDS and st.page is not None:
                captions.setdefault(st.page, st.caption)
        facts = [f for kind_facts in gold(twin.html).values() for f in kind_facts]
        members = {k.member for k, _ in facts}
        found = sum(f in read_now(doc, chunks, members)[0] for f in facts)
        shares = []
        for name, settings in SETTINGS.items():
            plumbed, seconds = plumber_document(pdf, doc, captions, settings)
            plumber_s[name] += seconds
            theirs = read_now(plumbed, chunk_document(plumbed, CHUNK_TOKENS, 0)[0], members)[0]
            plumber_found[name] += (b := sum(f in theirs for f in facts))
            shares.append(b / len(facts))
        n, ours_found, plumber_pages = n + len(facts), ours_found + found, plumber_pages + len(captions)
        print(f"{pdf.stem:24} {len(facts):5d} {found / len(facts):7.1%} " +
              " ".join(f"{x:14.1%}" for x in shares) + f" {len(captions):5d}")
    print(f"{'all':24} {n:5d} {ours_found / max(n, 1):7.1%} " +
          " ".join(f"{plumber_found[k] / max(n, 1):14.1%}" for k in SETTINGS) +
          f" {plumber_pages:5d}")
    print(f"finrag: {pages} pages (whole filings) in {ours_s:.1f} s, "
          f"{pages / max(ours_s, 1e-9):.1f} pages/s; pdfplumber on the {plumber_pages} statement "
          "pages: " + ", ".join(f"{k} {plumber_s[k]:.1f} s, "
                                f"{plumber_pages / max(plumber_s[k], 1e-9):.2f} pages/s"
                                for k in SETTINGS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
