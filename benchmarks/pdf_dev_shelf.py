"""The development shelf of real 10-K PDFs: copies them from the FinanceBench git mirror.

    python benchmarks/pdf_dev_shelf.py [--set {1,2}] [--mirror GIT_DIR] [--out DIR]

The shelf is the 10-Ks of companies our FinanceBench measurement does NOT ask about
(benchmarks/financebench_eval.py is the held-out measurement; its companies' 10-Ks are never
used here): one 10-K per development company, years spread over FY2015-FY2023, and two 10-Ks
two years apart for eBay, Verizon and PG&E, so that "the filing of the year asked" is
tested. benchmarks/data/pdf_dev_questions.jsonl asks about them and
benchmarks/pdf_dev_check.py re-verifies every gold against these PDFs.

The mirror (`--mirror`, default /work/.mirror/patronus-ai+financebench/repo) holds some
PDFs only as Git LFS pointers or not at all (JPMorgan's, PayPal's and Ulta Beauty's 10-Ks in
the snapshot of 2026-12): such a PDF is skipped with a line naming it, and no question asks
about it. Every PDF copied is opened (pypdfium2) and must say "Form 10-K" on one of its
first pages; a PDF that does not is a line too, and the exit status is 1. The copy is
written to a temporary name and renamed, so an interrupted run leaves no half PDF.

`--set 2` copies the second shelf (SHELF2, default folder engines/pdf-dev2-shelf/) instead:
twelve other 10-Ks of the same development companies, none of them a file of the first
shelf, which benchmarks/data/pdf_dev2_questions.jsonl asks about (a second held-out set).
Apple (FY2020, FY2022) and Oracle (FY2016, FY2023) have two 10-Ks each there.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import pypdfium2 as pdfium
from mirror_files import mirror_blob, write_whole
from reproduce import print_command

ROOT = Path(__file__).resolve().parents[1]
MIRROR = Path("/work/.mirror/patronus-ai+financebench/repo")
OUT = ROOT / "engines" / "pdf-dev-shelf"
# The dev shelf, by the mirror's file stem (COMPANY_FISCALYEAR_10K).
SHELF = (
    "AES_2016_10K", "AMCOR_2021_10K", "AMERICANEXPRESS_2022_10K", "APPLE_2018_10K",
    "BOSTONPROPERTIES_2015_10K", "EBAY_2017_10K", "EBAY_2019_10K", "FEDEX_2023_10K",
    "FOOTLOCKER_2023_10K", "INTEL_2020_10K", "JOHNSON_JOHNSON_2017_10K", "JPMORGAN_2022_10K",
    "MCDONALDS_2022_10K", "ORACLE_2021_10K", "PAYPAL_2022_10K", "PFIZER_2020_10K",
    "PG_E_2019_10K", "PG_E_2021_10K", "SALESFORCE_2023_10K", "ULTABEAUTY_2023_10K",
    "VERIZON_2019_10K", "VERIZON_2021_10K",
)
# The second dev shelf (`--set 2`): other 10-Ks of the development companies, no file of
# SHELF; JPMorgan's, PayPal's and Ulta Beauty's 10-Ks are absent from the mirror, so none.
SHELF2 = (
    "AES_2020_10K", "AMCOR_2023_10K", "APPLE_2020_10K", "APPLE_2022_10K", "EBAY_2015_10K",
    "FOOTLOCKER_2022_10K", "JOHNSON_JOHNSON_2021_10K", "ORACLE_2016_10K", "ORACLE_2023_10K",
    "PFIZER_2022_10K", "PG_E_2017_10K", "VERIZON_2016_10K",
)
OUT2 = ROOT / "engines" / "pdf-dev2-shelf"
SHELVES = {1: (SHELF, OUT), 2: (SHELF2, OUT2)}
# A 10-K says so on its cover; the first pages are enough (some open with a letter).
COVER_PAGES = 5
_FORM_10K = re.compile(r"form\s*10\s*-?\s*k", re.I)


def is_10k(path: Path) -> bool:
    """Whether the PDF opens and one of its first pages names Form 10-K."""
    try:
        pdf = pdfium.PdfDocument(path)
    except pdfium.PdfiumError:
        return False
    try:
        pages = range(min(COVER_PAGES, len(pdf)))
        return any(_FORM_10K.search(pdf[i].get_textpage().get_text_range()) for i in pages)
    finally:
        pdf.close()


def copy_shelf(mirror: Path, out: Path, shelf: tuple[str, ...] = SHELF
               ) -> tuple[list[str], list[str]]:
    """Copies every PDF of `shelf` the mirror holds into `out`; returns (absent, not a 10-K)."""
    out.mkdir(parents=True, exist_ok=True)
    absent, bad = [], []
    for stem in shelf:
        target = out / f"{stem}.pdf"
        if not target.exists():
            data = mirror_blob(mirror, f"pdfs/{stem}.pdf")
            if data is None:
                absent.append(stem)
                continue
            write_whole(target, data)
        if not is_10k(target):
            bad.append(stem)
    return absent, bad


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mirror", type=Path, default=MIRROR, help="bare git mirror of financebench")
    ap.add_argument("--set", type=int, choices=sorted(SHELVES), default=1, dest="shelf",
                    help="which dev shelf: 1 (SHELF, the default) or 2 (SHELF2)")
    ap.add_argument("--out", type=Path, default=None,
                    help="folder the PDFs are copied into (default: engines/pdf-dev-shelf, "
                         "or engines/pdf-dev2-shelf with --set 2)")
    args = ap.parse_args(argv)
    shelf, out = SHELVES[args.shelf]
    args.out = args.out or out
    if not (args.mirror / "HEAD").is_file():
        print(f"{args.mirror}: not a bare git repository (--mirror)", file=sys.stderr)
        return 2
    absent, bad = copy_shelf(args.mirror, args.out, shelf)
    for stem in absent:
        print(f"skipped {stem}.pdf: absent from the mirror (LFS pointer or no object)")
    for stem in bad:
        print(f"{args.out / stem}.pdf: does not open or names no Form 10-K on its first pages")
    print(f"{len(shelf) - len(absent) - len(bad)} of {len(shelf)} 10-K PDFs in {args.out}")
    print_command(__file__, argv)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
