"""The rivals of an unscoped miss (`benchmarks/unscoped_misses.py`): the other reports whose
table answers the question at least as well as the gold report's, with another answer."""

from __future__ import annotations

import sys

from paths import REPO

from retriever_trt.documents.tables import parse_table

sys.path.insert(0, str(REPO / "benchmarks"))

from tatqa_split import TatqaQuestion  # noqa: E402
from unscoped_misses import _rivals  # noqa: E402

GOLD = [["(in thousands)", "2019", "2018"],
        ["Raw material", "222", "191"],
        ["Finished goods", "668", "716"]]
OTHER_FIGURES = [["(in thousands)", "2019", "2018"],
                 ["Raw materials", "$3,445", "$2,969"],
                 ["Finished goods", "6,356", "6,253"]]
SAME_FIGURES = [["(in thousands)", "2019", "2018"],
                ["Finished goods", "668", "716"]]
NO_SUCH_ROW = [["(in thousands)", "2019", "2018"],
               ["Raw materials", "1", "2"]]
WEAKER_ROW = [["(in thousands)", "2019", "2018"],
              ["Goods", "5", "6"]]


def _question(text: str, answer: list[str]) -> TatqaQuestion:
    raw = {"question": text, "answer": answer, "answer_type": "multi-span", "scale": "thousand",
           "answer_from": "table"}
    return TatqaQuestion("q", text, "gold", raw, {})


def test_a_report_that_fits_as_well_with_other_figures_is_a_rival() -> None:
    tables = {name: parse_table(rows) for name, rows in (
        ("gold", GOLD), ("other", OTHER_FIGURES), ("same", SAME_FIGURES),
        ("none", NO_SUCH_ROW), ("weaker", WEAKER_ROW))}
    q = _question("What are the respective values of finished goods in 2018 and 2019?",
                  ["716", "668"])
    # "same" answers alike (no rival), "none" not at all, "weaker" names less of the row
    assert _rivals(q, tables) == 1
    del tables["other"]
    assert _rivals(q, tables) == 0


def test_without_a_table_answer_of_its_own_there_is_no_count() -> None:
    tables = {"gold": parse_table(NO_SUCH_ROW), "other": parse_table(OTHER_FIGURES)}
    q = _question("What are the respective values of finished goods in 2018 and 2019?",
                  ["716", "668"])
    assert _rivals(q, tables) is None
