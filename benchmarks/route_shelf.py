"""The route shelf: real 10-K PDFs of companies neither FinanceBench's held-out ones nor on its
mirror's shelf in these years, copied from public GitHub repositories of RAG demos.

    python benchmarks/route_shelf.py [--mirrors DIR] [--out DIR]

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
import sys
from pathlib import Path

from mirror_files import mirror_blob, write_whole
from pdf_dev_shelf import is_10k
from reproduce import print_command

ROOT = Path(__file__).resolve().parents[1]
MIRRORS = Path("/work/.mirror")
OUT = ROOT / "engines" / "route-shelf"
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


def git_dir(mirrors: Path, repo: str) -> Path:
    """Where the session tool `fetch github:OWNER/NAME` puts a repository's bare mirror."""
    return mirrors / repo.replace("/", "+") / "repo"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mirrors", type=Path, default=MIRRORS)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    copied, bad = 0, []
    for doc_id, (repo, path) in SHELF.items():
        target = args.out / f"{doc_id}_10K.pdf"
        if not target.exists():
            data = mirror_blob(git_dir(args.mirrors, repo), path)
            if data is None:
                print(f"skipped {doc_id}: {repo}:{path} absent (fetch github:{repo} first)")
                continue
            write_whole(target, data)
        if not is_10k(target):
            bad.append(doc_id)
            print(f"not a 10-K: {target}")
        copied += 1
    print(f"{copied} of {len(SHELF)} 10-K PDFs in {args.out}")
    print_command(__file__, argv)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
