"""The audit log: hash chain, tamper detection, rotation, and recovery after a kill."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pipeline.server.observability.audit import AuditLog, key_id, verify


def _write(path: Path, n: int, **kw) -> AuditLog:
    log = AuditLog(path, **kw)
    for i in range(n):
        log.append({"request_id": f"r{i}", "question": f"q{i}", "answer": "a" * (i % 7)})
    return log


def test_chain_verifies_and_each_record_points_at_the_line_before(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    _write(path, 5, fsync=False).close()
    lines = path.read_bytes().splitlines()
    assert [json.loads(x)["seq"] for x in lines] == [0, 1, 2, 3, 4]
    result = verify(path)
    assert result.ok and result.records == 5, result.message


@pytest.mark.parametrize("tamper", ["edit", "remove", "swap"])
def test_tampering_names_the_first_bad_line(tmp_path: Path, tamper: str) -> None:
    path = tmp_path / "audit.jsonl"
    _write(path, 6, fsync=False).close()
    lines = path.read_bytes().splitlines(keepends=True)
    if tamper == "edit":
        lines[2] = lines[2].replace(b'"q2"', b'"q2 edited"')
        bad = 3  # the edited line itself, not the one after it
    elif tamper == "remove":
        del lines[3]
        bad = 4
    else:
        lines[1], lines[2] = lines[2], lines[1]
        bad = 2
    path.write_bytes(b"".join(lines))
    result = verify(path)
    assert not result.ok
    assert f"{path}:{bad}:" in result.message, result.message


@pytest.mark.parametrize(("tamper", "words"), [
    ("edit newest", "record 5, the newest, was edited"),
    ("remove newest", "the log ends at record 4, its head names record 5"),
    ("cut three", "the log ends at record 2, its head names record 5"),
    ("remove head", "no head file"),
])
def test_the_newest_records_are_checked_against_the_head(tmp_path: Path, tamper: str,
                                                         words: str) -> None:
    path = tmp_path / "audit.jsonl"
    _write(path, 6, fsync=False).close()
    lines = path.read_bytes().splitlines(keepends=True)
    if tamper == "edit newest":
        lines[5] = lines[5].replace(b'"q5"', b'"q6"')
    elif tamper == "remove newest":
        del lines[5]
    elif tamper == "cut three":
        del lines[3:]
    else:
        (tmp_path / "audit.jsonl.head").unlink()
    path.write_bytes(b"".join(lines))
    result = verify(path)
    assert not result.ok and words in result.message, result.message
    if tamper == "edit newest":
        assert f"{path}:6:" in result.message


def test_a_record_written_just_before_a_crash_ahead_of_the_head_verifies(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    _write(path, 3, fsync=False).close()
    head = (tmp_path / "audit.jsonl.head").read_text()
    _write(path, 1, fsync=False).close()  # record 3
    (tmp_path / "audit.jsonl.head").write_text(head)  # as if killed before the head's write
    result = verify(path)
    assert result.ok and result.records == 4, result.message
    AuditLog(path, fsync=False).close()  # the next start brings the head up to date
    assert "crash" not in verify(path).message


def test_the_server_does_not_append_to_a_log_cut_behind_its_head(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    _write(path, 4, fsync=False).close()
    path.write_bytes(b"".join(path.read_bytes().splitlines(keepends=True)[:2]))
    with pytest.raises(ValueError, match="does not match its head"):
        AuditLog(path, fsync=False)
    assert "its head names record 3" in verify(path).message


def test_rotation_keeps_one_chain_across_files(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    _write(path, 60, max_bytes=4096, backups=50, fsync=False).close()
    rotated = sorted(tmp_path.glob("audit.jsonl.*"))
    assert rotated, "nothing rotated"
    assert all(p.stat().st_size <= 4096 for p in [path, *rotated])
    result = verify(path)
    assert result.ok and result.records == 60, result.message
    # A reopened log goes on with the next sequence number and the same chain.
    _write(path, 3, max_bytes=4096, backups=50, fsync=False).close()
    assert verify(path).records == 63


def test_a_torn_last_line_is_cut_off_at_the_next_start(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    _write(path, 4, fsync=False).close()
    with open(path, "ab") as f:  # what a crash inside a write leaves
        f.write(b'{"seq":4,"prev":"abc","question":"half a rec')
    assert "torn" in verify(path).message
    log = AuditLog(path, fsync=False)
    log.append({"request_id": "after-crash"})
    log.close()
    result = verify(path)
    assert result.ok and result.records == 5, result.message
    assert list(tmp_path.glob("audit.jsonl.torn-*")), "the torn tail was not kept"


WRITER = textwrap.dedent("""
    import sys
    from pipeline.server.observability.audit import AuditLog
    log = AuditLog(sys.argv[1])
    i = 0
    while True:
        log.append({"request_id": f"r{i}", "answer": "x" * 20000})
        i += 1
        if i == 20:
            print("ready", flush=True)
""")


def test_killed_writer_never_breaks_the_chain(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    for _ in range(3):  # kill it three times at whatever point the writes have reached
        proc = subprocess.Popen([sys.executable, "-c", WRITER, str(path)],
                                stdout=subprocess.PIPE, text=True)
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        log = AuditLog(path)  # the next start repairs a torn tail, if any
        log.append({"request_id": "restart"})
        log.close()
        result = verify(path)
        assert result.ok, result.message
    assert verify(path).records >= 3 * 21


def test_key_id_never_holds_the_key() -> None:
    key = b"a-very-secret-api-key-0123456789"
    kid = key_id(key)
    assert key.decode() not in kid and kid.startswith("key-") and kid == key_id(key)
    assert key_id(None) == "anonymous"
