"""Check that every filing of the shelf tags its cover fields as its cover shows them.

    python3 benchmarks/filings_covers.py [--filings DIR]

tests/test_cover.py checks the few filings in tests/data/filings; this reads the whole shelf
(../shared/data/filings by default): each HTML filing's `dei:` facts must give every cover
field (retriever_trt.documents.model.CoverField), each from a tagged fact, none with a comma
caught in its tag ("Arlington,"). One line per filing, then the count; exit 1 on a problem.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from filings_gold import FILINGS  # noqa: E402

from retriever_trt.documents import load_document  # noqa: E402
from retriever_trt.documents.model import PRINTED_COVER_FIELDS, DocumentMetadata  # noqa: E402


def cover_problems(meta: DocumentMetadata) -> list[str]:
    """What is wrong with a tagged filing's cover fields ([] when nothing is)."""
    problems = [f"{field.value}: not tagged" for field in PRINTED_COVER_FIELDS
                if field not in meta.cover]
    for field, entry in meta.cover.items():
        if not entry.facts:
            problems.append(f"{field.value}: {entry.value!r} has no tagged fact")
        if entry.value.endswith(","):
            problems.append(f"{field.value}: {entry.value!r} ends with a comma")
    return problems


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--filings", type=Path, default=FILINGS, help="the shared filings folder")
    args = ap.parse_args(argv)
    paths = sorted(args.filings.glob("*.html")) if args.filings.is_dir() else []
    if not paths:
        raise SystemExit(f"--filings {args.filings}: no .html filings there (the shared SEC "
                         "filings live in ../shared/data/filings)")
    bad = 0
    for path in paths:
        problems = cover_problems(load_document(path).metadata)
        bad += bool(problems)
        print(f"{path.name}: " + ("; ".join(problems) if problems else
                                  f"all {len(PRINTED_COVER_FIELDS)} cover fields tagged as shown"))
    print(f"checked the cover fields of {len(paths)} filings in {args.filings}: "
          f"{bad} with a problem")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
