"""The distractor reports of the 556-report TAT-QA setting (`answer_eval.py
--with-test-reports`): TAT-QA test's contexts, without questions, beside dev's."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from paths import REPO, TATQA

from retriever_trt.indexing.ingest import load_corpus

sys.path.insert(0, str(REPO / "benchmarks"))

from tatqa_split import TEST_CONTEXTS, corpus_with_test_reports  # noqa: E402


def test_test_contexts_hold_reports_and_no_questions() -> None:
    contexts = json.loads(TEST_CONTEXTS.read_text(encoding="utf-8"))
    assert len(contexts) == 278
    assert all(set(ctx) == {"table", "paragraphs"} for ctx in contexts)
    assert len({ctx["table"]["uid"] for ctx in contexts}) == 278


def test_combined_corpus_indexes_every_report_once(tmp_path: Path) -> None:
    dev = tmp_path / "dev.json"
    dev.write_text(json.dumps(json.loads(TATQA.read_text(encoding="utf-8"))[:5]))
    out = corpus_with_test_reports(dev, tmp_path / "cache")
    again = corpus_with_test_reports(dev, tmp_path / "cache")
    assert again == out and not list(out.parent.glob("*.tmp"))
    store = load_corpus(out)
    reports = {c.doc_id for c in store.chunks}
    dev_ids = {ctx["table"]["uid"] for ctx in json.loads(dev.read_text())}
    assert dev_ids <= reports
    assert len(reports) == 5 + 278
