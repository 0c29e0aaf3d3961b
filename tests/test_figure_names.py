"""What names a filing's figure beyond its concept's name: initials a question writes for a
measure the filing spells out, a measure's row printed across a segment table (GM's
EBIT-adjusted, a concept whose name is one unsplit word), a place's figure in a note on
concentration."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from pipeline.rag.answers.filings.fact_labels import FactLabels
from pipeline.rag.answers.filings.initialisms import spelled_initials
from retriever_trt.documents.model import Fact

_EBIT = "gm:Earningslossbeforeautomotiveinterestandtaxesadjusted"
_ROW = "Earnings (loss) before interest and taxes-adjusted"
_SEGMENTS = ("GMNA", "GMI", "Cruise")


def _labels() -> FactLabels:
    facts = [Fact(f"f{i}", _EBIT, Decimal(v), "USD", date(2023, 12, 31), date(2023, 1, 1),
                  dimensions=(("us-gaap:StatementBusinessSegmentsAxis", f"gm:{s}Member"),))
             for i, (s, v) in enumerate(zip(_SEGMENTS, ("12306e6", "1402e6", "-2695e6"),
                                            strict=True))]
    column = {f.fact_id: s for f, s in zip(facts, _SEGMENTS, strict=True)}
    return FactLabels.of(facts, lambda f: (_ROW, column[f.fact_id]))


def test_a_row_printed_across_a_segment_table_names_its_concept():
    """GM tags its segments' EBIT-adjusted as one unsplit word and prints it only across its
    segment table: that row named no segment (it is printed for all three) and nothing
    else, so no question's words could reach the concept."""
    labels = _labels()
    assert {"earning", "interest", "adjusted"} <= labels.concept_words[_EBIT]
    assert not any("interest" in words for words in labels.members.values())
    assert _ROW in labels.texts


def test_initials_in_capitals_stand_for_the_label_words_they_spell():
    labels = _labels()

    def spelled(words: set[str], text: str) -> frozenset[str]:
        return spelled_initials(frozenset(words), text, labels.texts, labels.all_words())

    assert spelled({"ebit", "adjusted"}, "GMNA EBIT-adjusted in 2023?") == \
        {"earning", "before", "interest", "taxe", "adjusted"}
    # written in lower case, or spelling no run of a label's words: left as written
    assert spelled({"ebit", "adjusted"}, "gmna ebit-adjusted in 2023?") == {"ebit", "adjusted"}
    assert spelled({"roic"}, "What was ROIC in 2023?") == {"roic"}
    # a word a label holds is that word, whatever initials it could also be
    assert spelled({"gmna"}, "GMNA revenue") == {"gmna"}


def test_a_places_figure_in_the_concentration_note_is_the_places():
    """Palantir tags its 2022 U.S. revenue only with the geographic concentration member
    beside country:US: "U.S. revenue for 2022" had no number."""
    from pipeline.rag.answers.filings.fact_labels import qualifiers

    us = ("srt:StatementGeographicalAxis", "country:US")
    fact = Fact("f", "us-gaap:Revenues", Decimal("1161416e3"), "USD", date(2022, 12, 31),
                date(2022, 1, 1), dimensions=(("us-gaap:ConcentrationRiskByTypeAxis",
                                               "us-gaap:GeographicConcentrationRiskMember"), us))
    assert qualifiers(fact) == {us}
