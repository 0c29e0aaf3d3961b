"""The finance answer rules: the short answer of a question, computed from the documents'
facts and tables or cut from their text, never generated. `pipeline.rag` (the stages, the
batcher, the prompts) orchestrates; this package decides what number, if any, is shown.

The order the rules run in, for one question (`RAGPipeline._short_answer`):

1. **Parse once** (`query.py`, `question.py`): the question becomes a `Query`: companies,
   periods (`periods.py`: quarter, months to date, fiscal year, a balance date), the kind
   of filing, the measure (a line item or metric of `vocabulary/`, or the question's own
   definition), the operation (`operation.py`), unit and rounding, and its content words.
   Every rule below reads the `Query`; none parses the question again.
2. **Filings** (`filings/`): the question is scoped to its company's filing for its period
   (`scope.py`; several companies, each its own: `companies.py`; a company named by its
   business: `business_names.py`) and answered from that
   filing's facts, tagged (inline XBRL) or read from its printed statements (a PDF:
   `table_facts.py`, `statement_rows.py`, `statement_checks.py`, `label_facts.py`; a part
   of the company from the row naming it: `part_rows.py`). Every qualifier the
   question states must match the fact used: the part of the company (`qualifiers.py` over
   `fact_labels.py`), the period (`fact_answer.targets`), the measure (the vocabulary first,
   then the filing's own labels: `measure_match.py`). A figure the filing lacks is no
   number, and the prose says what the filing does hold; a figure of the wrong kind (an
   amount where a ratio or a count is asked) is withheld (`answer_checks.py`). Cover facts
   (symbols, auditor, fiscal year end, incorporation, ...) come from `cover_answer.py`.
3. **Tables** (`tables/`), for documents without such facts (a report's tables, TAT-QA):
   the retrieved tables' rows the question names (`table_rows.py`, `row_items.py`), their
   periods (`column_periods.py`), computed exactly (`arithmetic.py`: one percent change,
   one rounding) with the cells cited (`table_answer.py`).
4. **Text** (`text/`): a sentence of the retrieved passages that holds the question's
   words, the span it asks for cut from it (`text_answer.py`, `span_bounds.py`).
5. **Choose** (`short_answer.py`): the table's answer or the text's, by how well each
   names the question. In a tagged filing neither stands in for a figure its facts lack.

The weights these rules use, and where each was chosen, are in docs/answer_rules.md.
"""
