"""The helpers the benchmark scripts share: the command line each prints last
(benchmarks/reproduce.py), and files read out of a bare git mirror and written onto a shelf
whole (benchmarks/mirror_files.py), here on a mirror made in a temporary folder."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.paths import REPO

sys.path.insert(0, str(REPO / "benchmarks"))
from mirror_files import LFS_POINTER, mirror_blob, write_whole  # noqa: E402
from reproduce import command_line, print_command  # noqa: E402


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
    git("clone", "-q", "--bare", str(work), str(tmp_path / "repo"), cwd=tmp_path)
    return tmp_path / "repo"


def test_a_mirror_gives_a_file_and_nothing_for_a_pointer_or_a_missing_one(mirror: Path) -> None:
    assert mirror_blob(mirror, "a.pdf") == b"%PDF-1.7 the file itself"
    assert mirror_blob(mirror, "b.pdf") is None
    assert mirror_blob(mirror, "c.pdf") is None
    assert mirror_blob(mirror.parent / "no-such-mirror", "a.pdf") is None


def test_a_file_is_written_whole_and_leaves_no_partial_beside_it(tmp_path: Path) -> None:
    target = tmp_path / "AES_2020_10K.pdf"
    write_whole(target, b"first")
    write_whole(target, b"second")
    assert target.read_bytes() == b"second"
    assert [p.name for p in tmp_path.iterdir()] == [target.name]
