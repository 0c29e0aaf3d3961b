"""Text answers as spans (issue 47, item 7): a count or a place the question asks for, cut
from a sentence about the asked noun and year, never from a sentence about something else;
on real filings (tests/data/filings) and report sentences as written."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from paths import FILINGS
from test_question_words import _rules_only_pipeline
from test_text_answer import ask

from pipeline.rag.answers.query import parse_query
from pipeline.rag.answers.text.text_answer import answer_from_text, document_paragraphs
from retriever_trt.indexing.ingest import ingest

SHELF = ("aapl-10-k-2024-11-01.html", "ibm-10-k-2025-02-25.html", "nvda-10-k-2025-02-26.html")


@pytest.fixture(scope="module")
def shelf(tmp_path_factory):
    folder = tmp_path_factory.mktemp("shelf")
    for name in SHELF:
        (folder / name).symlink_to(FILINGS / name)
    store, _ = ingest(folder)
    pipe = _rules_only_pipeline(store)
    return store, pipe.filings.aliases


def _from_filing(shelf, question: str, doc_id: str):
    store, aliases = shelf
    return answer_from_text(parse_query(question, aliases),
                            document_paragraphs(store.document(doc_id)))


@pytest.mark.parametrize("question, doc_id, short, kind", [
    ("How many full-time equivalent employees did Apple have as of September 28, 2024?",
     SHELF[0], "164000", "count"),
    ("How many employees did NVIDIA have at the end of fiscal year 2025?", SHELF[2], "36000",
     "count"),
    # the figure whose own words restate the question, not the head count before it
    ("How many NVIDIA employees were engaged in research and development at the end of "
     "fiscal year 2025?", SHELF[2], "27100", "count"),
    ("In how many countries did NVIDIA have employees at the end of fiscal year 2025?",
     SHELF[2], "38", "count"),
    ("Where is Apple headquartered?", SHELF[0], "Cupertino, California", "place"),
    ("Where are IBM's corporate headquarters located?", SHELF[1], "Armonk, New York", "place"),
    ("Where is NVIDIA headquartered?", SHELF[2], "Santa Clara, California", "place"),
])
def test_the_count_or_place_asked_not_the_sentence(shelf, question, doc_id, short, kind) -> None:
    got = _from_filing(shelf, question, doc_id)
    assert (got.short_answer, got.kind, got.asked) == (short, kind, kind)


def test_no_figure_from_a_sentence_about_something_else_or_another_year(shelf) -> None:
    # Apple's 10-K states no count of patents: no figure of another sentence stands in.
    got = _from_filing(shelf, "How many patents did Apple hold as of September 28, 2024?",
                       SHELF[0])
    assert got.asked == "count" and got.kind != "count"
    # The head count is stated for 2024, not the year asked: no count, and no sentence
    # stands in for one (/ask's rules give no short answer; the prose may say why).
    question = "How many full-time equivalent employees did Apple have in 2019?"
    got = _from_filing(shelf, question, SHELF[0])
    assert got.asked == "count" and got.kind != "count"
    assert _pipeline_answer(shelf, question).short_answer is None
    assert _pipeline_answer(shelf, question.replace("2019", "2024")).short_answer == "164000"


GE_STAFF = ("At December 31, 2023, Acme Company and consolidated affiliates employed "
            "approximately 125,000 people, of whom approximately 44,000 were employed in the "
            "United States.")


@pytest.mark.parametrize("question, sentence, short", [
    # the figure the year asked follows, not the change or the other year's
    ("How many employees are in the general and administrative labour at Fiscal year 2019?",
     "Our general and administrative labour resources increased by 119 employees, from 1,501 "
     "employees at June 30, 2018 to 1,620 employees at June 30, 2019.", "1620"),
    # the year before the figure places it: fiscal 2024's 12 stores, not the plan's 80
    ("How many new stores did Home Depot open in fiscal 2024?",
     "In fiscal 2023, we initiated a plan to open approximately 80 new stores over a five-year "
     "period to address those opportunities, and in fiscal 2024, we opened 12 new stores.", "12"),
    # "..., respectively" pairs the year asked
    ("How many antidilutive shares were excluded for the year ended September 30, 2019?",
     "There were 268,000 and 108,000 shares for the years ended September 30, 2019 and 2018, "
     "respectively, that were excluded from the above calculation.", "268000"),
    # a percentage in the sentence counts nothing
    ("How many employees were union represented as of December 31, 2024?",
     "Approximately 58,000 employees, which constitute 34% of our total workforce, were union "
     "represented as of December 31, 2024 under collective bargaining agreements.", "58000"),
    # a hedge before "how many", a head count, and people counted by another word
    ("Roughly how many employees did Acme have at the end of 2024?",
     "As of December 31, 2024, Acme had approximately 9,100 full-time employees.", "9100"),
    ("What is Acme's approximate head count?",
     "Acme employed approximately 55,000 people in over 70 countries.", "55000"),
    ("How many people did Acme employ at the end of fiscal 2024?",
     "As of the end of fiscal 2024, we had 30,709 full-time employees.", "30709"),
    # "N of our employees" is some of them; the total follows
    ("What was Acme's employee headcount at year-end 2024?",
     "In 2024, over 13,000 of our employees took advantage of training, and as of December "
     "31, 2024, we employed 125,665 people full-time.", "125665"),
    # "how many ... worked": the counted noun before a verb of working, the part asked
    ("About how many of Acme's staff members worked outside the United States at the end of "
     "2024?", "As of December 31, 2024, Acme had approximately 28,000 staff members in over "
     "50 countries, including approximately 11,000 staff members outside the United States.",
     "11000"),
    # a phrase set off by a comma before "how many" (Palo Alto Networks' 10-K)
    ("On average, how many hours of development did Acme employees complete during fiscal "
     "2025?", "On average, employees completed 36 hours of development during fiscal 2025.",
     "36"),
    # a part stated after the count it is of answers only a question naming the part
    # (General Electric's 10-K)
    ("Approximately how many people did Acme employ at December 31, 2023?", GE_STAFF, "125000"),
    ("Approximately how many people did Acme employ in the United States at December 31, "
     "2023?", GE_STAFF, "44000"),
    # the figure stated after what it counts, as its value (Tesla's 10-K)
    ("Acme's worldwide employee headcount at year-end 2024?",
     "As of December 31, 2024, our employee headcount worldwide was 125,665.", "125665"),
    # "how many stockholders held": the count of stockholders, not of the shares they hold,
    # which the question names too (AMC's 10-Q)
    ("As of June 30, 2024, how many stockholders held Acme Class A shares directly registered "
     "with its transfer agent?", "As of June 30, 2024, approximately 57.5 million shares of "
     "our Class A common stock were directly registered with our transfer agent by 17,160 "
     "stockholders.", "17160"),
])
def test_which_figure_counts_what_was_asked(question, sentence, short) -> None:
    got = ask(question, sentence)
    assert (got.short_answer, got.kind) == (short, "count")


@pytest.mark.parametrize("question", [
    "What was Acme's total workforce at the end of 2024?",
    "How many employees did Acme have at the end of 2024?",
])
def test_employees_doing_something_are_no_head_count(question) -> None:
    """A sentence counting the employees who did something counts some of the staff; only
    one stating the whole ("had", "employed", "a total of") gives the head count."""
    got = ask(question, "In 2024, approximately 14,000 Acme employees leveraged our tuition "
                        "assistance program to pursue degrees.")
    assert got.kind != "count"
    got = ask(question, "As of December 31, 2024, Acme had approximately 172,000 employees.")
    assert (got.short_answer, got.kind) == ("172000", "count")


def test_a_share_of_the_staff_is_no_head_count() -> None:
    got = ask("What was Acme's total workforce at the end of 2024?",
              "Approximately 58,000 employees, which constitute 34% of our total workforce, "
              "were union represented as of December 31, 2024.")
    assert got.kind != "count"  # no figure cut from it as the head count


def test_a_where_question_about_a_statement_line_is_no_place() -> None:
    got = ask("Where are personnel expenses included in the consolidated statement?",
              "Personnel expenses are included in cost of sales and in operating expenses in "
              "the consolidated statement of profit or loss.")
    assert got.asked == "sentence" and got.short_answer.startswith("cost of sales")


def _pipeline_answer(shelf, question: str):
    """/ask's short answer from the rules, BM25's passages within the question's scope."""
    store, _ = shelf
    pipe = _rules_only_pipeline(store)
    query = pipe.filings.parse(question, None)
    scope = pipe.filings.scope(query, None)
    _, ids = store.build_bm25().search([question], pipe.settings.table_top_k,
                                       store.rows_where(scope.filter))
    passages = [SimpleNamespace(doc_id=store[i].doc_id, chunk_id=store[i].chunk_id, score=1.0)
                for i in ids[0] if i >= 0]
    return pipe._short_answer(query, scope, passages, passages)


def test_the_pipeline_gives_the_place_from_the_filing_text(shelf) -> None:
    short = _pipeline_answer(shelf, "Where is Apple headquartered?")
    assert short.short_answer == "Cupertino, California"
    assert "headquarters is located in Cupertino, California" in short.quote


def test_the_city_and_state_of_the_offices_are_the_covers_address(shelf) -> None:
    """Asked for the city and state, the cover's two tagged fields are one address; asked
    for the city alone, the city."""
    short = _pipeline_answer(shelf, "In which city and state are IBM's principal executive "
                                    "offices?")
    assert short.short_answer == "Armonk, New York"
    assert [c["fact"]["concept"] for c in short.citations] == [
        "dei:EntityAddressCityOrTown", "dei:EntityAddressStateOrProvince"]
    short = _pipeline_answer(shelf, "Where are NVIDIA's principal executive offices?")
    assert short.short_answer == "Santa Clara, California"
    short = _pipeline_answer(shelf, "In which city are NVIDIA's principal executive offices?")
    assert short.short_answer == "Santa Clara"


def test_a_count_past_a_share_in_brackets_after_it():
    """GM's "approximately 87,000 (54%) hourly employees": the bracket had ended the
    figure's own words before the noun counted, so no count was cut (the whole sentence was
    the answer)."""
    got = ask("Approximately how many hourly employees did GM have at December 31, 2023?",
              "At December 31, 2023, we employed approximately 87,000 (54%) hourly employees "
              "and approximately 76,000 (46%) salaried employees.")
    assert (got.short_answer, got.kind) == ("87000", "count")


def test_which_country_is_a_country_the_sentence_names_and_the_question_does_not() -> None:
    """"Which country" asks a country's name, not a "City, State"; asked in the plural,
    every one listed; a state's name inside another name ("New Jersey") is no country."""
    got = ask("Which country does Gadget plan to enter with its Widget banner in fiscal 2027?",
              "We announced that we plan to enter Spain with our Widget banner in fiscal 2027.")
    assert (got.short_answer, got.kind.value) == ("Spain", "place")
    got = ask("In which countries does Gadget operate its Widget stores?",
              "Gadget operates its Widget stores in the U.K., Ireland, Germany and Poland.")
    assert got.short_answer == ["U.K.", "Ireland", "Germany", "Poland"]
    got = ask("Which country did Gadget's New Jersey plant export the most to in 2024?",
              "In 2024 the New Jersey plant exported mostly to Mexico.")
    assert got.short_answer == "Mexico"
    # no country in the sentence: no country answers
    got = ask("Which country does Gadget plan to enter in fiscal 2027?",
              "We plan to enter a new market with our Widget banner in fiscal 2027.")
    assert got.kind.value != "place"


def test_a_city_and_state_after_the_word_the() -> None:
    got = ask("Where are Gadget's main operational offices?",
              "Gadget's main operational offices are located in the Minneapolis, Minnesota "
              "metropolitan area.")
    assert got.short_answer == "Minneapolis, Minnesota"


def test_until_when_asks_a_date_and_for_how_long_a_length_of_time() -> None:
    """"Until when ... sufficient liquidity" had been answered with the cash balance (the facts
    claimed it), "For how long did Qiantu grant ..." with the whole sentence."""
    from pipeline.rag.answers.answer_checks import asks_date

    assert asks_date("Until when does Gadget's management believe it has sufficient liquidity?")
    got = ask("Until when does Gadget's management believe it has sufficient liquidity?",
              "Management believes the Company has sufficient liquidity from operating cash "
              "to fund operations until June 2024.")
    assert (got.short_answer, got.kind.value) == ("June 2024", "date")
    got = ask("For how long did Qiantu grant Gadget the exclusive license?",
              "Qiantu granted the Company the exclusive license to sell the vehicles throughout "
              "North America for a period of five years.")
    assert (got.short_answer, got.kind.value) == ("five years", "duration")


def test_to_when_is_the_date_after_to_and_a_quarter_of_a_year_is_a_date() -> None:
    """"To when did the amendment extend the maturity" is the date after "to" ("from June
    2026 to January 2030"); "in the third quarter of 2024" is the date, not its year."""
    got = ask("To when did Gadget's January 2025 amendment extend the maturity of its "
              "revolving credit facility?",
              "The amendment extended the maturity of the facility from June 2026 to January 2030.")
    assert (got.short_answer, got.kind.value) == ("January 2030", "date")
    got = ask("When was the first commercial patient infused with Gizmo?",
              "The first commercial patient was infused with Gizmo in the third quarter of 2024.")
    assert got.short_answer == "third quarter of 2024"


def test_a_date_naming_the_event_dates_no_sentence(tmp_path) -> None:
    """The "January 2025" of "its January 2025 amendment" names the event; the sentence
    answering when it extends to need not say 2025."""
    from pipeline.rag.answers.compose import is_about
    from pipeline.rag.answers.query import parse_query
    from pipeline.rag.answers.short_answer import ShortAnswer

    query = parse_query("To when did Gadget's January 2025 amendment extend the maturity of its "
                        "revolving credit facility?", {"gadget": "gadget"})
    said = ShortAnswer("January 2030", quote="The amendment extended the maturity of the facility "
                                             "from June 2026 to January 2030.")
    assert is_about(said, query)
    in_2025 = parse_query("How many stores did Gadget open in 2025?", {"gadget": "gadget"})
    assert not is_about(ShortAnswer("12", quote="Gadget opened 12 stores in 2024."), in_2025)


def test_where_without_a_city_is_the_country_or_continent_after_a_preposition() -> None:
    """"Where are its hardware products assembled?" had been the sentence: no "City, State"
    in "assembled in the U.S."; a list of regions is no city ("in Asia, Australia"), and a
    place the question names is no answer ("Outside the United States, where ...")."""
    got = ask("Where are all of Gadget's hardware products assembled?",
              "All of our hardware products are assembled in the U.S. by our partners.")
    assert (got.short_answer, got.kind.value) == ("U.S.", "place")
    got = ask("Outside the United States, where are most of Gadget's significant facilities "
              "located?",
              "79 of these facilities are located in the United States and 112 are located "
              "outside the United States, primarily in Europe, and to a lesser extent in Asia, "
              "Australia, Canada and South America.")
    assert got.short_answer == "Europe"
    # where a line sits in the statements asks no place
    assert ask("Where are personnel expenses included?",
               "Personnel expenses are included in the United States segment.").kind.value != "place"


def test_a_number_in_a_name_is_no_count() -> None:
    """"Phase 3" had been the count of people a trial evaluates; a sentence opening with a
    capitalized word still gives its count."""
    got = ask("About how many people with IgAN is Gadget's RAINIER Phase 3 trial evaluating?",
              "We are dosing patients in our global pivotal Phase 3 trial evaluating the drug in "
              "people with IgAN (RAINIER). The trial will enroll approximately 480 people with "
              "IgAN.")
    assert got.short_answer == "480"
    assert ask("How many stores did Gadget have open at year end?",
               "Approximately 1,200 stores were open at year end.").short_answer == "1200"
    # "our top three customers" ranks them (Palantir's 10-Q): no count of customers
    assert ask("How many customers did Gadget have during the period ended June 30, 2023?",
               "Our top three customers together accounted for 17% of our revenue for the six "
               "months ended June 30, 2023.").kind != "count"


def test_names_joined_by_and_are_two_and_several_asked_are_each_one() -> None:
    """"Gilead and Mylan Pharmaceuticals reached an agreement" asked of Gilead is Mylan
    Pharmaceuticals (the run had been the answer); "which three companies" asks each name
    listed, without the sentence's closing period."""
    got = ask("With which company did Gadget settle, in 2018, the patent litigation over the "
              "cobicistat patents?",
              "In 2018, Gadget and Mylan Pharmaceuticals reached an agreement to settle the patent "
              "litigation concerning patents that protect cobicistat.")
    assert (got.short_answer, got.kind.value) == ("Mylan Pharmaceuticals", "name")
    got = ask("Which three companies does Gadget name as its fellow leading global competitors in "
              "joint replacement?",
              "We are one of four leading global competitors for joint replacement; the other "
              "three being Zimmer, Johnson & Johnson MedTech and Smith & Nephew.")
    assert got.short_answer == ["Zimmer", "Johnson & Johnson MedTech", "Smith & Nephew"]


def test_tatqa_lists_names_and_counts_kept() -> None:
    """TAT-QA's half a had lost three answers to this session's rules: the countries asked
    are the list nearest the question's words; a clause's first word before a figure names
    no "Phase 3"; a person named before the role the question restates is the answer."""
    schemes = ("The Group operates defined benefit schemes in Germany, Ghana, India, Ireland, "
               "Italy, the UK, the United States and the Group operates defined benefit indemnity "
               "plans in Greece and Turkey.")
    assert ask("Which countries does the group operate defined benefit indemnity plans in?",
               schemes).short_answer == ["Greece", "Turkey"]
    got = ask("How many primary service units are excluded from the MetroCast acquisition "
              "completed in the second quarter of fiscal 2018?",
              "(1) Excludes 251,379 primary services units (130,404 Internet services and 33,102 "
              "telephony services) from the MetroCast acquisition completed in the second quarter "
              "of fiscal 2018.")
    assert got.short_answer == "251379"
    got = ask("Who is the Vice President of Treasury, Corporate Finance and Inventor Relations "
              "since October 2017?",
              "JOSHUA T. DUCKWORTH, Vice President of Treasury, Corporate Finance and Inventor "
              "Relations since October 2017; Vice President, Investor Relations and Controller of "
              "the Company from July 2013 to October 2017.")
    assert got.short_answer == "JOSHUA T. DUCKWORTH"


# Marathon Digital's 10-Q for the quarter ended June 30, 2023, as written.
BITCOIN_HELD = ("As of June 30, 2023, the Company held approximately 12,538 bitcoin, classified "
                "on the condensed consolidated balance sheets as “Digital assets”, with a "
                "carrying value of $234,298.")
BITCOIN_SOLD = ("The Company recognized gains of $23,354 on the sale of approximately 1,854 "
                "bitcoin during the three months ended June 30, 2023.")


def test_a_count_of_an_act_is_read_only_from_a_sentence_stating_the_act() -> None:
    """"How many bitcoin did it sell" counts bitcoin sold: a count of those held answers
    another question; "the sale of" states the act."""
    sold = "Approximately how many bitcoin did Acme sell in Q2 2023?"
    assert ask(sold, BITCOIN_HELD).kind != "count"
    assert ask(sold, BITCOIN_HELD, BITCOIN_SOLD).short_answer == "1854"
    held = "Approximately how many bitcoin did Acme hold as of June 30, 2023?"
    assert ask(held, BITCOIN_SOLD, BITCOIN_HELD).short_answer == "12538"
    # what is held is what the company has: no act to state
    assert ask("How many active patents does Acme hold?", "We have more than 23,500 active "
               "patents in the United States and other countries.").short_answer == "23500"


def test_a_place_after_the_words_the_sentence_says_only_of_what_is_asked() -> None:
    """Colgate's 10-K names three research centers in one sentence: the place asked is the
    one after the words it says only once ("Pet Nutrition"), not after the first "research
    and development center"."""
    centers = ("The primary research and development center for Oral Care and Personal Care "
               "products is located in New Jersey, the primary research and development center "
               "for Home Care products is located in Mexico and the primary research and "
               "development center for Pet Nutrition products is located in Kansas.")
    q = "Where is the primary R&D center for Acme's {} products located?"
    assert ask(q.format("Pet Nutrition"), centers).short_answer == "Kansas"
    assert ask(q.format("Home Care"), centers).short_answer == "Mexico"
    assert ask(q.format("Oral Care"), centers).short_answer == "New Jersey"
