"""The intent routing policy (no model): margins, the lexical finance prior, label choice."""

from __future__ import annotations

import pytest

from pipeline.intent_labels import DEFAULT_LABELS
from pipeline.rag.finance_cues import has_finance_cue
from pipeline.rag.routing import RoutingPolicy

POLICY = RoutingPolicy.for_labels(DEFAULT_LABELS, margin=1.0)


def s(finance: float, small: float, out: float) -> dict[str, float]:
    return {"finance_question": finance, "small_talk": small, "out_of_scope": out}


@pytest.mark.parametrize("question", [
    "What was the revenue in 2019?", "How did operating costs change?", "What is the 5% rate?",
    "What does the table show?", "What were the unaudited figures?", "Total dividends paid?",
    "What was the objective of the instruments?", "What are Original Equipment Manufacturers?",
    "Where is the performance-based award classification defined?",
    "What do concentrations indicate?", "What does order intake represent?",
    "When did the Court of Appeals deny the plaintiff's request?", "What are Scope 2 emissions?",
])
def test_finance_cues(question):
    assert has_finance_cue(question)


@pytest.mark.parametrize("question", ["hello there", "Write a poem about the sea",
                                      "Who painted the ceiling of the chapel?"])
def test_no_finance_cue(question):
    assert not has_finance_cue(question)


@pytest.mark.parametrize("question", [
    "What is the capital of Spain?", "What's the capital city of France?", "Capitals of Europe?",
    "Which capital has the most museums?", "What is the capital's population?",
])
def test_a_word_of_two_senses_is_no_cue_in_its_other_sense(question):
    """"capital" alone sent the settings' own out-of-scope example to retrieval."""
    assert not has_finance_cue(question)


@pytest.mark.parametrize("question", [
    "What does working capital consist of?", "How IMFT's capital requirements were determined?",
    "What do capital leases reflect?", "What was the average invested capital?",
    "What are the major capital investments?", "What is capital expenditure?",
    "Why were the costs capitalized?",
])
def test_a_word_of_two_senses_is_a_cue_in_its_finance_sense(question):
    assert has_finance_cue(question)


def test_labels_that_retrieve():
    assert POLICY.retrieve == {"finance_question"}


def test_with_a_cue_only_a_confident_lead_sends_away():
    q = "What was the revenue in 2019?"
    assert POLICY.lead(s(-1.0, -0.2, -0.5)) == pytest.approx(0.8)
    assert POLICY.decide(s(-1.0, -0.2, -0.5), q) == "finance_question"  # lead 0.8 < 1.0
    assert POLICY.decide(s(-2.0, -0.9, -0.5), q) == "out_of_scope"      # lead 1.5
    assert POLICY.decide(s(-2.0, -0.5, -0.9), q) == "small_talk"


def test_without_a_cue_only_a_confident_lead_retrieves():
    q = "hello there"
    assert POLICY.decide(s(-0.5, -1.0, -1.2), q) == "small_talk"        # finance ahead by 0.5
    assert POLICY.decide(s(-0.5, -1.7, -1.6), q) == "finance_question"  # ahead by 1.1


def test_margin_zero_is_the_best_score():
    policy = RoutingPolicy.for_labels(DEFAULT_LABELS, margin=0.0)
    for q in ("What was the revenue in 2019?", "hello there"):
        assert policy.decide(s(-0.5, -0.4, -0.9), q) == "small_talk"
        assert policy.decide(s(-0.3, -0.4, -0.9), q) == "finance_question"


def test_cues_off_uses_the_margin_alone():
    policy = RoutingPolicy.for_labels(DEFAULT_LABELS, margin=1.0, use_cues=False)
    assert policy.decide(s(-0.5, -1.0, -1.2), "hello there") == "finance_question"


def test_bad_policies():
    with pytest.raises(ValueError, match="margin"):
        RoutingPolicy(frozenset({"finance_question"}), margin=-1)
    with pytest.raises(ValueError, match="retrieve"):
        RoutingPolicy(frozenset(), margin=1)
