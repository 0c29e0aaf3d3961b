"""The registrant's name and trading symbol from a filing's text (its cover first).

Covers print the name by the caption "(Exact name of registrant as specified in its
charter)" in several layouts, all seen on real 10-Ks:

- the name on the line above the caption ("Apple Inc."), or on its own line before it;
  "(Exact name of Registrants ...)" under two names: the first, the parent company; one
  name wrapped over two lines ("THE GADGET WIDGET" / "COMPANY"): both;
- other fields' values between them ("Oracle Corporation" / "Delaware 54-2185193" /
  caption): lines that are a value of another field are passed over;
- the caption as a column header over one row per registrant ("Exact Name of Registrant"
  / "as Specified In Its Charter" over "1-12609 PG&E CORPORATION California 94-3234914"):
  the name is what stands before the row's state and tax id, up to its legal word;
- no name in the text at all (printed as an image: Foot Locker's cover): then the legal
  name the first pages write most ("Foot Locker, Inc." four times, "Nike, Inc." once),
  when it clearly leads;
- no caption at all (Abbott's, Procter & Gamble's covers): the name line under the
  Commission file number's that the text writes again.

The short name the filing defines for the registrant ("references to “BXP” mean Boston
Properties, Inc."), where it does: people write it as they write a symbol.

The symbol: the one before the exchange's name in the "Trading Symbol(s)" table (small
capitals come out of the text layer mixed-case: "OrCL"), else "under the symbol 'BXP'" or
"(NYSE: BXP)" in the text.
"""

from __future__ import annotations

import re
from collections import Counter

_EXACT_NAME = re.compile(r"\(?\s*exact\s+name\s+of\s+(?:the\s+)?registrant(s)?\b", re.I)
# Lines above or below the caption a name may stand (values of other fields between).
MAX_LINES_AWAY = 3
# A company name longer than this is not a name (a paragraph ran into the line).
MAX_NAME = 120
_TAX_ID = re.compile(r"\b\d{2}-\d{7}\b")
_FILE_NUMBER = re.compile(r"^\s*\d{1,4}-\d{2,7}\s+")
# Lines that are a caption or another field's value, never the name.
_NOT_NAME = re.compile(
    r"^\s*\(|commission\s+file|file\s+number|transition\s+(?:report|period)|report\s+pursuant|"
    r"fiscal\s+year\s+ended|specified\s+in\s+its\s+charter|identification|jurisdiction|"
    r"state\s+or\s+other|employer|incorporation\s+or\s+organization|principal\s+executive|"
    r"zip\s+code|telephone\s+number|securities\s+and\s+exchange|washington|"
    r"^\s*(?:or|commission|form\s+10-?k|\(?mark\s+one\)?)\s*$", re.I)
_LEGAL = (r"(?:Inc\.?|Incorporated|Corporation|Corp\.?|Company|Co\.|plc|PLC|N\.V\.|Ltd\.?|"
          r"Limited|L\.P\.|LLC|CORPORATION|COMPANY|INC\.?)")
# A name's last line that is only its legal word, or a line that ends mid-name: one name
# wrapped over two lines.
_ONLY_LEGAL = re.compile(r"^[\s,]*" + _LEGAL + r"[\s.,]*$", re.I)
_CONTINUED = re.compile(r"(?:,|&|\band|\bof)\s*$", re.I)
# "PG&E CORPORATION", "Pacific Gas and Electric Company", "Foot Locker, Inc.": capitalized
# words (and "and", "&", "of") up to a legal word, all on one line, so a heading
# ("General") and a sentence's end ("in 1989.") stay out.
_LEGAL_NAME = re.compile(r"\b((?:[A-Z0-9][\w'’&-]*,?[ ]+(?:(?:and|&|of)[ ]+)?){1,5}" + _LEGAL
                         + r")(?!\w)")
# A name the first pages write at least this often, and this many times more often than
# any other, names a registrant whose cover prints no name in its text.
MIN_MENTIONS = 3
LEAD_FACTOR = 2
# Where a cover without the name's caption prints the name: under the file number, above
# the securities table; a name written at least this often (an address once).
_FILE_NUMBER_LINE = re.compile(r"commission\s+file\s+(?:number|no\b)", re.I)
_COVER_TABLE = re.compile(r"securities\s+registered\s+pursuant", re.I)
MIN_NAME_MENTIONS = 2
_GENERIC = re.compile(r"^(?:the|this|our)\s+\S+$", re.I)  # "The Company" names no one
_EXCHANGE = re.compile(r"\b([A-Z][A-Za-z]{0,4}(?:\.[A-Z])?)\s+(?i:the\s+)?(?i:nasdaq|new\s+york\s+"
                       r"stock|nyse|chicago\s+stock|cboe)")
# "Trading Symbol(s)", or "Trading" set over "Symbol(s)" with the other headers between
_SYMBOL_TABLE = re.compile(r"trading\s+symbol|\bsymbol\(s\)", re.I)
# How far past the table's header its first symbol may be printed.
SYMBOL_TABLE_CHARS = 2000
# A defined term in quotes, and one that is a short name in capitals ("BXP", "J&J").
_QUOTED = r"[“\"‘']([^”\"’'\n]{2,8})[”\"’']"
_SHORT = re.compile(r"^[A-Z][A-Z0-9&]{1,7}$")
MIN_SHORT_USES = 3
_SYMBOL_IN_TEXT = re.compile(r"under\s+the\s+(?:ticker\s+|trading\s+)?symbols?\s+[\"“‘']*"
                             r"([A-Z]{1,5})\b|\((?:NYSE|NASDAQ|Nasdaq):\s*([A-Z]{1,5})\)")


def registrant_name(text: str) -> str:
    """The registrant's name as the cover prints it ("" when none is found, and always
    without the caption or a Commission file number: a memo that names a company is not
    that company's filing)."""
    m = _EXACT_NAME.search(text)
    if m is None:
        return _after_file_number(text)
    return _by_caption(text, m) or _most_written(text)


def _after_file_number(text: str) -> str:
    """A cover that prints no "(Exact name of registrant ...)" caption (Abbott's "Abbott
    Laboratories" over "An Illinois Corporation", Procter & Gamble's name over its address):
    the first name line under the Commission file number's, before the securities table,
    that the text writes again (an address is written once)."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    start = next((k for k, line in enumerate(lines) if _FILE_NUMBER_LINE.search(line)), None)
    if start is None:
        return ""
    for line in lines[start + 1:start + 1 + MAX_LINES_AWAY]:
        if _COVER_TABLE.search(line):
            break
        if is_name(line) and len(re.findall(re.escape(line), text, re.I)) >= MIN_NAME_MENTIONS:
            return line
    return ""


def _by_caption(text: str, caption: re.Match[str]) -> str:
    """The name printed by the caption: on its line, above it, or in the row under it
    when the caption is a column header (no parentheses: a parenthesized caption is
    always under its value, and the line under it is another field's)."""
    same_line = text[:caption.start()].rsplit("\n", 1)[-1].strip()
    if same_line and is_name(same_line):
        return same_line
    after = [line.strip() for line in text[caption.end():].splitlines() if line.strip()]
    header = not caption.group(0).startswith("(")
    below = next((name for line in after[:MAX_LINES_AWAY] if (name := _row_name(line))), "")
    if header and below:
        return below
    before = [line.strip() for line in text[:caption.start()].splitlines() if line.strip()]
    names = _names_above(before[-MAX_LINES_AWAY:])
    if not names:
        return ""
    # "(Exact name of Registrants ...)" under a stack of names: the first is the parent
    # ("BOSTON PROPERTIES, INC." over its operating partnership)
    if caption.group(1):
        return names[0]
    if len(names) > 1 and (_ONLY_LEGAL.match(names[-1]) or _CONTINUED.search(names[-2])):
        return f"{names[-2]} {names[-1]}"  # one name wrapped: "THE GADGET WIDGET" / "COMPANY"
    return names[-1]


def co_registrants(text: str) -> list[str]:
    """The registrants a combined report's cover names after the first: the rows under the
    caption set as a column header (PG&E's utility under its parent), the names stacked over
    "(Exact name of Registrants ...)" (Boston Properties' operating partnership); [] for a
    report of one registrant."""
    m = _EXACT_NAME.search(text)
    if m is None:
        return []
    if not m.group(0).startswith("("):
        names: list[str] = []
        after = (line.strip() for line in text[m.end():].splitlines() if line.strip())
        for k, line in enumerate(after):
            row = _TAX_ID.search(line) or _FILE_NUMBER.match(line)
            name = _row_name(line) if row else ""
            if name:
                names.append(name)
            elif names or k >= MAX_LINES_AWAY:  # the rows end (an address), or none began
                break
        return names[1:]
    if m.group(1):
        before = [line.strip() for line in text[:m.start()].splitlines() if line.strip()]
        return _names_above(before[-MAX_LINES_AWAY:])[1:]
    return []


def _names_above(lines: list[str]) -> list[str]:
    """The nearest run of name lines in `lines` (the lines above the caption, in order),
    passing over the other fields' values printed under it."""
    run: list[str] = []
    for line in reversed(lines):
        if is_name(line):
            run.insert(0, line)
        elif run:
            break
    return run


def is_name(line: str) -> bool:
    """Whether a line of the cover may be the name: not a caption, another field's value or
    boilerplate."""
    return (len(line) <= MAX_NAME and any(c.isalpha() for c in line)
            and not _NOT_NAME.search(line) and not _TAX_ID.search(line))


def _row_name(line: str) -> str:
    """The name in a line under the caption: the line itself, or in a row of several
    fields ("1-12609 PG&E CORPORATION California 94-3234914") what ends at its legal word."""
    if _NOT_NAME.search(line):
        return ""
    if not _TAX_ID.search(line) and not _FILE_NUMBER.match(line):
        return line if is_name(line) else ""
    named = _LEGAL_NAME.search(_FILE_NUMBER.sub("", line))
    return named.group(1) if named else ""


def _most_written(text: str) -> str:
    counts = Counter(name for m in _LEGAL_NAME.finditer(text)
                     if not _GENERIC.match(name := " ".join(m.group(1).split())))
    ranked = counts.most_common(2)
    if not ranked or ranked[0][1] < MIN_MENTIONS:
        return ""
    if len(ranked) > 1 and ranked[0][1] < LEAD_FACTOR * ranked[1][1]:
        return ""
    return ranked[0][0]


def short_name(text: str, company: str) -> str:
    """The short name in capitals the filing defines for its registrant `company` ("unless
    the context otherwise requires, references to “BXP” mean Boston Properties, Inc.", or
    "Boston Properties, Inc. (“BXP”)"), "" when it defines none, or a term it does not go on
    to write as a name (only in capitals, `MIN_SHORT_USES` times in all)."""
    words = company.split()
    if not words:
        return ""
    name = r"\s+".join(re.escape(w) for w in words)
    m = (re.search(rf"references\s+to\s+{_QUOTED}\s+(?:means?|refers?\s+to|are\s+to)\s+"
                   rf"(?:the\s+)?{name}", text, re.I)
         or re.search(rf"{name}\s*\(\s*{_QUOTED}\s*\)", text, re.I))
    if m is None or not _SHORT.match(m.group(1)):
        return ""
    # a name the filing goes on to use, never in lower case: a heading's "(“PARENT”)", once,
    # or "the Parent" is a defined term, no name
    written = re.findall(rf"(?<!\w){re.escape(m.group(1))}(?!\w)", text, re.I)
    used = len(written) >= MIN_SHORT_USES and all(w.isupper() for w in written)
    return m.group(1) if used else ""


def trading_symbol(text: str) -> str:
    """The first security's symbol, in capitals ("" when the text gives none)."""
    table = _SYMBOL_TABLE.search(text)
    if table:
        for m in _EXCHANGE.finditer(text, table.end(), table.end() + SYMBOL_TABLE_CHARS):
            if _capitals(m.group(1)):
                return m.group(1).upper()
    m = _SYMBOL_IN_TEXT.search(text)
    return (m.group(1) or m.group(2)) if m else ""


def _capitals(word: str) -> bool:
    """A symbol, also in small capitals ("OrCL": more capitals than not), not a word
    ("Stock", "The")."""
    return len(word) == 1 or 2 * sum(c.isupper() for c in word) > len(word)
