"""TAT-QA dev questions, split in two fixed halves by context, and a stratified sample.

Half a / half b: a context (a table with its paragraphs; every question about it) goes to
half a when the first byte of the SHA-256 of its table uid is even. Anything chosen on
half a (a threshold, fusion weights) is reported on half b, whose contexts it never saw.

The sample of `limit` questions is stratified by answer type (each type in proportion,
largest remainders first), and within a type the questions are taken in the order of the
SHA-256 of their uid: the same sample every run, independent of the file's order.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# A clone sits beside shared/ (CI, /work/main); a worktree one level further down.
_CANDIDATES = [base / "shared" / "data" / "tatqa" / "tatqa_dataset_dev.json"
               for base in (ROOT.parent, ROOT.parent.parent)]
DEV = next((p for p in _CANDIDATES if p.is_file()), _CANDIDATES[0])
HALVES = ("a", "b", "all")


@dataclass(frozen=True)
class TatqaQuestion:
    uid: str
    text: str
    context: str           # the table uid: the id of the context's chunks' document
    raw: dict              # the question as in the file (answer, answer_type, scale, ...)
    paragraph_order: dict  # paragraph uid -> its order in the context (as a string)

    @property
    def answer_type(self) -> str:
        return self.raw["answer_type"]

    @property
    def answer_from(self) -> str:
        return self.raw["answer_from"]


def _digest(text: str) -> bytes:
    return hashlib.sha256(text.encode()).digest()


def half_of(context_uid: str) -> str:
    return "a" if _digest(context_uid)[0] % 2 == 0 else "b"


def load_questions(path: str | Path = DEV, half: str = "all") -> list[TatqaQuestion]:
    if half not in HALVES:
        raise ValueError(f"half must be one of {HALVES}, got {half!r}")
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: TAT-QA dev not found (expected the shared copy at {DEV})")
    out = []
    for ctx in json.loads(path.read_text(encoding="utf-8")):
        uid = ctx["table"]["uid"]
        if half != "all" and half_of(uid) != half:
            continue
        orders = {p["uid"]: str(p.get("order", "")) for p in ctx["paragraphs"]}
        out += [TatqaQuestion(q["uid"], q["question"], uid, q, orders) for q in ctx["questions"]]
    return out


def stratified_sample(questions: list[TatqaQuestion], limit: int | None) -> list[TatqaQuestion]:
    """`limit` questions in the answer types' proportions (all of them when None)."""
    if limit is None or limit >= len(questions):
        return list(questions)
    by_type: dict[str, list[TatqaQuestion]] = defaultdict(list)
    for q in questions:
        by_type[q.answer_type].append(q)
    exact = {t: limit * len(qs) / len(questions) for t, qs in by_type.items()}
    take = {t: int(x) for t, x in exact.items()}
    for t in sorted(exact, key=lambda t: (take[t] - exact[t], t))[: limit - sum(take.values())]:
        take[t] += 1
    chosen = []
    for t in sorted(by_type):
        chosen += sorted(by_type[t], key=lambda q: _digest(q.uid))[: take[t]]
    return sorted(chosen, key=lambda q: _digest(q.uid))


TEST_CONTEXTS = ROOT / "benchmarks" / "data" / "tatqa_test_contexts.json"


def corpus_with_test_reports(dev: Path, out_dir: Path) -> Path:
    """A corpus of dev's contexts and test's (`TEST_CONTEXTS`, no questions) in `out_dir`: the
    issue-30 setting, a dev question retrieving among 556 reports. Written, then renamed."""
    contexts = json.loads(Path(dev).read_text(encoding="utf-8"))
    contexts += json.loads(TEST_CONTEXTS.read_text(encoding="utf-8"))
    text = json.dumps(contexts, ensure_ascii=False, separators=(",", ":"))
    out = Path(out_dir) / f"{Path(dev).stem}+test-contexts.json"
    if not out.is_file() or out.read_text(encoding="utf-8") != text:
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_name(out.name + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(out)
    return out


def add_test_reports_option(ap: argparse.ArgumentParser) -> None:
    """`--with-test-reports`, the flag `eval_corpus` takes."""
    ap.add_argument("--with-test-reports", action="store_true",
                    help="index TAT-QA test's 278 reports (no questions) beside dev's")


def eval_corpus(dev: Path, with_test_reports: bool) -> Path:
    """What an eval indexes: `dev`, or with `with_test_reports` dev's and test's reports
    (`corpus_with_test_reports`, kept in engines/ beside the eval indexes)."""
    return corpus_with_test_reports(dev, ROOT / "engines") if with_test_reports else Path(dev)
