"""The audit log: one JSON line per answered request, hash-chained, rotated by size.

Each record holds the SHA-256 of the previous record's line (`prev`), so editing, removing
or reordering a line breaks the chain; `verify` names the first record edited or the first
gap. The chain runs on across rotated files (`audit.jsonl.1` is older than `audit.jsonl`).
A chain alone cannot see its own tail (the newest record has no successor to vouch for
it), so after each record the newest one's sequence number and hash are written to a head
file beside the log (`audit.jsonl.head`, replaced atomically): an edit of the newest
record, or records cut off the end, no longer match it. What this does and does not
protect against is in the README's audit section: it is tamper-evidence against someone
who can write the log but not the head (keep the head elsewhere, or copy it off the
machine, to keep that true).

A line is written with one `write` on an O_APPEND descriptor and flushed to disk before the
response ends (fsync, unless `fsync=False`), then the head. A crash can still leave the last line torn (the
process killed inside the write, or the machine losing power): the next start cuts the torn
tail off, keeps it beside the log as `<name>.torn-<time>` and continues the chain from the
last whole line, so a crash never breaks the chain.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

GENESIS = "0" * 64


def line_hash(line: bytes) -> str:
    """The hash the next record carries as `prev`: of the line without its newline."""
    return hashlib.sha256(line.rstrip(b"\n")).hexdigest()


def head_path(path: Path) -> Path:
    """Where the log's head (its newest record's seq and hash) is kept."""
    return path.with_name(f"{path.name}.head")


def _read_head(path: Path) -> tuple[int, str] | None:
    try:
        head = json.loads(head_path(path).read_text())
        return int(head["seq"]), str(head["hash"])
    except FileNotFoundError:
        return None
    except (ValueError, KeyError, TypeError):
        return -1, "unreadable"


def _write_head(path: Path, seq: int, digest: str, fsync: bool) -> None:
    """Replace the head atomically: a reader sees the old one or the new one, never half."""
    target = head_path(path)
    tmp = target.with_name(target.name + ".tmp")
    with open(tmp, "w") as f:
        f.write(json.dumps({"seq": seq, "hash": digest}))
        f.flush()
        if fsync:
            os.fsync(f.fileno())
    os.replace(tmp, target)


def key_id(key: bytes | None) -> str:
    """Who asked, without the key: a short hash of it ("anonymous" when none is asked)."""
    return "anonymous" if key is None else "key-" + hashlib.sha256(key).hexdigest()[:12]


def _last_line(path: Path) -> bytes | None:
    """The last whole line of `path`, read from the end (logs may be large)."""
    with open(path, "rb") as f:
        end = f.seek(0, os.SEEK_END)
        pos, tail = end, b""
        while pos > 0:
            step = min(65536, pos)
            pos -= step
            f.seek(pos)
            tail = f.read(step) + tail
            body = tail.rstrip(b"\n")
            if b"\n" in body or pos == 0:
                return body.rsplit(b"\n", 1)[-1] if body else None
    return None


def _cut_torn_tail(path: Path) -> None:
    """Truncate `path` after its last newline; keep what was cut beside it."""
    with open(path, "rb+") as f:
        size = f.seek(0, os.SEEK_END)
        if size == 0:
            return
        f.seek(size - 1)
        if f.read(1) == b"\n":
            return
        pos = size
        while pos > 0:
            step = min(65536, pos)
            f.seek(pos - step)
            chunk = f.read(step)
            cut = chunk.rfind(b"\n")
            if cut >= 0:
                pos = pos - step + cut + 1
                break
            pos -= step
        f.seek(pos)
        torn = f.read()
        Path(f"{path}.torn-{time.strftime('%Y%m%dT%H%M%S')}").write_bytes(torn)
        f.truncate(pos)
        f.flush()
        os.fsync(f.fileno())


class AuditLog:
    """Appends hash-chained records to `path`; thread-safe."""

    def __init__(self, path: str | Path, max_bytes: int = 100 << 20, backups: int = 10,
                 fsync: bool = True) -> None:
        if max_bytes < 4096:
            raise ValueError(f"audit_log_max_bytes: at least 4096, got {max_bytes}")
        self.path, self.max_bytes, self.backups, self.fsync = Path(path), max_bytes, backups, fsync
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self.prev, self.seq = GENESIS, 0
        self._recover()
        self._check_head()
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o640)

    def _recover(self) -> None:
        for candidate in (self.path, self._rotated(1)):
            if candidate.is_file() and candidate.stat().st_size:
                if candidate == self.path:
                    _cut_torn_tail(candidate)
                last = _last_line(candidate)
                if last:
                    self.prev = line_hash(last)
                    self.seq = int(json.loads(last)["seq"]) + 1
                    return

    def _check_head(self) -> None:
        """The log's tail against its head: a record the head does not know is a crash
        between the two writes (the head is brought up to date); a log that ends before
        the head, or whose newest record does not hash to it, was cut or edited, and
        appending to it would hide that, so the server does not start on it."""
        head = _read_head(self.path)
        newest = self.seq - 1
        if head is not None and head != (newest, self.prev) and head[0] != newest - 1:
            raise ValueError(
                f"audit_log: {self.path} does not match its head {head_path(self.path)} (the "
                f"log ends at record {newest}, the head names record {head[0]}): records were "
                f"removed or edited; run `finrag audit verify {self.path}`, keep both files "
                "as evidence and start on a new audit_log path")
        if self.seq and head != (newest, self.prev):
            _write_head(self.path, newest, self.prev, self.fsync)

    def _rotated(self, n: int) -> Path:
        return self.path.with_name(f"{self.path.name}.{n}")

    def _rotate(self) -> None:
        os.close(self._fd)
        for n in range(self.backups - 1, 0, -1):
            if self._rotated(n).exists():
                os.replace(self._rotated(n), self._rotated(n + 1))
        os.replace(self.path, self._rotated(1))
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o640)

    def append(self, record: dict[str, Any]) -> str:
        """Write one record; returns its hash once it is on disk."""
        with self._lock:
            body = {"seq": self.seq, "prev": self.prev, **record}
            line = json.dumps(body, ensure_ascii=False, sort_keys=True, default=str,
                              separators=(",", ":")).encode()
            if os.fstat(self._fd).st_size + len(line) + 1 > self.max_bytes and self.seq:
                self._rotate()
            os.write(self._fd, line + b"\n")
            if self.fsync:
                os.fsync(self._fd)
            self.prev, self.seq = line_hash(line), self.seq + 1
            _write_head(self.path, self.seq - 1, self.prev, self.fsync)
            return self.prev

    def close(self) -> None:
        with self._lock:
            os.close(self._fd)


@dataclass(frozen=True)
class VerifyResult:
    ok: bool
    records: int
    message: str


def _files(path: Path) -> list[Path]:
    """The log and its rotated files, oldest first."""
    rotated = sorted((p for p in path.parent.glob(f"{path.name}.*") if p.suffix[1:].isdigit()),
                     key=lambda p: -int(p.suffix[1:]))
    return [*rotated, path] if path.exists() else rotated


def _lines(files: list[Path]) -> Iterator[tuple[Path, int, bytes, bool]]:
    for f in files:
        with open(f, "rb") as fh:
            for n, line in enumerate(fh, 1):
                yield f, n, line, line.endswith(b"\n")


def verify(path: str | Path) -> VerifyResult:
    """Check the chain over the log and its rotated files, and its tail against the head;
    name the first record edited, removed or out of place."""
    path = Path(path)
    files = _files(path)
    if not files:
        return VerifyResult(False, 0, f"{path}: no such audit log")
    prev, seq, count, last_where, last_prev = None, None, 0, "", None
    for f, n, line, whole in _lines(files):
        where = f"{f}:{n}"
        if not whole:
            return VerifyResult(False, count, f"{where}: torn last line (a crash during a "
                                "write; the server cuts it off at its next start)")
        try:
            record = json.loads(line)
            r_prev, r_seq = record["prev"], record["seq"]
        except (ValueError, KeyError, TypeError):
            return VerifyResult(False, count, f"{where}: not an audit record")
        # The oldest kept record may follow records rotated away; only the first ever
        # (seq 0) must start the chain.
        if prev is None:
            if r_seq == 0 and r_prev != GENESIS:
                return VerifyResult(False, count, f"{where}: the first record does not start "
                                    "the chain")
        elif r_seq != seq + 1:
            gone = f"record {seq + 1} removed" if r_seq == seq + 2 else \
                f"records {seq + 1} to {r_seq - 1} removed" if r_seq > seq else "out of order"
            return VerifyResult(False, count, f"{where}: sequence {r_seq} after {seq} ({gone})")
        elif r_prev != prev:
            return VerifyResult(False, count - 1, f"{last_where}: record {seq} was edited (its "
                                f"hash is not the prev of the record after it, {where})")
        prev, seq, count, last_where, last_prev = line_hash(line), r_seq, count + 1, where, r_prev
    return _check_tail(path, (seq, prev, last_prev), count, last_where)


def _check_tail(path: Path, newest: tuple[int | None, str | None, str | None], count: int,
                where: str) -> VerifyResult:
    """The newest record (its seq, hash and prev) against the head file, which no later
    record vouches for."""
    seq, digest, its_prev = newest
    head = _read_head(path)
    if head is None:
        return VerifyResult(False, count, f"{head_path(path)}: no head file: the newest "
                            "records cannot be checked (edited or removed ones would pass)")
    h_seq, h_hash = head
    if seq is None or h_seq > seq:
        return VerifyResult(False, count, f"{path}: the log ends at record {seq}, its head "
                            f"names record {h_seq}: the newest records were removed")
    if h_seq == seq and h_hash != digest:
        return VerifyResult(False, count - 1, f"{where}: record {seq}, the newest, was edited "
                            "(its hash does not match the head)")
    if h_seq < seq - 1 or (h_seq == seq - 1 and h_hash != its_prev):
        return VerifyResult(False, count, f"{path}: the head names record {h_seq}, the log "
                            f"ends at {seq}: records after the head were added or rewritten "
                            "without it (a crash between the two writes leaves one at most)")
    note = "" if h_seq == seq else " (the newest record was written just before a crash, " \
        "ahead of the head; the server's next start updates the head)"
    return VerifyResult(True, count, f"{path}: {count} records, chain intact, head "
                        f"matches{note}")
