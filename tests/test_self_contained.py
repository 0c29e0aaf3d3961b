"""No test reads outside the repository: a user's clone has nothing beside it (no shared
data folder), and runs every test on the same data as CI. The tests' data lives in the
repository: tests/data (the SEC filings among it) and pipeline/data (the demo corpus)."""

from __future__ import annotations

import re
from pathlib import Path

from paths import FILINGS, REPO, TATQA

# What a path out of the repository looks like in a test's source: the data folder beside
# it, an absolute path of this machine, or a step up from the repository's root.
OUTSIDE = re.compile(r"\.\./shared|shared/data|[\"']shared[\"']|/work/|\b(?:REPO|ROOT)\.parent\b")


def test_no_test_names_a_path_outside_the_repository() -> None:
    sources = [p for p in sorted((REPO / "tests").rglob("*.py")) if p != Path(__file__).resolve()]
    assert len(sources) > 1
    found = [f"{p.relative_to(REPO)}:{n}: {line.strip()}"
             for p in sources
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
             if OUTSIDE.search(line)]
    assert found == [], "tests must read only the repository's files:\n" + "\n".join(found)


def test_the_data_paths_lie_in_the_repository() -> None:
    for path in (TATQA, FILINGS):
        assert path.exists() and path.resolve().is_relative_to(REPO), path
    assert sorted(FILINGS.glob("*.html")) and sorted((FILINGS / "pdf").glob("*.pdf"))


def test_the_pattern_catches_the_ways_out() -> None:
    for line in ('FILINGS = REPO.parent / "shared" / "data" / "filings"',
                 'path = Path("../shared/data/tatqa/tatqa_dataset_dev.json")',
                 'open("/work/shared/data/filings/aapl-10-k-2024-11-01.html")',
                 "corpus = ROOT.parent / 'corpus.json'"):
        assert OUTSIDE.search(line), line
    for line in ('FILINGS = REPO / "tests" / "data" / "filings"', "shared = tmp / 'index'",
                 "# blocks are shared within the step"):
        assert not OUTSIDE.search(line), line
