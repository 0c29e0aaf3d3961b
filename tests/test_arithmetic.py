"""One percent change and one rounding for every answer rule (pipeline/rag/answers/arithmetic.py):
a change from a negative base keeps the sign of its direction, and a tie rounds away from
zero, whether the answer is computed from table cells or from tagged facts."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest

from pipeline.rag.answers.arithmetic import NoAnswer, compute, percent_change, plain, rounded
from pipeline.rag.answers.filings.fact_answer import _finish
from pipeline.rag.answers.filings.fact_targets import Target
from pipeline.rag.answers.operation import Operation
from pipeline.rag.answers.query import parse_query
from pipeline.rag.answers.vocabulary.metrics import Scale


def test_a_change_from_a_negative_base_has_the_sign_of_its_direction():
    # a loss narrowing from -100 to -50 improved: +50%, not -50%
    assert percent_change(Decimal(-100), Decimal(-50)) == 50
    assert percent_change(Decimal(-100), Decimal(-150)) == -50
    assert percent_change(Decimal(200), Decimal(150)) == -25
    with pytest.raises(NoAnswer):
        percent_change(Decimal(0), Decimal(5))


def test_ties_round_half_up_away_from_zero():
    assert rounded(Decimal("2.345"), 2) == Decimal("2.35")
    assert rounded(Decimal("-2.345"), 2) == Decimal("-2.35")
    assert rounded(Decimal("0.125"), 2) == Decimal("0.13")  # half-even would give 0.12
    assert plain(Decimal("0.125")) == "0.13"


def test_tables_and_facts_compute_a_change_alike():
    table = compute(Operation.PERCENT_CHANGE, [Decimal(-168), Decimal(-238)])
    query = parse_query("By what percentage did the loss change from 2023 to 2024? "
                        "Answer to two decimals.")
    ts = [Target(date(2023, 12, 31), 12), Target(date(2024, 12, 31), 12)]
    facts = _finish(query, [Decimal(-168), Decimal(-238)], ts, Scale.AMOUNT, [], False, [])
    assert plain(table.value) == f"{facts.value:f}" == "-41.67"
    # .5 ties: 1.0125% from both paths
    tie = compute(Operation.PERCENT_CHANGE, [Decimal(800), Decimal("808.1")])
    assert plain(tie.value) == "1.01"
    facts = _finish(query, [Decimal(800), Decimal("808.1")], ts, Scale.AMOUNT, [], False, [])
    assert f"{facts.value:f}" == plain(tie.value)
