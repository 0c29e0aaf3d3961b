"""Whose filing, of which year: the identity a real 10-K PDF's cover gives, and the filing a
question naming a company and a fiscal year is scoped to (issue 51 item 4, issue 47 item 8).

    python3 benchmarks/cover_identity.py [--mirror GIT_DIR] [--companies dev|heldout|all]
        [--failures]
    python3 benchmarks/cover_identity.py --shelf DIR [--failures]

Every 10-K PDF of the public FinanceBench snapshot (`--mirror`, a bare git mirror; default
/work/.mirror/patronus-ai+financebench/repo; nothing of it is in this repository) is read
as the PDF loader reads metadata (`cover_page.printed_metadata` over its first
`pdf_loader.METADATA_PAGES` pages). A PDF stored as an LFS pointer is skipped and counted.
The file name is the truth: pdfs/COMPANY_YEAR_10K.pdf, YEAR the fiscal year it reports.

1. Identity, the share of PDFs whose
   - company is read: the registrant's name, as `company_key` squashes it (no spaces, no
     "and"), begins with COMPANY's (REGISTRANTS names the few whose file name is no prefix
     of the registrant's: AMD is Advanced Micro Devices, BLOCK was Square);
   - ticker is read: `metadata.ticker` is the company's symbol (TICKERS), counted over the
     PDFs whose cover prints a "Trading Symbol(s)" table (covers from 2019 on);
   - fiscal year is read: `metadata.fiscal_year` is YEAR.
2. Scope: one shelf holding every PDF read (many companies, several years of most); for
   each company, each name people write (NAMES) in "What was NAME's total revenue in FY
   YEAR?" and "What was NAME's average revenue from FY(YEAR-2) to FY YEAR?" (QUESTIONS) for
   each YEAR the shelf has of it (and the former name a cover prints, if any), parsed with the shelf's aliases
   (`company_names.shelf_aliases`) and scoped (`scope.choose_filings`): the share whose first
   filing is COMPANY_YEAR.

The development companies (DEV) are the ones FinanceBench's questions do not use; failures
are listed (`--failures`) for them only: the others are the held-out measurement, counted in
the totals, never looked at.

`--shelf DIR` reads a folder of 10-K PDFs instead (named COMPANY_YEAR_10K.pdf after reading
each cover by eye; the route shelf, engines/route-shelf, and the third development shelf,
engines/route-shelf3: benchmarks/route_shelf.py [--set 3] copies them), all of them
development data: its failures are all listed.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pypdfium2 as pdfium

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mirror_files import git  # noqa: E402
from reproduce import print_command  # noqa: E402

from pipeline.rag.answers.company_names import shelf_aliases  # noqa: E402
from pipeline.rag.answers.filings.scope import choose_filings  # noqa: E402
from pipeline.rag.answers.query import parse_query  # noqa: E402
from retriever_trt.documents.filing.cover_page import printed_metadata  # noqa: E402
from retriever_trt.documents.model import CoverField, DocumentMetadata  # noqa: E402
from retriever_trt.documents.pdf.pdf_layout import page_lines  # noqa: E402
from retriever_trt.documents.pdf.pdf_loader import METADATA_PAGES  # noqa: E402
from retriever_trt.search.filters import company_key  # noqa: E402
from retriever_trt.store.document_store import DocumentInfo  # noqa: E402

MIRROR = Path("/work/.mirror/patronus-ai+financebench/repo")
_NAME = re.compile(r"^(?:pdfs/)?(?P<company>[A-Z0-9_]+?)_(?P<year>\d{4})_10K\.pdf$")
# A cover's securities table: "Trading Symbol(s)", or "Trading" over "Symbol(s)".
_SYMBOL_TABLE = re.compile(r"trading\s+symbol|\bsymbol\(s\)", re.I)
# A git LFS pointer (the PDF itself absent from the mirror) is a few hundred bytes.
MIN_PDF_BYTES = 10_000

DEV = frozenset("""AES AMCOR AMERICANEXPRESS APPLE BOSTONPROPERTIES EBAY FEDEX FOOTLOCKER INTEL
JOHNSON_JOHNSON JPMORGAN MCDONALDS ORACLE PAYPAL PFIZER PG_E SALESFORCE ULTABEAUTY
VERIZON""".split())
# The registrant's squashed key where the file's company is not its beginning.
REGISTRANTS = {"AMD": ("advancedmicrodevices",), "BLOCK": ("square", "block"),
               "META": ("metaplatforms", "facebook"), "IBM": ("internationalbusinessmachines",)}
TICKERS = {
    "3M": "MMM", "ACTIVISIONBLIZZARD": "ATVI", "ADOBE": "ADBE", "AES": "AES", "AMAZON": "AMZN",
    "AMCOR": "AMCR", "AMD": "AMD", "AMERICANEXPRESS": "AXP", "AMERICANWATERWORKS": "AWK",
    "APPLE": "AAPL", "BESTBUY": "BBY", "BLOCK": "SQ", "BOEING": "BA", "BOSTONPROPERTIES": "BXP",
    "COCACOLA": "KO", "CORNING": "GLW", "COSTCO": "COST", "CVSHEALTH": "CVS", "EBAY": "EBAY",
    "FEDEX": "FDX", "FOOTLOCKER": "FL", "GENERALMILLS": "GIS", "INTEL": "INTC",
    "JOHNSON_JOHNSON": "JNJ", "JPMORGAN": "JPM", "KRAFTHEINZ": "KHC", "LOCKHEEDMARTIN": "LMT",
    "MCDONALDS": "MCD", "MGMRESORTS": "MGM", "MICROSOFT": "MSFT", "NETFLIX": "NFLX",
    "NIKE": "NKE", "ORACLE": "ORCL", "PAYPAL": "PYPL", "PEPSICO": "PEP", "PFIZER": "PFE",
    "PG_E": "PCG", "SALESFORCE": "CRM", "ULTABEAUTY": "ULTA", "VERIZON": "VZ", "WALMART": "WMT",
    # the route shelf (--shelf); Meta traded as FB until 2022
    "ALPHABET": "GOOGL", "BROADCOM": "AVGO", "META": "FB META", "NVIDIA": "NVDA",
    "TESLA": "TSLA", "UBER": "UBER", "LYFT": "LYFT",
    # the third development shelf (benchmarks/route_shelf.py --set 3)
    "FORD": "F", "PATRIOT": "PATI", "GIGACLOUD": "GCT", "ABBVIE": "ABBV", "HOMEDEPOT": "HD",
    "IBM": "IBM", "UNITEDHEALTH": "UNH", "UNIONPACIFIC": "UNP", "VISA": "V", "WELLSFARGO": "WFC",
    "ABBOTT": "ABT", "AMGEN": "AMGN", "BOOKING": "BKNG", "BRISTOLMYERS": "BMY",
    "GENERALELECTRIC": "GE", "LINDE": "LIN", "LOWES": "LOW", "MARSHMCLENNAN": "MMC",
    "MEDTRONIC": "MDT", "PROCTERGAMBLE": "PG", "RTX": "RTX", "SPGLOBAL": "SPGI", "ATT": "T",
    "TJX": "TJX", "TMOBILE": "TMUS"}
# Names people write for each company (general knowledge, not read off the filings).
NAMES = {
    "AES": ("AES", "AES Corp"), "AMCOR": ("Amcor",),
    "AMERICANEXPRESS": ("Amex", "American Express", "AmEx"), "APPLE": ("Apple", "Apple Inc."),
    "BOSTONPROPERTIES": ("Boston Properties", "BXP"), "EBAY": ("eBay", "Ebay"),
    "FEDEX": ("FedEx", "Fedex", "FedEx Corp"), "FOOTLOCKER": ("Foot Locker", "Footlocker"),
    "INTEL": ("Intel", "Intel Corporation"),
    "JOHNSON_JOHNSON": ("J&J", "Johnson and Johnson", "Johnson & Johnson", "JNJ"),
    "JPMORGAN": ("JPMorgan", "JP Morgan Chase", "JPMorgan Chase", "J.P. Morgan"),
    "MCDONALDS": ("McDonald's", "McDonalds"), "ORACLE": ("Oracle",), "PAYPAL": ("PayPal",),
    "PFIZER": ("Pfizer",), "PG_E": ("PG&E", "PG and E"),
    "SALESFORCE": ("Salesforce", "salesforce.com"), "ULTABEAUTY": ("Ulta", "Ulta Beauty"),
    "VERIZON": ("Verizon", "Verizon Communications"),
    # held out: counted, never looked at
    "3M": ("3M",), "ACTIVISIONBLIZZARD": ("Activision Blizzard", "Activision"),
    "ADOBE": ("Adobe",), "AMAZON": ("Amazon",), "AMD": ("AMD",),
    "AMERICANWATERWORKS": ("American Water Works",), "BESTBUY": ("Best Buy",),
    "BLOCK": ("Block",), "BOEING": ("Boeing",), "COCACOLA": ("Coca Cola", "Coca-Cola"),
    "CORNING": ("Corning",), "COSTCO": ("Costco",), "CVSHEALTH": ("CVS Health", "CVS"),
    "GENERALMILLS": ("General Mills",), "KRAFTHEINZ": ("Kraft Heinz",),
    "LOCKHEEDMARTIN": ("Lockheed Martin",), "MGMRESORTS": ("MGM Resorts",),
    "MICROSOFT": ("Microsoft",), "NETFLIX": ("Netflix",), "NIKE": ("Nike",),
    "PEPSICO": ("PepsiCo",), "WALMART": ("Walmart",),
    # the route shelf (--shelf)
    "ALPHABET": ("Alphabet", "Alphabet Inc"), "BROADCOM": ("Broadcom", "AVGO"),
    "META": ("Meta", "Meta Platforms", "Facebook"), "NVIDIA": ("Nvidia", "NVIDIA Corp"),
    "TESLA": ("Tesla", "TSLA"), "UBER": ("Uber", "Uber Technologies"), "LYFT": ("Lyft",),
    # the third development shelf
    "FORD": ("Ford", "Ford Motor", "Ford Motor Co.", "F"),
    "PATRIOT": ("Patriot Transportation", "Patriot Transportation Holding", "PATI"),
    "GIGACLOUD": ("GigaCloud", "GigaCloud Technology", "Gigacloud", "GCT"),
    "ABBVIE": ("AbbVie", "Abbvie", "ABBV"), "HOMEDEPOT": ("Home Depot", "The Home Depot", "HD"),
    "IBM": ("IBM", "International Business Machines"),
    "UNITEDHEALTH": ("UnitedHealth", "UnitedHealth Group", "UNH"),
    "UNIONPACIFIC": ("Union Pacific", "UNP"), "VISA": ("Visa", "Visa Inc.", "V"),
    "WELLSFARGO": ("Wells Fargo", "Wells Fargo & Co", "WFC"),
    "ABBOTT": ("Abbott", "Abbott Labs", "Abbott Laboratories", "ABT"),
    "AMGEN": ("Amgen", "AMGN"), "BOOKING": ("Booking Holdings", "Booking", "BKNG"),
    "BRISTOLMYERS": ("Bristol-Myers Squibb", "Bristol Myers", "BMS", "BMY"),
    "GENERALELECTRIC": ("General Electric", "GE"), "LINDE": ("Linde", "Linde plc", "LIN"),
    "LOWES": ("Lowe's", "Lowes", "LOW"),
    "MARSHMCLENNAN": ("Marsh & McLennan", "Marsh McLennan", "MMC"),
    "MEDTRONIC": ("Medtronic", "Medtronic plc", "MDT"),
    "PROCTERGAMBLE": ("Procter & Gamble", "P&G", "Procter and Gamble", "PG"),
    "RTX": ("RTX", "RTX Corp"), "SPGLOBAL": ("S&P Global", "S&P Global Inc.", "SPGI"),
    "ATT": ("AT&T", "AT&T Inc.", "T"), "TJX": ("TJX", "TJX Companies", "The TJX Companies"),
    "TMOBILE": ("T-Mobile", "T-Mobile US", "T Mobile", "TMUS")}
QUESTIONS = ("What was {name}'s total revenue in FY {year}?",
             # three years: the 10-K of the last shows all three (not the latest 10-K)
             "What was {name}'s average revenue from FY{first} to FY{year}?")


@dataclass(frozen=True)
class Read:
    company: str           # the file name's COMPANY
    year: int              # the file name's YEAR
    doc_id: str            # COMPANY_YEAR
    meta: DocumentMetadata
    symbol_table: bool     # the cover prints a "Trading Symbol(s)" table

    @property
    def name_ok(self) -> bool:
        squashed = "".join(w for w in company_key(self.meta.company).split() if w != "and")
        wanted = REGISTRANTS.get(self.company, (self.company.lower().replace("_", ""),))
        return any(squashed.startswith(w) for w in wanted)

    @property
    def ticker_ok(self) -> bool:
        return self.meta.ticker.upper() in TICKERS.get(self.company, "").split()

    @property
    def year_ok(self) -> bool:
        return self.meta.fiscal_year == self.year


def read_shelf(mirror: Path) -> tuple[list[Read], list[str]]:
    """Every 10-K PDF of the mirror read; and the names of those absent (LFS pointers)."""
    reads, absent = [], []
    for row in git(mirror, "ls-tree", "-l", "HEAD", "pdfs/").decode().splitlines():
        info, path = row.split("\t", 1)
        named = _NAME.match(path)
        if not named:
            continue
        size = info.split()[3]
        if not size.isdigit() or int(size) < MIN_PDF_BYTES:
            absent.append(Path(path).name)
            continue
        try:
            data = git(mirror, "show", f"HEAD:{path}")
        except subprocess.CalledProcessError:  # listed, but its blob is not in the mirror
            absent.append(Path(path).name)
            continue
        reads.append(_read(named, data, Path(path).name))
    return reads, absent


def read_folder(folder: Path) -> list[Read]:
    """Every COMPANY_YEAR_10K.pdf of a folder read."""
    return [_read(named, path.read_bytes(), path.name) for path in sorted(folder.iterdir())
            if (named := _NAME.match(path.name))]


def _read(named: re.Match, data: bytes, file_name: str) -> Read:
    pages = list(_first_pages(data))
    text = " ".join(line.text for lines in pages[:2] for line in lines)
    return Read(named["company"], int(named["year"]), f"{named['company']}_{named['year']}",
                printed_metadata(pages, file_name), _SYMBOL_TABLE.search(text) is not None)


def _first_pages(data: bytes) -> Iterator[list]:
    pdf = pdfium.PdfDocument(data)
    try:
        for i in range(min(len(pdf), METADATA_PAGES)):
            page = pdf[i]
            try:
                yield page_lines(page)
            finally:
                page.close()
    finally:
        pdf.close()


def _share(ok: int, n: int) -> str:
    return f"{ok}/{n} ({100 * ok / n:.1f}%)" if n else "0/0"


def identity(reads: list[Read], show: frozenset[str]) -> None:
    """The identity shares; the misses of the companies in `show` listed."""
    symbols = [r for r in reads if r.symbol_table]
    print(f"company read:     {_share(sum(r.name_ok for r in reads), len(reads))}")
    print(f"ticker read:      {_share(sum(r.ticker_ok for r in symbols), len(symbols))} "
          "(covers with a Trading Symbol table)")
    print(f"fiscal year read: {_share(sum(r.year_ok for r in reads), len(reads))}")
    formers = [f"{r.doc_id}: {r.meta.cover[CoverField.FORMER_NAME].value}" for r in reads
               if CoverField.FORMER_NAME in r.meta.cover]
    print(f"former names read: {len(formers)}" + (f" ({'; '.join(formers)})"
                                                   if show and formers else ""))
    wrong = {r.doc_id: [w for w, ok in (("company", r.name_ok), ("year", r.year_ok),
                                        ("ticker", r.ticker_ok or not r.symbol_table)) if not ok]
             for r in reads}
    print(f"all three:        {_share(sum(not w for w in wrong.values()), len(reads))}")
    for r in reads:
        if wrong[r.doc_id] and r.company in show:
            print(f"  MISS {r.doc_id}: {', '.join(wrong[r.doc_id])}: company={r.meta.company!r} "
                  f"ticker={r.meta.ticker!r} fiscal_year={r.meta.fiscal_year} "
                  f"period_end={r.meta.period_end}")


def scope_check(shelf_reads: list[Read], asked_of: list[Read], question: str,
                show: frozenset[str]) -> tuple[int, int]:
    """(right, asked) of the template questions about the PDFs `asked_of`, over one shelf of
    `shelf_reads`; the misses of the companies in `show` listed."""
    shelf = {r.doc_id: DocumentInfo(r.doc_id, r.doc_id, r.meta) for r in shelf_reads}
    aliases = shelf_aliases(r.meta for r in shelf_reads)
    right = asked = 0
    for r in asked_of:
        former = r.meta.cover.get(CoverField.FORMER_NAME)
        for name in (*NAMES.get(r.company, ()), *((former.value,) if former else ())):
            asked += 1
            query = parse_query(question.format(name=name, year=r.year, first=r.year - 2),
                                aliases)
            chosen = choose_filings(query, shelf)
            right += bool(chosen) and chosen[0] == r.doc_id
            if r.company in show and (not chosen or chosen[0] != r.doc_id):
                print(f"  MISS {name!r} FY{r.year}: first {chosen[:1] or 'none'} "
                      f"(company key {query.company!r})")
    return right, asked


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mirror", type=Path, default=MIRROR)
    ap.add_argument("--shelf", type=Path, help="a folder of COMPANY_YEAR_10K.pdf instead")
    ap.add_argument("--companies", choices=("dev", "heldout", "all"), default="all")
    ap.add_argument("--failures", action="store_true", help="list the dev companies' misses")
    args = ap.parse_args(argv)
    if args.shelf:
        reads = read_folder(args.shelf)
        print(f"10-K PDFs read from {args.shelf}: {len(reads)}")
        groups = [("shelf", reads, True)]
    else:
        reads, absent = read_shelf(args.mirror)
        print(f"10-K PDFs read: {len(reads)} ({len(absent)} absent from the mirror, skipped)")
        groups = [("dev", [r for r in reads if r.company in DEV], True),
                  ("held-out", [r for r in reads if r.company not in DEV], False),
                  ("all", reads, False)]  # the dev misses, listed once
    keep = {"dev": lambda r: r.company in DEV, "heldout": lambda r: r.company not in DEV,
            "all": lambda r: True}[args.companies if not args.shelf else "all"]
    shelf = [r for r in reads if keep(r)]
    print(f"one shelf of {len(shelf)} PDFs, {len({r.company for r in shelf})} companies")
    for label, group, listed in groups:
        if group and all(keep(r) for r in group):
            print(f"-- {label} companies ({len(group)} PDFs)")
            show = frozenset(r.company for r in group) if args.failures and listed else frozenset()
            identity(group, show)
            for question in QUESTIONS:
                right, asked = scope_check(shelf, group, question, show)
                print(f"scope, right company and year first: {_share(right, asked)} "
                      f'("{question}")')
    print_command(__file__, argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
