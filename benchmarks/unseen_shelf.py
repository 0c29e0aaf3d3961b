"""The unseen shelf: real inline-XBRL 10-K and 10-Q filings (EDGAR's primary HTML documents)
that no question set of this repository used before, copied from public GitHub repositories.

    python benchmarks/unseen_shelf.py [--set 1|2|3|4|5|6|7|8|9|10|11|12|13|14|15] [--mirrors DIR] [--out DIR]

Each set's shelf -- its filings, the public repositories and commits they are copied from, and
the question set that asks them -- is described in benchmarks/data/SHELVES.md (set 1: the
first shelf, engines/unseen-shelf/, asked by benchmarks/data/unseen_simple_questions.jsonl).

Each file is read from its repository's bare git mirror (`--mirrors`, default /work/.mirror,
as OWNER+NAME/repo: the session tool `fetch github:OWNER/NAME` brings one there) at the
commit named below, so a later snapshot of the repository changes nothing here (Spire's
10-Q is gone from the edgartools HEAD; its commit still holds it). The copy is named
TICKER_FORM_PERIODEND.htm and kept byte for byte (AEON's and Spire's start with a blank line
before their XML declaration, as the repository stores them). A file the mirror lacks is
skipped with a line naming it; one that is not an inline-XBRL filing of its form (no
`ix:nonFraction` fact, or a `dei:DocumentType` other than the form) is a line too, and the
exit status is 1.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from mirror_files import mirror_blob, write_whole
from reproduce import print_command
from route_shelf import git_dir

ROOT = Path(__file__).resolve().parents[1]
MIRRORS = Path("/work/.mirror")
OUT = ROOT / "engines" / "unseen-shelf"
_EDGARTOOLS = "dgunning/edgartools"
_HEAD_2026_08 = "ca5a70094da7fc34890161dae9c256bb1f4c3d26"  # edgartools' HEAD, 2026-08-22
_SPIRE_COMMIT = "1e9f58b2d75c8d3b10f6474663656b171e85b7a9"  # the last to hold Spire's 10-Q
_FIXTURES = "tests/fixtures/html"
# TICKER_FORM_PERIODEND -> (repository, commit, path in it)
SHELF = {
    "AMZN_10-K_2024-12-31": (_EDGARTOOLS, _HEAD_2026_08,
                             f"{_FIXTURES}/amzn/10k/amzn-10-k-2025-02-07.html"),
    "GOOGL_10-K_2024-12-31": (_EDGARTOOLS, _HEAD_2026_08,
                              f"{_FIXTURES}/googl/10k/googl-10-k-2025-02-05.html"),
    "MA_10-K_2024-12-31": (_EDGARTOOLS, _HEAD_2026_08, f"{_FIXTURES}/ma/10k/ma-10-k-2025-02-12.html"),
    "JNJ_10-K_2024-12-29": (_EDGARTOOLS, _HEAD_2026_08,
                            f"{_FIXTURES}/jnj/10k/jnj-10-k-2025-02-13.html"),
    "WMT_10-K_2025-01-31": (_EDGARTOOLS, _HEAD_2026_08,
                            f"{_FIXTURES}/wmt/10k/wmt-10-k-2025-03-14.html"),
    "XOM_10-Q_2025-06-30": (_EDGARTOOLS, _HEAD_2026_08,
                            f"{_FIXTURES}/xom/10q/xom-10-q-2025-08-04.html"),
    "UNP_10-Q_2025-06-30": (_EDGARTOOLS, _HEAD_2026_08,
                            f"{_FIXTURES}/unp/10q/unp-10-q-2025-07-24.html"),
    "ORCL_10-Q_2024-08-31": (_EDGARTOOLS, _HEAD_2026_08, "data/html/Oracle.10-Q.html"),
    "AEON_10-Q_2023-09-30": (_EDGARTOOLS, _HEAD_2026_08,
                             "data/xbrl/datafiles/aeon/aeon-20230930x10q.htm"),
    "SR_10-Q_2023-12-31": (_EDGARTOOLS, _SPIRE_COMMIT,
                           "data/xbrl/datafiles/spire/spre20231231_10q.htm"),
}
_SUMIT = "Sumitkumar005/Financial-Analyst-Agent"
_SUMIT_HEAD = "bc3d17a0cd62d148561f6040ab2f2cc270ef57b1"  # its HEAD, 2026-01-19
OUT2 = ROOT / "engines" / "unseen-shelf2"
# The second shelf: (ticker, the filing's period end) -> the repository's copy.
_SHELF2_PERIODS = {
    "MMC": "2024-12-31", "LMT": "2024-12-31", "LLY": "2024-12-31", "LIN": "2024-12-31",
    "VZ": "2024-12-31", "MCD": "2024-12-31", "PEP": "2024-12-28", "COST": "2025-08-31",
    "CSCO": "2025-07-26", "MDT": "2025-04-25", "SBUX": "2025-09-28", "TJX": "2025-02-01",
}
SHELF2 = {f"{ticker}_10-K_{end}": (_SUMIT, _SUMIT_HEAD, f"output/{ticker}_10K_HTML.html")
          for ticker, end in _SHELF2_PERIODS.items()}
OUT3 = ROOT / "engines" / "unseen-shelf3"
# The third shelf: edgartools' fixtures of the same commit; the nine others first chosen (CAT,
# CVX, MSFT 10-K and 10-Q, PFE, AXP, GS 10-Q, JPM 10-Q, HUBS 10-K) are listed in its tree but
# their blobs are not in the mirror, so three 10-Ks of the second shelf's repository stand in.
SHELF3 = {
    "KO_10-Q_2025-06-27": (_EDGARTOOLS, _HEAD_2026_08,
                           f"{_FIXTURES}/ko/10q/ko-10-q-2025-07-24.html"),
    "PG_10-K_2025-06-30": (_EDGARTOOLS, _HEAD_2026_08,
                           f"{_FIXTURES}/pg/10k/pg-10-k-2025-08-04.html"),
    "NFLX_10-K_2024-12-31": (_EDGARTOOLS, _HEAD_2026_08,
                             f"{_FIXTURES}/nflx/10k/nflx-10-k-2025-01-27.html"),
    "RTX_10-K_2024-12-31": (_SUMIT, _SUMIT_HEAD, "output/RTX_10K_HTML.html"),
    "AMGN_10-K_2024-12-31": (_SUMIT, _SUMIT_HEAD, "output/AMGN_10K_HTML.html"),
    "INTU_10-K_2025-07-31": (_SUMIT, _SUMIT_HEAD, "output/INTU_10K_HTML.html"),
}
OUT4 = ROOT / "engines" / "unseen-shelf4"
# The fourth shelf: (ticker, the period end its cover's dei:DocumentPeriodEndDate states).
_SHELF4_PERIODS = {
    "GE": "2024-12-31", "TMUS": "2024-12-31", "BKNG": "2024-12-31", "SPGI": "2024-12-31",
    "BMY": "2024-12-31", "LOW": "2025-01-31", "ADP": "2025-06-30", "QCOM": "2025-09-28",
}


def _sumit_shelf(periods: dict[str, str]) -> dict[str, tuple[str, str, str]]:
    """A shelf of the second shelf's repository's 10-Ks, by ticker and period end."""
    return {f"{ticker}_10-K_{end}": (_SUMIT, _SUMIT_HEAD, f"output/{ticker}_10K_HTML.html")
            for ticker, end in periods.items()}


SHELF4 = _sumit_shelf(_SHELF4_PERIODS)
OUT5 = ROOT / "engines" / "unseen-shelf5"
# The fifth shelf: (ticker, the period end its cover's dei:DocumentPeriodEndDate states).
_SHELF5_PERIODS = {
    "SYK": "2024-12-31", "MDLZ": "2024-12-31", "DHR": "2024-12-31", "GILD": "2024-12-31",
    "VRTX": "2024-12-31", "PANW": "2025-07-31", "AMAT": "2025-10-26", "LRCX": "2025-06-29",
}
SHELF5 = _sumit_shelf(_SHELF5_PERIODS)
OUT6 = ROOT / "engines" / "unseen-shelf6"
# The sixth shelf: (ticker, the period end its cover's dei:DocumentPeriodEndDate states; the
# repository's ADI and Broadcom downloads are their fiscal 2025 10-Ks, not fiscal 2024's).
_SHELF6_PERIODS = {
    "ADI": "2025-11-01", "AVGO": "2025-11-02", "TMO": "2024-12-31", "T": "2024-12-31",
}
_TELEFACTS = "ecksbee/telefacts"
_TELEFACTS_HEAD = "302aaf3435351815f905a782554667db6691ecf7"  # its HEAD, 2024-09-30
SHELF6 = {
    **_sumit_shelf(_SHELF6_PERIODS),
    # Workiva's 10-Q for the quarter ended June 30, 2022: a test fixture of an XBRL renderer.
    "WK_10-Q_2022-06-30": (_TELEFACTS, _TELEFACTS_HEAD,
                           "test/wd/folders/high_precision/wk-20220630.htm"),
}
OUT7 = ROOT / "engines" / "unseen-shelf7"
# The seventh shelf, for development: (ticker, the period end its cover states).
SHELF7 = _sumit_shelf({"ABT": "2024-12-31", "AMD": "2024-12-28", "ISRG": "2024-12-31",
                       "TXN": "2024-12-31", "UBER": "2024-12-31"})
OUT8 = ROOT / "engines" / "unseen-shelf8"
_NVDA_COMMIT = "f203c96aa0acc7c6a03f0adf8def6aa8c84e178f"  # the last whole NVIDIA 10-K copy
_ARELLE_VIEWER = "Arelle/ixbrl-viewer"
_ARELLE_VIEWER_HEAD = "ee1918086513b48c63be3be24f214ad4cf0e5e2d"  # its HEAD, 2026-08-20
# The eighth shelf: (the period end its cover's dei:DocumentPeriodEndDate states; Clorox's,
# a cover-less exhibit, its statements' year end). Two Apple 10-Qs: four companies.
SHELF8 = {
    "INTC_10-K_2024-12-28": (_SUMIT, _SUMIT_HEAD, "output/INTC_10K_HTML.html"),
    # Exhibit 99.1 of Clorox's multi-document 10-K submission: MD&A and the statements.
    "CLX_10-K_2022-06-30": (_ARELLE_VIEWER, _ARELLE_VIEWER_HEAD,
                            "examples/clorox-2022-10-K-ixbrl-viewer/clx-20220630_d2.htm"),
    # The HEAD copy (data/html/) lost an ix:nonNumeric start tag (159 bytes became a line
    # break) and parses as no XML; the copy before that commit's move is whole.
    "NVDA_10-K_2023-01-29": (_EDGARTOOLS, _NVDA_COMMIT, "data/Nvidia.10-K.html"),
    "AAPL_10-Q_2025-03-29": (_EDGARTOOLS, _HEAD_2026_08,
                             "tests/fixtures/attachments/aapl/20250329/aapl-20250329.htm"),
    "AAPL_10-Q_2024-06-29": (_EDGARTOOLS, _HEAD_2026_08, "data/html/Apple.10-Q.html"),
}
OUT9 = ROOT / "engines" / "unseen-shelf9"
_SEC_PARSER_DATA = "alphanome-ai/sec-parser-test-data"
_SEC_PARSER_DATA_HEAD = "3ebd96ca3ed1be529929d8bb4e1ad313dc59d0ce"  # its HEAD, 2025-01-07
# The ninth shelf: (the period end its cover's dei:DocumentPeriodEndDate states) -> the
# repository's FORM/TICKER/ACCESSION folder.
_SHELF9_FOLDERS = {
    "TRV_10-Q_2023-09-30": "10-Q/TRV/0000086312-23-000063",
    "CAT_10-Q_2023-06-30": "10-Q/CAT/0000018230-23-000047",
    "DIS_10-Q_2023-07-01": "10-Q/DIS/0001744489-23-000171",
    "GD_10-K_2023-12-31": "10-K/GD/0000040533-24-000007",
    "CL_10-K_2023-12-31": "10-K/CL/0000021665-24-000003",
}


def _sec_parser_shelf(folders: dict[str, str]) -> dict[str, tuple[str, str, str]]:
    """A shelf of the parser test data's primary documents, by name and folder."""
    return {name: (_SEC_PARSER_DATA, _SEC_PARSER_DATA_HEAD, f"{folder}/primary-document.html")
            for name, folder in folders.items()}


SHELF9 = _sec_parser_shelf(_SHELF9_FOLDERS)
OUT10 = ROOT / "engines" / "unseen-shelf10"
# The tenth shelf: the same repository and commit, the same naming.
SHELF10 = _sec_parser_shelf({
    "CVX_10-Q_2023-06-30": "10-Q/CVX/0000093410-23-000079",
    "UPS_10-Q_2023-06-30": "10-Q/UPS/0001090727-23-000038",
    "WBA_10-Q_2023-05-31": "10-Q/WBA/0001618921-23-000043",
    "JCI_10-K_2024-09-30": "10-K/JCI/0000833444-24-000064",
    "SJM_10-K_2024-04-30": "10-K/SJM/0000091419-24-000054",
})
OUT11 = ROOT / "engines" / "unseen-shelf11"
# The eleventh shelf: the same repository and commit, the same naming.
SHELF11 = _sec_parser_shelf({
    "GM_10-K_2023-12-31": "10-K/GM/0001467858-24-000031",
    "CMCSA_10-K_2023-12-31": "10-K/CMCSA/0001166691-24-000011",
    "HON_10-Q_2023-06-30": "10-Q/HON/0000773840-23-000073",
    "MRK_10-Q_2023-06-30": "10-Q/MRK/0001628280-23-027770",
    "DOW_10-Q_2023-06-30": "10-Q/DOW/0001751788-23-000128",
})
OUT12 = ROOT / "engines" / "unseen-shelf12"
# The twelfth shelf: the same repository and commit, the same naming (C3.ai's fiscal year
# ends April 30: its 10-Q is for the quarter ended July 31, 2023).
SHELF12 = _sec_parser_shelf({
    "PLTR_10-K_2023-12-31": "10-K/PLTR/0001321655-24-000022",
    "RKT_10-K_2023-12-31": "10-K/RKT/0001805284-24-000009",
    "GME_10-K_2024-02-03": "10-K/GME/0001326380-24-000012",
    "RIOT_10-Q_2023-06-30": "10-Q/RIOT/0001558370-23-014305",
    "AI_10-Q_2023-07-31": "10-Q/AI/0001628280-23-031636",
})
OUT13 = ROOT / "engines" / "unseen-shelf13"
# The thirteenth shelf: the same repository and commit, the same naming (two Marathon Digital
# filings; Mullen's fiscal year ends September 30; the 10-K/WBA folder holds Walgreens Boots
# Alliance's fiscal 2024 10-K, as its dei:DocumentPeriodEndDate says, not fiscal 2023's).
SHELF13 = _sec_parser_shelf({
    "MARA_10-K_2023-12-31": "10-K/MARA/0001628280-24-007680",
    "MARA_10-Q_2023-06-30": "10-Q/MARA/0001493152-23-027174",
    "AMC_10-Q_2023-06-30": "10-Q/AMC/0001411579-23-000057",
    "MULN_10-Q_2023-06-30": "10-Q/MULN/0001558370-23-014900",
    "WBA_10-K_2024-08-31": "10-K/WBA/0001618921-24-000084",
})
OUT14 = ROOT / "engines" / "unseen-shelf14"
# The fourteenth shelf: the same repository and commit, the same naming (C3.ai's fiscal 2024
# 10-K, its year ended April 30, 2024; GameStop's 10-Q for its fiscal 2023 second quarter, ended
# July 29, 2023). Each company is on one earlier shelf by another filing.
SHELF14 = _sec_parser_shelf({
    "AI_10-K_2024-04-30": "10-K/AI/0001628280-24-028786",
    "RIOT_10-K_2023-12-31": "10-K/RIOT/0001558370-24-001550",
    "CL_10-Q_2023-06-30": "10-Q/CL/0000021665-23-000031",
    "GM_10-Q_2023-06-30": "10-Q/GM/0001467858-23-000098",
    "GME_10-Q_2023-07-29": "10-Q/GME/0001326380-23-000047",
})
OUT15 = ROOT / "engines" / "unseen-shelf15"
# The fifteenth shelf: the same repository and commit, the same naming (General Dynamics' 10-Q
# for its second quarter, ended July 2, 2023; Johnson Controls' fiscal year ends September 30, so
# its 10-Q ended June 30, 2023 is its fiscal 2023 third quarter; General Electric's 2023 10-K).
# Each company is on one earlier shelf by another filing.
SHELF15 = _sec_parser_shelf({
    "CMCSA_10-Q_2023-06-30": "10-Q/CMCSA/0001166691-23-000032",
    "GD_10-Q_2023-07-02": "10-Q/GD/0000040533-23-000060",
    "JCI_10-Q_2023-06-30": "10-Q/JCI/0000833444-23-000030",
    "PLTR_10-Q_2023-06-30": "10-Q/PLTR/0001321655-23-000090",
    "GE_10-K_2023-12-31": "10-K/GE/0000040545-24-000027",
})
# Documents of a multi-document inline-XBRL submission other than its primary one: no cover,
# so no dei:DocumentType to check (one of another form is still refused).
EXHIBIT_DOCUMENTS = {"CLX_10-K_2022-06-30"}
SHELVES = {1: (SHELF, OUT), 2: (SHELF2, OUT2), 3: (SHELF3, OUT3), 4: (SHELF4, OUT4),
           5: (SHELF5, OUT5), 6: (SHELF6, OUT6), 7: (SHELF7, OUT7),
           8: (SHELF8, OUT8), 9: (SHELF9, OUT9), 10: (SHELF10, OUT10),
           11: (SHELF11, OUT11), 12: (SHELF12, OUT12), 13: (SHELF13, OUT13),
           14: (SHELF14, OUT14), 15: (SHELF15, OUT15)}
# An inline-XBRL numeric fact, and the cover's form type (its text may sit in a nested span).
FACT_TAG = b"<ix:nonFraction"
_DOCUMENT_TYPE = re.compile(rb'name="dei:DocumentType"[^>]*>(?:<[^>]+>)*\s*([^<\s]+)')


# An EDGAR submission's <XBRL> section around a document: its SGML tags, not the document's.
_SGML_XBRL = re.compile(rb"\A\s*<XBRL>\r?\n(.*?)\r?\n</XBRL>\s*\Z", re.S)


def unwrapped(data: bytes) -> bytes:
    """The document inside an EDGAR <XBRL> section; other bytes as they are."""
    m = _SGML_XBRL.match(data)
    return m.group(1) if m else data


def filing_problem(data: bytes, form: str, exhibit: bool = False) -> str | None:
    """Why the bytes are not a primary inline-XBRL document of `form` (with `exhibit`, a
    document of such a submission without a cover); None when they are."""
    if FACT_TAG not in data:
        return "no ix:nonFraction fact (not inline XBRL)"
    m = _DOCUMENT_TYPE.search(data)
    if exhibit and m is None:
        return None
    if m is None or m.group(1).decode() != form:
        return f"dei:DocumentType {m.group(1).decode() if m else 'missing'}, not {form}"
    return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", type=int, choices=sorted(SHELVES), default=1,
                    help="; ".join(f"{n}: {out.relative_to(ROOT)}"
                                   for n, (_, out) in SHELVES.items()))
    ap.add_argument("--mirrors", type=Path, default=MIRRORS)
    ap.add_argument("--out", type=Path, default=None, help="default: the set's folder")
    args = ap.parse_args(argv)
    shelf, default_out = SHELVES[args.set]
    args.out = args.out or default_out
    args.out.mkdir(parents=True, exist_ok=True)
    copied, bad = 0, []
    for name, (repo, commit, path) in shelf.items():
        target = args.out / f"{name}.htm"
        if not target.exists():
            data = mirror_blob(git_dir(args.mirrors, repo), path, commit)
            if data is None:
                print(f"skipped {name}: {repo}@{commit[:10]}:{path} absent "
                      f"(fetch github:{repo} first)")
                continue
            write_whole(target, unwrapped(data))
            print(f"copied {name}: {len(data) / 1e6:.1f} MB from {repo}:{path}")
        problem = filing_problem(target.read_bytes(), name.split("_")[1],
                                 exhibit=name in EXHIBIT_DOCUMENTS)
        if problem:
            bad.append(name)
            print(f"not a filing of its form: {target}: {problem}")
        copied += 1
    print(f"{copied} of {len(shelf)} filings in {args.out}")
    print_command(__file__, argv)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
