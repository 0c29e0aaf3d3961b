"""The helpers the benchmark scripts share: the command line each prints last
(benchmarks/reproduce.py), and files read out of a bare git mirror and written onto a shelf
whole (benchmarks/mirror_files.py), here on a mirror made in a temporary folder."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.heldout_records import assert_heldout_records
from tests.paths import REPO

sys.path.insert(0, str(REPO / "benchmarks"))
from filings_heldout_check import parse  # noqa: E402
from mirror_files import LFS_POINTER, mirror_blob, write_whole  # noqa: E402
from reproduce import command_line, print_command  # noqa: E402
from unseen_shelf import (  # noqa: E402
    EXHIBIT_DOCUMENTS,
    OUT2,
    SHELF,
    SHELF2,
    SHELVES,
    filing_problem,
    unwrapped,
)
from unseen_shelf import main as unseen_shelf_main  # noqa: E402


def test_the_command_names_the_script_from_the_repository_root_and_quotes_its_arguments() -> None:
    script = str(REPO / "benchmarks" / "answer_eval.py")
    assert command_line(script, ["--half", "b", "--set", "top_k=5 x"]) == \
        "python3 benchmarks/answer_eval.py --half b --set 'top_k=5 x'"
    assert command_line(script, [], prefix="PYTHONPATH=$PWD") == \
        "PYTHONPATH=$PWD python3 benchmarks/answer_eval.py"


def test_without_arguments_given_the_command_takes_the_process_ones(monkeypatch, capsys) -> None:
    monkeypatch.setattr(sys, "argv", ["benchmarks/x.py", "--rounds", "3"])
    print_command("x.py")
    assert capsys.readouterr().out == "\nreproduce: python3 benchmarks/x.py --rounds 3\n"


@pytest.fixture()
def mirror(tmp_path: Path) -> Path:
    """A bare mirror of a repository holding one PDF-like file and one LFS pointer."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "a.pdf").write_bytes(b"%PDF-1.7 the file itself")
    (work / "b.pdf").write_bytes(LFS_POINTER + b"/spec/v1\noid sha256:00\nsize 9\n")

    def git(*args: str, cwd: Path = work) -> None:
        subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)

    git("init", "-q")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "files")
    git("tag", "first")
    git("rm", "-q", "a.pdf")  # HEAD no longer holds it; the tagged commit does
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "a.pdf removed")
    git("clone", "-q", "--bare", str(work), str(tmp_path / "repo"), cwd=tmp_path)
    return tmp_path / "repo"


def test_a_mirror_gives_a_file_and_nothing_for_a_pointer_or_a_missing_one(mirror: Path) -> None:
    assert mirror_blob(mirror, "a.pdf", "first") == b"%PDF-1.7 the file itself"
    assert mirror_blob(mirror, "a.pdf") is None  # gone at HEAD
    assert mirror_blob(mirror, "b.pdf") is None
    assert mirror_blob(mirror, "c.pdf") is None
    assert mirror_blob(mirror.parent / "no-such-mirror", "a.pdf") is None


def test_a_file_is_written_whole_and_leaves_no_partial_beside_it(tmp_path: Path) -> None:
    target = tmp_path / "AES_2020_10K.pdf"
    write_whole(target, b"first")
    write_whole(target, b"second")
    assert target.read_bytes() == b"second"
    assert [p.name for p in tmp_path.iterdir()] == [target.name]


_IXBRL = (b'<html xmlns="http://www.w3.org/1999/xhtml" xmlns:ix="http://www.xbrl.org/2013/inlineXBRL">'
          b'<body><ix:nonNumeric name="dei:DocumentType" contextRef="c"><span>10-Q</span>'
          b'</ix:nonNumeric><ix:nonFraction name="us-gaap:Assets" contextRef="c" scale="6">1,234'
          b'</ix:nonFraction></body></html>')


def test_the_unseen_shelf_takes_only_an_inline_xbrl_filing_of_its_form() -> None:
    assert filing_problem(_IXBRL, "10-Q") is None
    assert "not 10-K" in filing_problem(_IXBRL, "10-K")
    assert "not inline XBRL" in filing_problem(b"<html>10-Q</html>", "10-Q")


def test_a_cover_less_exhibit_document_is_taken_only_where_the_shelf_says_so() -> None:
    exhibit = _IXBRL.replace(b"dei:DocumentType", b"dei:AuditorName")
    assert "missing, not 10-K" in filing_problem(exhibit, "10-K")
    assert filing_problem(exhibit, "10-K", exhibit=True) is None
    assert "not 10-K" in filing_problem(_IXBRL, "10-K", exhibit=True)  # a cover of another form
    assert EXHIBIT_DOCUMENTS <= set(SHELVES[8][0])


def test_the_second_unseen_shelf_holds_other_companies_at_pinned_commits() -> None:
    tickers = {name.split("_")[0] for name in SHELF}
    tickers2 = {name.split("_")[0] for name in SHELF2}
    assert len(tickers2) == len(SHELF2) >= 10 and not tickers & tickers2
    assert all(len(commit) == 40 for _, commit, _ in SHELF2.values())
    assert OUT2.name == "unseen-shelf2"


# Companies two shelves hold, each by another filing: Walgreens Boots Alliance's fiscal 2023
# third-quarter 10-Q (set 10) and its fiscal 2024 10-K (set 13); C3.ai's fiscal 2024 first-quarter
# 10-Q and its fiscal 2024 10-K, Riot Platforms' second-quarter 2023 10-Q and its 2023 10-K, and
# GameStop's fiscal 2023 10-K and its fiscal 2023 second-quarter 10-Q (sets 12 and 14);
# Colgate-Palmolive's 2023 10-K (set 9) and General Motors' (set 11) and their second-quarter 2023
# 10-Qs (set 14); General Dynamics' 2023 10-K (set 9), Johnson Controls' fiscal 2024 10-K (set 10),
# Comcast's 2023 10-K (set 11) and Palantir's (set 12) and their second-quarter 2023 10-Qs, and
# General Electric's 2024 10-K (set 4) and its 2023 10-K (set 15).
REPEATED = {"WBA": {10, 13}, "AI": {12, 14}, "RIOT": {12, 14}, "GME": {12, 14}, "CL": {9, 14},
            "GM": {11, 14}, "CMCSA": {11, 15}, "GD": {9, 15}, "JCI": {10, 15}, "PLTR": {12, 15},
            "GE": {4, 15}}


@pytest.mark.parametrize("number, filings, companies, forms", [
    (5, 8, 8, {"10-K"}), (6, 5, 5, {"10-K", "10-Q"}),
    (7, 5, 5, {"10-K"}),  # the development shelf, asked by the fact probes only
    (8, 5, 4, {"10-K", "10-Q"}),  # two Apple 10-Qs: four companies in five filings
    (10, 5, 5, {"10-K", "10-Q"}), (11, 5, 5, {"10-K", "10-Q"}),
    (12, 5, 5, {"10-K", "10-Q"}),
    (13, 5, 4, {"10-K", "10-Q"}),  # two Marathon Digital filings: four companies in five
    (14, 5, 5, {"10-K", "10-Q"}),  # five companies each on one earlier shelf (REPEATED)
    (15, 5, 5, {"10-K", "10-Q"}),  # five companies each on one earlier shelf (REPEATED)
])
def test_a_later_unseen_shelf_holds_companies_no_other_shelf_holds(number, filings, companies,
                                                                   forms) -> None:
    shelf, out = SHELVES[number]
    tickers = {name.split("_")[0] for name in shelf}
    others = {name.split("_")[0] for n, (other, _) in SHELVES.items() if n != number
              for name in other if REPEATED.get(name.split("_")[0]) != {n, number}}
    assert len(shelf) == filings and len(tickers) == companies and not tickers & others
    assert {name.split("_")[1] for name in shelf} == forms
    assert all(len(commit) == 40 for _, commit, _ in shelf.values())
    assert out.name == f"unseen-shelf{number}"


@pytest.mark.parametrize("number", [5, 6, 8, 10, 11, 12, 13, 14, 15])
def test_a_later_held_out_set_is_complete_split_and_on_its_shelf(number) -> None:
    """benchmarks/data/filings_heldoutN.jsonl (its golds re-checked against the filings by
    benchmarks/filings_heldout_check.py): every kind in both halves, each record on a filing
    of its shelf, golds of the right shape."""
    path = REPO / "benchmarks" / "data" / f"filings_heldout{number}.jsonl"
    records = [json.loads(line) for line in path.read_text("utf-8").splitlines() if line]
    assert_heldout_records(records, 150)
    shelf = {f"{name}.htm" for name in SHELVES[number][0]}
    assert all(set(r.get("doc_ids") or [r["doc_id"]]) <= shelf for r in records)


def test_the_eighth_set_asks_only_the_prose_of_a_cover_less_exhibit_document() -> None:
    """Clorox's Exhibit 99.1 defines none of its facts' contexts (they are in the primary
    document, which the shelf lacks): no gold there can rest on a tagged fact."""
    path = REPO / "benchmarks" / "data" / "filings_heldout8.jsonl"
    records = [json.loads(line) for line in path.read_text("utf-8").splitlines() if line]
    exhibits = {f"{name}.htm" for name in EXHIBIT_DOCUMENTS}
    on_exhibits = [r for r in records if set(r.get("doc_ids") or [r["doc_id"]]) & exhibits]
    assert on_exhibits and all(r["type"] == "text" and not r["facts"] for r in on_exhibits)


def test_a_filing_stored_as_its_edgar_xbrl_section_is_copied_without_the_sgml_tags() -> None:
    document = b"<?xml version='1.0'?>\n<html>" + _IXBRL + b"</html>"
    assert unwrapped(b"\n<XBRL>\n" + document + b"\n</XBRL>\n") == document
    assert unwrapped(document) == document


def test_the_second_shelf_skips_a_filing_its_mirror_lacks(tmp_path: Path, capsys) -> None:
    out = tmp_path / "shelf2"
    assert unseen_shelf_main(["--set", "2", "--mirrors", str(tmp_path / "none"),
                              "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert printed.count("skipped ") == len(SHELF2) and not list(out.iterdir())
    assert f"0 of {len(SHELF2)} filings in {out}" in printed


def test_the_checker_reads_a_filing_stored_with_a_blank_line_before_its_declaration(
        tmp_path: Path) -> None:
    path = tmp_path / "AEON_10-Q_2023-09-30.htm"
    path.write_bytes(b"\n<?xml version='1.0' encoding='UTF-8'?>\n" + _IXBRL)
    doc = parse(path)
    assert [(e.concept, e.value) for e in doc.numbers] == [("us-gaap:Assets", 1234000000)]
