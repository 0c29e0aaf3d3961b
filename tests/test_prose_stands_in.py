"""What a tagged filing's facts cannot give, its prose may state: a share of a whole the
facts hold no part for ("our top 10 customers ... accounted for approximately 60 percent"),
a date ("When did it acquire the remaining 45% ..."), a figure it expects ("expected capital
expenditures for 2025"); a sentence about something else gives no number."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from types import SimpleNamespace

import pytest
from ixbrl_sample import write_filing

from pipeline.rag.answers.answer_checks import asks_date, asks_ratio
from pipeline.rag.answers.compose import compose, of_the_kind_asked
from pipeline.rag.answers.filings.filing_answer import FilingAnswerer
from pipeline.rag.answers.query import parse_query
from pipeline.rag.answers.short_answer import ShortAnswer, TableSource
from retriever_trt.documents.model import Fact
from retriever_trt.indexing.ingest import ingest

_PROSE = ("Our top 10 customers, collectively, accounted for approximately 60 percent of "
          "revenue in 2024.",
          "On March 31, 2024, the Company acquired the remaining 45% equity interest in Gizmo "
          "Labs for $378 million of cash consideration.",
          "Revenue grew 23 percent in 2024 on strong demand.",
          "The Company expects 2025 capital expenditures to be between $3.0 and $3.2 billion, "
          "mostly for new plants.",
          "As of December 31, 2024, we had a total of 900 stores across all of our segments: "
          "600 in North America and 300 in Europe.",
          "In June 2024, Widget Corp acquired the remaining interest in Zeta Tools from Omega "
          "Holdings, Inc. for $12 million.",
          "The Company expects to recognize deferred revenue of approximately $45 million "
          "over the next 3 years related to the Zeta Tools acquisition.",
          "Approximately 43% of our regular full-time employees are located in the United "
          "States, 50% in Asia, and 7% in Europe.",
          "The Company's share of the global widget market was 31.5% on a year-to-date basis.",
          "We anticipate achieving a total hash rate capacity of 28 EH/s by the end of 2025.",
          "On July 21, 2024, Jane Roe resigned from her position as the Company's Chief "
          "Financial Officer.",
          "Our gadget sales in China were 1.0 million units for market share of 8.8% in 2024.",
          "The revenue retention rate of our subscription portfolio was 95% in 2024.")


@pytest.fixture(scope="module")
def rules(tmp_path_factory):
    folder = tmp_path_factory.mktemp("prose")
    write_filing(folder, "Widget Corp", "WDGT", 2024, 1234, 1000, 200, 35, charge=_PROSE)
    store = ingest(folder)[0]
    return store, FilingAnswerer(store), TableSource(store)


def _ask(rules, question: str):
    store, filings, tables = rules
    query = filings.parse(question)
    scope = filings.scope(query, None)
    passages = [SimpleNamespace(doc_id=c.doc_id, chunk_id=c.chunk_id, score=1.0)
                for d in scope.doc_ids for c in store.document(d)]
    return compose(query, scope, filings, tables, passages, passages, len(passages))


def test_a_share_the_facts_hold_no_part_for_is_read_from_its_sentence(rules):
    got = _ask(rules, "What share of Widget Corp's 2024 revenue came from its top 10 "
                      "customers, collectively (%)?")
    assert (got.short_answer, got.scale) == ("60", "percent")
    assert got.quote == _PROSE[0]


def test_a_date_asked_is_the_proses_though_the_question_states_a_percentage(rules):
    assert asks_date("When did Walgreens acquire the remaining 45% equity interest?")
    assert not asks_ratio("When did Walgreens acquire the remaining 45% equity interest?")
    got = _ask(rules, "When did Widget Corp acquire the remaining 45% equity interest in "
                      "Gizmo Labs?")
    assert got.short_answer == "March 31, 2024"


def test_a_share_of_a_part_no_sentence_names_gets_no_number(rules):
    got = _ask(rules, "What share of Widget Corp's 2024 revenue came from Mars (%)?")
    assert got.short_answer is None


def test_a_share_asked_is_never_answered_with_an_amount():
    """JCI's "What share of net sales came from services? (services revenue / total net
    sales)" had been answered 22,952 million, from a sentence stating its net sales."""
    share = parse_query("What share of Widget Corp's 2024 revenue came from services? "
                        "(services revenue / total revenue, %, one decimal)")
    assert not of_the_kind_asked(ShortAnswer("22952", "million"), share)
    assert not of_the_kind_asked(ShortAnswer("22952", ""), share)
    assert of_the_kind_asked(ShortAnswer("30.4", "percent"), share)
    amount = parse_query("What was Widget Corp's revenue from services in 2024?")
    assert of_the_kind_asked(ShortAnswer("22952", "million"), amount)


def test_a_figure_expected_is_the_proses_and_a_reported_one_the_facts(rules):
    """No reported period's fact holds what a company expects: "the low end of its expected
    capital expenditures for 2025" had been "no figure for 2025" (McDonald's). Asked as a
    reported figure, 2025's capital expenditures stay the facts' to give, and they have
    none."""
    got = _ask(rules, "What is the low end of Widget Corp's expected capital expenditures for "
                      "2025? $ billions.")
    assert (got.short_answer, got.scale) == ("3", "billion")
    assert _ask(rules, "What were Widget Corp's capital expenditures in 2025?").short_answer is None


def test_a_count_a_name_or_a_date_the_facts_do_not_hold_is_the_proses(rules):
    """A count of one part listed in a sentence ("... 300 in Europe"), the seller of an
    acquired interest ("From whom ...?") and "in what month and year" had been withheld or
    claimed by the facts; a date comes only from a sentence naming what the question names
    ("Acme Robotics" acquired: no sentence says so, no date)."""
    got = _ask(rules, "How many of Widget Corp's stores were in Europe at December 31, 2024?")
    assert got.short_answer == "300"
    got = _ask(rules, "From whom did Widget Corp acquire the remaining interest in Zeta Tools?")
    assert got.short_answer == "Omega Holdings, Inc."
    got = _ask(rules, "In what month and year did Widget Corp acquire Gizmo Labs?")
    assert got.short_answer == "March 31, 2024"
    assert _ask(rules, "In what month and year did Widget Corp acquire Acme Robotics?"
                ).short_answer is None
    # an aside in brackets restates what the question names: no name the sentence must say
    got = _ask(rules, "When did Widget Corp acquire the rest of Gizmo Labs (its robotics unit, "
                      "Gizmo Robotics)?")
    assert got.short_answer == "March 31, 2024"


def test_a_length_of_time_the_facts_do_not_hold_is_the_proses(rules):
    """"Over how many years ... expect to recognize the McGriff-related costs" had been
    withheld: the facts matched no part of the company by that name, and no fact is a length
    of time. A hyphen ends the name the sentence must name ("Zeta-related": Zeta)."""
    got = _ask(rules, "Over how many years does Widget Corp expect to recognize the "
                      "Zeta-related deferred revenue?")
    assert got.short_answer == "3 years"


def test_what_the_companys_people_are_is_the_proses(rules):
    """"What portion of its employees are located in Asia" had been withheld: the facts
    name no part "Asia", and no fact counts people."""
    from pipeline.rag.answers.compose import _the_proses

    got = _ask(rules, "About what portion of Widget Corp's regular full-time employees are "
                      "located in Asia?")
    assert (got.short_answer, got.scale) == ("50", "percent")
    # the facts' "no part named Asia" (Lam Research's geographic members) withholds nothing
    # the prose states of its people; a figure of the company's stays the facts' to withhold
    assert _the_proses("About what portion of Lam Research's employees are located in Asia?")
    assert not _the_proses("What was Lam Research's revenue from Asia in fiscal 2025?")


def test_a_sentence_s_rate_share_or_name_the_facts_do_not_hold(rules):
    """A sentence naming no year is of its filing's own year (a 10-Q's "share of the global
    toothpaste market was 40.5% on a year-to-date basis" had needed the year written); a
    rate asked in its own unit ("in EH/s") is no percentage; "market share" asks one; "which
    ... Chief Financial Officer" asks a name, not the date in the sentence."""
    got = _ask(rules, "What was Widget Corp's share of the global widget market in 2024?")
    assert (got.short_answer, got.scale) == ("31.5", "percent")
    got = _ask(rules, "What total hash rate capacity does Widget Corp expect to reach by the "
                      "end of 2025, in EH/s?")
    assert got.short_answer == "28"
    got = _ask(rules, "Which Widget Corp Chief Financial Officer resigned in July 2024?")
    assert got.short_answer == "Jane Roe"
    got = _ask(rules, "What was Widget Corp's market share in China in 2024?")
    assert (got.short_answer, got.scale) == ("8.8", "percent")
    # a year the sentence does not name and the filing is not of: no number
    assert _ask(rules, "What was Widget Corp's share of the global widget market in 2023?"
                ).short_answer is None


def test_a_rate_the_facts_hold_only_an_amount_of_is_the_proses(rules):
    """"What revenue retention rate": the facts hold the revenue, an amount, not the rate;
    that had been said and the sentence stating the rate withheld."""
    got = _ask(rules, "What revenue retention rate did Widget Corp report for its "
                      "subscription portfolio in 2024?")
    assert (got.short_answer, got.scale) == ("95", "percent")


def test_a_count_asked_is_never_an_amount_of_money():
    """"How many stockholders held its Class A shares" had been answered with the balance of
    Class A common stock (5.2 million dollars): money is no count."""
    from pipeline.rag.answers.answer_checks import COUNT_UNREAD, withheld

    money = [Fact("f", "us-gaap:StockholdersEquity", Decimal("5.2e6"), "USD", date(2024, 6, 30))]
    assert withheld("How many stockholders held Acme Class A shares?", "million", money,
                    False) is COUNT_UNREAD
    assert withheld("How many dollars of equity did Acme hold?", "million", money, False) is None
    # "how many $ thousands" asks the unit of an amount, no count
    assert withheld("Acme's Mining revenue in Q2 2024 -- how many $ thousands?", "thousand",
                    money, False) is None
    assert withheld("Acme's revenue: how many millions of dollars?", "million", money,
                    False) is None


def test_a_count_of_an_act_is_no_tagged_count_named_by_another():
    """Marathon tags the 12,538 bitcoin it held as "AcquisitionOfBitcoins" over six months:
    no count of bitcoin sold, which the prose may state (ACT_UNREAD defers to it)."""
    from pipeline.rag.answers.answer_checks import ACT_UNREAD, PROSE_MAY_STATE, withheld

    acquired = [Fact("f", "mara:AcquisitionOfBitcoins", Decimal(12538), "pure",
                     date(2023, 6, 30), date(2023, 1, 1))]
    sold = "How many bitcoin did Acme sell in the six months ended June 30, 2023?"
    assert withheld(sold, "", acquired, False) is ACT_UNREAD and ACT_UNREAD in PROSE_MAY_STATE
    assert withheld(sold.replace("sell", "acquire"), "", acquired, False) is None
    # a count of no act ("have") takes the figure
    assert withheld(sold.replace("sell", "have"), "", acquired, False) is None


def test_the_names_a_sentence_must_say():
    """A name or a date comes from a sentence saying every name the question gives, a name
    in the plural said in the singular too ("zero-sugar Oreos": "Oreo Zero"); a number from
    one saying one of them at least (the "Tax Act" payment's sentence says "transition
    tax"); "Mars" is no "market"."""
    from pipeline.rag.answers.compose import _names_what_is_named

    oreos = parse_query("In which country did Mondelez introduce zero-sugar Oreos?")
    assert _names_what_is_named("Mondelez launched Oreo Zero in China", oreos)
    tax = parse_query("How large is the remaining Tax Act transition tax payment? $ millions.")
    sentence = "we had one remaining transition tax payment of $255 million"
    assert _names_what_is_named(sentence, tax, every=False)
    assert not _names_what_is_named(sentence, tax)
    mars = parse_query("What share of Widget Corp's 2024 revenue came from Mars (%)?")
    assert not _names_what_is_named("market share of 8.8% in China", mars, every=False)


def test_an_average_of_one_period_is_the_proses(rules):
    """"The average revenue from its top twenty customers in 2024" is no average of periods:
    the facts' "an average of one period's revenue" had withheld Palantir's sentence stating
    it; the facts now leave it to the prose."""
    _, filings, _ = rules
    query = filings.parse("What was the average revenue from Widget Corp's top twenty "
                          "customers in 2024? $ millions.")
    got = filings.answer(query, filings.scope(query, None))
    assert (got.short_answer, got.missing) == (None, None)


def test_a_sentence_restating_an_untagged_table_s_figure_answers(tmp_path):
    """Rocket prints its net client retention rate in an untagged table and states it in a
    sentence: the table's figure alone is withheld in a tagged filing, the sentence saying the
    same figure had been withheld with it. A place asked is the prose's where the facts miss."""
    from pipeline.rag.answers.compose import _the_proses

    table = ("</span><table><tr><td></td><td>2024</td></tr><tr><td>Net client retention rate"
             "</td><td>97%</td></tr></table><span>")
    sentence = ("On December 31, 2024, the net client retention rate of our servicing "
                "portfolio was 97% on an annual basis.")
    write_filing(tmp_path, "Widget Corp", "WDGT", 2024, 1234, 1000, 200, 35,
                 charge=(table, sentence))
    store = ingest(tmp_path)[0]
    got = _ask((store, FilingAnswerer(store), TableSource(store)),
               "What net client retention rate did Widget Corp report for its servicing "
               "portfolio at the end of 2024, %?")
    assert (got.short_answer, got.quote) == ("97", sentence)
    assert _the_proses("Which countries led Widget Corp's organic sales growth in 2024?")
