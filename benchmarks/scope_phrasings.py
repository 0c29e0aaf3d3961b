"""The filing a question is scoped to, over questions phrased as analysts write the company
and the period (issue 51 item 4): "What is FY2018 ... for Intel?", "as of the end of
FY21", "between FY2017 and FY2019", "Based on its 2020 annual report", "in the year ended
January 28, 2023" (a retailer's year ending in January), "over the last three fiscal
years", a ticker, a name without its "Inc.", the company "formerly known as" its old name.

    python3 benchmarks/scope_phrasings.py [--mirror GIT_DIR] [--shelf DIR] [--shelf3 DIR]
        [--failures]

One shelf: every 10-K PDF of the FinanceBench mirror (as benchmarks/cover_identity.py reads
them) and the route shelf's (`--shelf`, engines/route-shelf: COMPANY_YEAR_10K.pdf, copied
by benchmarks/route_shelf.py), a route filing whose COMPANY_YEAR the mirror has left
out. The questions (PHRASINGS) were written for this script, each for one filing, before
running it (seven moved to another year or company of the same kind where the mirror's PDF
is an LFS pointer; the Foot Locker question's filing corrected to FOOTLOCKER_2023, whose
cover's year ended January 28, 2023). They ask only of the development companies and the
route shelf's, never of FinanceBench's held-out companies (which stay on the shelf as the
others a name must not reach). FRESH: 34 more, written the same way after the fixes chosen
on PHRASINGS' misses. SHELF3: 44 more over the third development shelf (`--shelf3`,
engines/route-shelf3: benchmarks/route_shelf.py --set 3), on the same one shelf, written
before running them. Right: the first filing `scope.choose_filings` gives is the one
written for.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from cover_identity import MIRROR, Read, read_folder, read_shelf
from reproduce import print_command

from pipeline.rag.answers.company_names import shelf_aliases
from pipeline.rag.answers.filings.scope import choose_filings
from pipeline.rag.answers.query import parse_query
from retriever_trt.store.document_store import DocumentInfo

ROOT = Path(__file__).resolve().parents[1]
ROUTE_SHELF = ROOT / "engines" / "route-shelf"
SHELF3_DIR = ROOT / "engines" / "route-shelf3"

# (question, the filing it was written for)
PHRASINGS = (
    ("What is FY2020 total revenue for Intel?", "INTEL_2020"),
    ("In fiscal year 2019, what were Pfizer's total revenues?", "PFIZER_2019"),
    ("What was Verizon's total debt as of the end of FY21?", "VERIZON_2021"),
    ("How did AES's revenue change between FY2019 and FY2021?", "AES_2021"),
    ("Based on its 2020 annual report, what was eBay's net income?", "EBAY_2020"),
    ("What was Salesforce's revenue in the year ended January 31, 2021?", "SALESFORCE_2021"),
    ("What were NVIDIA's revenues in the fiscal year ended January 29, 2023?", "NVIDIA_2023"),
    ("Over the last three fiscal years, how has Tesla's gross margin trended?", "TESLA_2023"),
    ("What was Johnson & Johnson's operating cash flow in FY 2016?", "JOHNSON_JOHNSON_2016"),
    ("JNJ: what was the dividend per share in 2017?", "JOHNSON_JOHNSON_2017"),
    ("What were Apple's net sales in fiscal 2023?", "APPLE_2023"),
    ("What was Oracle's cloud revenue for fiscal 2016?", "ORACLE_2016"),
    ("What is the FY2022 capital expenditure of Meta Platforms?", "META_2022"),
    ("In FY2019, what was the revenue of the company now known as Meta?", "META_2019"),
    ("What were the total assets of the company formerly known as Facebook at the end of "
     "FY2022?", "META_2022"),
    ("How much did Alphabet spend on R&D in 2021?", "ALPHABET_2021"),
    ("What was GOOGL's operating income for fiscal year 2020?", "ALPHABET_2020"),
    ("Broadcom's FY2021 net revenue?", "BROADCOM_2021"),
    ("What was AVGO's free cash flow in fiscal 2022?", "BROADCOM_2022"),
    ("Uber Technologies: what were its 2021 revenues?", "UBER_2021"),
    ("What was Lyft's net loss for the year ended December 31, 2021?", "LYFT_2021"),
    ("Per PG&E's 10-K for 2018, what were its wildfire-related liabilities?", "PG_E_2018"),
    ("What were Pacific Gas and Electric's operating revenues in 2019?", "PG_E_2019"),
    ("What was Amcor's adjusted EBIT in fiscal year 2021?", "AMCOR_2021"),
    ("Between FY2020 and FY2022, how did Amcor's net sales change?", "AMCOR_2022"),
    ("What was Pfizer Inc's gross margin in FY2015?", "PFIZER_2015"),
    ("As of December 31, 2020, what was Pfizer's long-term debt?", "PFIZER_2020"),
    ("What was the three-year average revenue of Verizon Communications from FY2016 to "
     "FY2018?", "VERIZON_2018"),
    ("In its fiscal 2022 Form 10-K, what did Salesforce report as total revenue?",
     "SALESFORCE_2022"),
    ("What was NVDA's data center revenue in FY24?", "NVIDIA_2024"),
    ("What was Tesla's automotive revenue in FY '22?", "TESLA_2022"),
    ("How much cash did eBay Inc. have at the end of fiscal 2018?", "EBAY_2018"),
    ("What were Oracle Corp.'s total revenues for the fiscal year ended May 31, 2021?",
     "ORACLE_2021"),
    ("For fiscal 2023, what were Foot Locker's net sales?", "FOOTLOCKER_2023"),
    ("What was Foot Locker's comparable-store sales change in the year ended January 28, "
     "2023?", "FOOTLOCKER_2023"),
    ("What was American Express's net interest income in 2022?", "AMERICANEXPRESS_2022"),
    ("Verizon Communications Inc.'s total debt at year-end 2019?", "VERIZON_2019"),
    ("What were McDonald's systemwide sales in FY2022?", "MCDONALDS_2022"),
    ("What was eBay's gross merchandise volume in 2019?", "EBAY_2019"),
    ("What was FedEx's operating margin in fiscal year 2023?", "FEDEX_2023"),
    ("Boston Properties' rental revenue in 2015?", "BOSTONPROPERTIES_2015"),
    ("What was Apple's revenue in FY2019 according to its FY2020 10-K?", "APPLE_2020"),
    ("What was Meta's headcount at the end of 2023?", "META_2023"),
    ("What were Nvidia's total revenues in fiscal 2021, as reported in its annual report "
     "for that year?", "NVIDIA_2021"),
    ("What was J&J's R&D spending over the last three fiscal years?", "JOHNSON_JOHNSON_2022"),
    ("Compare Alphabet's FY2019 and FY2020 operating income.", "ALPHABET_2020"),
    ("What was the revenue of Salesforce.com in FY2020?", "SALESFORCE_2020"),
    ("What was Google parent Alphabet's 2022 revenue?", "ALPHABET_2022"),
    ("what was oracle's revenue in fy2017?", "ORACLE_2017"),
    ("what was tesla's revenue in fy2019?", "TESLA_2019"),
)

# Written after the fixes chosen on PHRASINGS' misses (commit 105cee9), before running them:
# data no fix was chosen on.
FRESH = (
    ("Give me Meta's FY20 revenue.", "META_2020"),
    ("Alphabet revenue 2023", "ALPHABET_2023"),
    ("How much did NVIDIA Corp earn in net income during fiscal 2022?", "NVIDIA_2022"),
    ("What did Tesla, Inc. report as total revenues for the year ending December 31, 2020?",
     "TESLA_2020"),
    ("Broadcom Inc. FY 2023 operating income", "BROADCOM_2023"),
    ("For the fiscal year ended October 31, 2021, what was Broadcom's net income?",
     "BROADCOM_2021"),
    ("What was Verizon's capex in 2015?", "VERIZON_2015"),
    ("How much long-term debt did Pfizer carry at year-end 2017?", "PFIZER_2017"),
    ("What were J&J's sales in fiscal 2019?", "JOHNSON_JOHNSON_2019"),
    ("Johnson and Johnson 2021 R&D expense", "JOHNSON_JOHNSON_2021"),
    ("eBay's 2016 revenue", "EBAY_2016"),
    ("What was Apple Inc.'s net income in fiscal year 2017?", "APPLE_2017"),
    ("In FY17, what was Oracle's operating income?", "ORACLE_2017"),
    ("How did Oracle's revenue change from fiscal 2019 to fiscal 2020?", "ORACLE_2020"),
    ("What were Amcor plc's net sales in fiscal 2023?", "AMCOR_2023"),
    ("What was the AES Corporation's revenue for 2020?", "AES_2020"),
    ("What were American Express's total revenues net of interest expense in FY2022?",
     "AMERICANEXPRESS_2022"),
    ("McDonalds revenue 2022", "MCDONALDS_2022"),
    ("FedEx Corporation's revenue in the fiscal year ended May 31, 2023?", "FEDEX_2023"),
    ("What was PG&E's net loss in 2019?", "PG_E_2019"),
    ("How much did PG&E Corp. pay in dividends in 2016?", "PG_E_2016"),
    ("What was Lyft, Inc.'s adjusted EBITDA in 2021?", "LYFT_2021"),
    ("What were Facebook's advertising revenues in 2020?", "META_2020"),
    ("What were Meta Platforms' Reality Labs operating losses in 2022?", "META_2022"),
    ("Salesforce revenue FY2024", "SALESFORCE_2024"),
    ("What was CRM's operating cash flow in fiscal 2021?", "SALESFORCE_2021"),
    ("What was TSLA's free cash flow in 2023?", "TESLA_2023"),
    ("What was Intel's revenue in 2020?", "INTEL_2020"),
    ("What was the year-over-year change in Alphabet's revenue from 2021 to 2022?",
     "ALPHABET_2022"),
    ("What was NVIDIA's revenue for fiscal year 2020 (ended January 26, 2020)?", "NVIDIA_2020"),
    ("As of the end of fiscal 2023, how much cash did Apple have?", "APPLE_2023"),
    ("What was Boston Properties, Inc.'s net income in 2015?", "BOSTONPROPERTIES_2015"),
    ("What was Pfizer's revenue last year according to its 2022 10-K?", "PFIZER_2022"),
    ("What was Foot Locker's net income in fiscal 2022?", "FOOTLOCKER_2022"),
)

# Over the third development shelf (engines/route-shelf3, benchmarks/route_shelf.py --set 3),
# written before running them: names as analysts write them (a ticker, no suffix, "The",
# "&" or "and"), years as "FY24", "fiscal 2025", "the year ended ...", "its 2022 10-K".
SHELF3 = (
    ("What was Ford's FY2021 automotive revenue?", "FORD_2021"),
    ("Ford Motor Co. 2019 10-K: total debt?", "FORD_2019"),
    ("In fiscal 2023, how much did Ford Motor spend on capital expenditures?", "FORD_2023"),
    ("What was F's net income for the year ended December 31, 2024?", "FORD_2024"),
    ("Ford 2016 10-K executive compensation", "FORD_2016"),
    # no FY2018 10-K on the shelf: the FY2019 one shows FY2018 as its comparative column
    ("What was Ford's revenue in FY2018?", "FORD_2019"),
    ("How did Ford's net income change from FY2020 to FY2022?", "FORD_2022"),
    ("Ford Motor Company's pension expense for 2015", "FORD_2015"),
    ("What were Patriot Transportation's operating revenues in fiscal 2018?", "PATRIOT_2018"),
    ("PATI: how many tractors did it operate at the end of fiscal 2020?", "PATRIOT_2020"),
    ("For the fiscal year ended September 30, 2016, what was Patriot Transportation "
     "Holding's net income?", "PATRIOT_2016"),
    ("Patriot Transportation 2022 10-K revenue", "PATRIOT_2022"),
    ("What was Patriot's average revenue from FY2017 to FY2019?", "PATRIOT_2019"),
    ("GigaCloud Technology's 2024 revenue?", "GIGACLOUD_2024"),
    ("What was GCT's gross margin in FY2024?", "GIGACLOUD_2024"),
    ("AbbVie's Humira net revenues in 2024", "ABBVIE_2024"),
    ("What was ABBV's R&D expense in fiscal 2024?", "ABBVIE_2024"),
    ("What were Home Depot's net sales in fiscal 2024?", "HOMEDEPOT_2024"),
    ("For the fiscal year ended February 2, 2025, what were The Home Depot's comparable "
     "sales?", "HOMEDEPOT_2024"),
    ("IBM's 2024 free cash flow", "IBM_2024"),
    ("What was International Business Machines' software revenue in FY24?", "IBM_2024"),
    ("UnitedHealth Group's medical care ratio for 2024?", "UNITEDHEALTH_2024"),
    ("UNH 2024 10-K: Optum revenues", "UNITEDHEALTH_2024"),
    ("What was Union Pacific's operating ratio in 2024?", "UNIONPACIFIC_2024"),
    ("What were Visa's net revenues in fiscal 2024?", "VISA_2024"),
    ("Visa Inc. total payments volume for the fiscal year ended September 30, 2024",
     "VISA_2024"),
    ("What was Wells Fargo's net interest income in 2024?", "WELLSFARGO_2024"),
    ("WFC's asset cap: what does its FY2024 10-K say?", "WELLSFARGO_2024"),
    ("What was Abbott Labs' diagnostics revenue in 2024?", "ABBOTT_2024"),
    ("Amgen 2024 product sales", "AMGEN_2024"),
    ("What were Booking Holdings' room nights in 2024?", "BOOKING_2024"),
    ("Bristol Myers Squibb's Eliquis revenue for the year ended December 31, 2024",
     "BRISTOLMYERS_2024"),
    ("What was GE's total revenue in FY2024?", "GENERALELECTRIC_2024"),
    ("Linde plc's operating profit in 2024", "LINDE_2024"),
    ("What were Lowe's comparable sales in fiscal 2024?", "LOWES_2024"),
    ("Marsh McLennan's 2024 revenue by segment", "MARSHMCLENNAN_2024"),
    ("What were Medtronic's net sales in fiscal year 2025?", "MEDTRONIC_2025"),
    ("What was P&G's organic sales growth in FY2025?", "PROCTERGAMBLE_2025"),
    ("Procter and Gamble 2025 10-K net earnings", "PROCTERGAMBLE_2025"),
    ("RTX Corp's 2024 backlog", "RTX_2024"),
    ("What was S&P Global's revenue in 2024?", "SPGLOBAL_2024"),
    ("What were AT&T's wireless service revenues in 2024?", "ATT_2024"),
    ("What were TJX's net sales in fiscal 2025?", "TJX_2025"),
    ("What was T-Mobile's postpaid churn in 2024?", "TMOBILE_2024"),
)


def one_shelf(mirror: Path, *folders: Path) -> dict[str, Read]:
    """The mirror's PDFs and the folders', by COMPANY_YEAR (the mirror's copy kept)."""
    reads = {r.doc_id: r for folder in folders if folder.is_dir() for r in read_folder(folder)}
    return reads | {r.doc_id: r for r in read_shelf(mirror)[0]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mirror", type=Path, default=MIRROR)
    ap.add_argument("--shelf", type=Path, default=ROUTE_SHELF)
    ap.add_argument("--shelf3", type=Path, default=SHELF3_DIR,
                    help="the third development shelf; SHELF3's questions when it is there")
    ap.add_argument("--failures", action="store_true", help="list the misses")
    args = ap.parse_args(argv)
    reads = one_shelf(args.mirror, args.shelf, args.shelf3)
    shelf = {d: DocumentInfo(d, d, r.meta) for d, r in reads.items()}
    aliases = shelf_aliases(r.meta for r in reads.values())
    print(f"one shelf of {len(shelf)} 10-K PDFs, {len({r.company for r in reads.values()})} "
          "companies")
    sets = [("phrasings", PHRASINGS), ("fresh phrasings", FRESH)]
    if args.shelf3.is_dir():
        sets.append(("shelf 3 phrasings", SHELF3))
    else:
        print(f"no {args.shelf3}: SHELF3's questions left out (benchmarks/route_shelf.py --set 3)")
    missing = sorted({t for _, questions in sets for _, t in questions} - shelf.keys())
    if missing:
        sys.exit(f"filings written for but not on the shelf: {', '.join(missing)}")
    for label, questions in sets:
        right = 0
        for question, truth in questions:
            chosen = choose_filings(parse_query(question, aliases), shelf)
            right += bool(chosen) and chosen[0] == truth
            if args.failures and (not chosen or chosen[0] != truth):
                print(f"  MISS {question!r}: first {chosen[:1] or 'none'}, written for {truth}")
        print(f"{label}, right filing first: {right}/{len(questions)} "
              f"({100 * right / len(questions):.1f}%)")
    print_command(__file__, argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
