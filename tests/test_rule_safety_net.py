"""The answer rules' one safety net, on the real server: a rule that raises is logged with
the request's id, counted on /metrics and answered with no number; under `strict_rules`
(what the tests run with) the same bug fails the request instead.

The bug is injected: `answer_from_table`, the rule short_answer_for runs on each retrieved
table, is replaced by one that raises (no real input is known to break a rule, and one that
did would be fixed, not kept as a fixture)."""

from __future__ import annotations

import logging
from typing import Any

import httpx
import loopback
import pytest
from live_server import metric_values
from test_ask_computed import QUESTION

from pipeline.rag.answers import short_answer

RULE_ERRORS = "finrag:answer_rule_errors_total"
ASK_TIMEOUT_S = 300


class RuleBug(Exception):
    """What the injected rule raises."""


@pytest.fixture
def broken_rule(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """answer_from_table raising on every table; the list holds the questions it got."""
    calls: list[Any] = []

    def raises(table: Any, question: Any, refusals: Any = None) -> None:
        calls.append(question)
        raise RuleBug("injected rule bug")

    monkeypatch.setattr(short_answer, "answer_from_table", raises)
    return calls


def rule_errors(base: str) -> float:
    return sum(metric_values(loopback.get(f"{base}/metrics", timeout=30).text, RULE_ERRORS))


def ask(base: str, request_id: str) -> httpx.Response:
    return loopback.post(f"{base}/ask", json={"question": QUESTION},
                         headers={"X-Request-Id": request_id}, timeout=ASK_TIMEOUT_S)


def test_a_rule_bug_is_logged_counted_and_answered_with_no_number(
        ask_server, broken_rule, monkeypatch, caplog) -> None:
    base, app = ask_server
    monkeypatch.setattr(app.state.pipeline.settings, "strict_rules", False)
    before = rule_errors(base)
    with caplog.at_level(logging.ERROR, logger="pipeline.rag.pipeline"):
        r = ask(base, "rule-bug-net")
    assert r.status_code == 200, r.text
    body = r.json()
    assert broken_rule, "the question never reached the table rules"
    # The table answers -12.6 (test_ask_computed.py); with its rule broken, no number.
    assert body["short_answer"] is None and body["citations"] == []
    assert rule_errors(base) == before + 1
    logged = [rec for rec in caplog.records if "rule-bug-net" in rec.getMessage()]
    assert len(logged) == 1 and logged[0].exc_info[0] is RuleBug
    assert QUESTION in logged[0].getMessage()


def test_under_strict_rules_a_rule_bug_fails_the_request(ask_server, broken_rule) -> None:
    base, app = ask_server
    assert app.state.pipeline.settings.strict_rules  # as every test server runs
    before = rule_errors(base)
    r = ask(base, "rule-bug-strict")
    assert r.status_code == 500
    assert "RuleBug" in r.json()["detail"] and "rule-bug-strict" in r.json()["detail"]
    assert broken_rule
    assert rule_errors(base) == before
