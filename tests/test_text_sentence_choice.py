"""Which sentence the text rules answer from: the question's words as a sentence inflects
them, and a sentence that continues the one naming what was asked. The passages are real
10-Q sentences (Chevron's and UPS's second quarter of 2023), as the filings print them."""

from __future__ import annotations

from types import SimpleNamespace

from pipeline.rag.answers.operation import Operation
from pipeline.rag.answers.query import parse_query
from pipeline.rag.answers.question import operation
from pipeline.rag.answers.text.text_answer import Paragraph, answer_from_text

BRENT = ("The average realization per barrel for U.S. crude oil and natural gas liquids in "
         "second quarter 2023 was $56, compared with $89 a year earlier. The average sales "
         "price for crude oil and natural gas liquids in second quarter 2023 was $68 per "
         "barrel, down from $102 a year earlier. Refinery crude oil input in second quarter "
         "2023 increased 9 percent to 962,000 barrels per day from the second quarter of "
         "2022. During the second quarter of 2023, Brent averaged $78 per barrel and ended "
         "July at about $86. The majority of the company's equity crude production is priced "
         "based on the Brent and WTI benchmarks.")
PILOTS = ("We have approximately 3,500 pilots who are employed under a collective bargaining "
          "agreement with the Independent Pilots Association (\"IPA\"). This collective "
          "bargaining agreement becomes amendable September 1, 2025. We have approximately "
          "1,800 airline mechanics who are covered by a collective bargaining agreement with "
          "Teamsters Local 2727 which becomes amendable November 1, 2023.")


def ask(question: str, text: str):
    chunk = SimpleNamespace(chunk_id="d1#0", doc_id="d1", text=text)
    return answer_from_text(parse_query(question), [Paragraph("d1", (chunk,), text)])


def test_a_word_the_sentence_inflects_is_the_question_s_word() -> None:
    # "averaged" is the question's "average": without it a sentence saying "average" and
    # "crude" (the rarer "Brent" outweighs "crude" only with the verb) was the best
    got = ask("What did Brent crude average per barrel in the second quarter of 2023?", BRENT)
    assert got.short_answer == "78"
    assert got.sentence.startswith("During the second quarter of 2023, Brent")


def test_average_as_a_verb_asks_a_stated_figure_not_a_mean() -> None:
    assert operation("What did Brent crude average per barrel in the second quarter of "
                     "2023?").operation is Operation.LOOKUP
    assert operation("How much did daily production average in 2023?").operation \
        is Operation.LOOKUP
    # the noun keeps the mean of the periods named
    assert operation("What was the average revenue in 2019 and 2018?").operation \
        is Operation.AVERAGE
    assert operation("What did the average price change by in 2019?").operation \
        is not Operation.LOOKUP


def test_the_sentence_continuing_the_one_about_the_question_gives_its_date() -> None:
    # The first sentence names the pilots and their union but no date; the next, "This ...
    # agreement", gives it. The mechanics' agreement, further on, has another date.
    got = ask("When does UPS's collective bargaining agreement with its pilots (Independent "
              "Pilots Association) become amendable?", PILOTS)
    assert got.short_answer == "September 1, 2025"
    assert got.kind == "date"


def test_a_bullet_ends_a_sentence():
    from pipeline.rag.answers.text.text_answer import split_sentences
    assert split_sentences("OVERVIEW The following is a summary: • The Company reported net "
                           "sales of $11.4 billion, down 27 percent. • Local price decreased 18 "
                           "percent compared with the second quarter of 2022.") == [
        "OVERVIEW The following is a summary:",
        "The Company reported net sales of $11.4 billion, down 27 percent.",
        "Local price decreased 18 percent compared with the second quarter of 2022."]


def test_the_unit_asked_is_no_anchor_for_the_amount_nearest_the_question_s_words():
    # "percent" follows every percentage: the amount is the one beside "local price"
    got = ask("By how much did local price fall in Q2 2023 versus Q2 2022 (percent)?",
              "Net sales in the second quarter of 2023 were $11.4 billion, down 27 percent from "
              "$15.7 billion in the second quarter of 2022, with local price down 18 percent, "
              "volume down 8 percent and currency down 1 percent.")
    assert (got.short_answer, got.scale) == ("18", "percent")
