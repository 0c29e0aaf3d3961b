"""What a question asks to be done with the figures it names: the one list of operations.

The question parser (question.py, query.py) names one; the table rules (table_answer.py),
the fact rules (fact_answer.py) and the short-answer choice (short_answer.py) read what it
needs from here: how many period columns it reads, whether it is computed, whether it
takes two operand rows. `arithmetic.compute` computes the computed ones.
"""

from __future__ import annotations

from enum import Enum


class Operation(str, Enum):
    LOOKUP = "lookup"                  # one figure
    MULTI_LOOKUP = "multi_lookup"      # one row's figures in several periods
    CHANGE = "change"                  # new - old
    PERCENT_CHANGE = "percent_change"  # (new - old) / old, in percent
    AVERAGE = "average"
    SUM = "sum"
    RATIO = "ratio"                    # a / b
    PROPORTION = "proportion"          # a / b, in percent
    DIFFERENCE = "difference"          # a - b, two rows in one period
    WHICH_YEAR = "which_year"          # the year a row is highest / lowest
    COUNT = "count"                    # how many years a row passes a threshold
    YEARS_LIST = "years_list"          # the years a table covers
    ROW_LIST = "row_list"              # the rows a table lists
    ROW_COUNT = "row_count"            # how many rows a table lists
    WHICH_ROW = "which_row"            # the row highest / lowest in a period
    TEXT = "text"                      # a description: answered from the text

    # Compared, hashed and printed as its value, so it stands wherever the string did.
    __hash__ = str.__hash__

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)

    @property
    def periods(self) -> int | None:
        """The period columns of one row it reads; None: as many as the question names."""
        return _PERIODS.get(self)

    @property
    def computed(self) -> bool:
        """Whether the answer is arithmetic on figures, not a figure as shown."""
        return self in _COMPUTED

    @property
    def two_rows(self) -> bool:
        """Whether it takes two operand rows (in one period), not one row."""
        return self in _TWO_ROWS

    @property
    def over_years(self) -> bool:
        """Whether "from 2017 to 2019" means every year of the range, not its two ends."""
        return self in (Operation.AVERAGE, Operation.SUM, Operation.MULTI_LOOKUP,
                        Operation.COUNT, Operation.WHICH_YEAR)


_PERIODS = {Operation.LOOKUP: 1, Operation.CHANGE: 2, Operation.PERCENT_CHANGE: 2}
_COMPUTED = frozenset({Operation.CHANGE, Operation.PERCENT_CHANGE, Operation.AVERAGE,
                       Operation.SUM, Operation.RATIO, Operation.PROPORTION,
                       Operation.DIFFERENCE})
_TWO_ROWS = frozenset({Operation.DIFFERENCE, Operation.RATIO, Operation.PROPORTION,
                       Operation.SUM})
