"""Chunking: documents cut into passages that fit the encoder (all-MiniLM-L6-v2 truncates
at 256 tokens). Prose is cut at word boundaries with overlap; a table is cut between rows,
each piece repeating the header rows (and the caption, which says what the table is).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from retriever_trt.documents.filing.metadata import title
from retriever_trt.documents.model import Document, Paragraph, TableBlock
from retriever_trt.store.document_store import Chunk

TokenCounter = Callable[[list[str]], list[int]]

# Defaults leave room for the title line and the [CLS]/[SEP] tokens under 256.
DEFAULT_CHUNK_TOKENS = 200
# Tokens consecutive prose chunks share. At the server's 120-token chunks, 40 made each
# prose token encoded 1.5 times; 20 made 9.6% fewer chunks of the 25 HTML filings (13.4% of
# 8 10-K PDFs), and recall@5 stayed within 0.01 (issue 49's rule): filings question set
# cell 0.408 -> 0.403, filing and held-out unchanged; TAT-QA dev hybrid with the row match
# 0.893 -> 0.892 (benchmarks/filings_retrieval.py --overlap 40 20; RESULTS, issue 49).
DEFAULT_OVERLAP = 20
# The least tokens a table piece may hold (0: the prose chunk size). Filling the encoder's
# window (224: 256 less [CLS]/[SEP] and a title line) made 16% fewer filing chunks, but lost
# 0.019 of the question set's cell recall@5 and indexed no faster, so table pieces keep the
# prose size (benchmarks/filings_retrieval.py sweeps it; RESULTS, "Indexing speed").
TABLE_PIECE_TOKENS = 0

_PIECE = re.compile(r"\w+|[^\w\s]")


def approx_token_counts(words: list[str]) -> list[int]:
    """BERT-like count without a tokenizer: punctuation splits, long words split in pieces."""
    return [sum(1 + len(p) // 8 for p in _PIECE.findall(w)) or 1 for w in words]


# Distinct words whose counts are remembered: a shelf of filings repeats its words (and its
# numbers) so often that tokenizing each distinct word once made reading 7x faster.
COUNT_CACHE_WORDS = 1 << 20


def tokenizer_counter(tokenizer: Any) -> TokenCounter:
    """Exact counts from a `tokenizers.Tokenizer` (e.g. an embedder's `.tokenizer`)."""
    cache: dict[str, int] = {}

    def count(words: list[str]) -> list[int]:
        if len(cache) > COUNT_CACHE_WORDS:
            cache.clear()
        new = list(dict.fromkeys(w for w in words if w not in cache))
        for w, e in zip(new, tokenizer.encode_batch(new, add_special_tokens=False), strict=True):
            cache[w] = max(1, len(e.ids))
        return [cache[w] for w in words]

    return count


# A word that ends a sentence: its full stop, question or exclamation mark, then any closing
# quotes or brackets.
_SENTENCE_END = re.compile(r"[.!?][\"'”’)\]]*$")
# A window is cut at its last sentence end when that keeps at least this share of its words:
# a sentence cut in two loses its figure or its subject in both windows ("... our employee
# headcount worldwide was" | "125,665."), which a 20-token overlap does not make whole.
SENTENCE_CUT_KEEP = 0.5


def _sentence_end(text: str, spans: list[tuple[int, int]], start: int, end: int) -> int:
    """`end`, or the end of the window's last sentence when one ends late enough in it."""
    least = start + max(1, int((end - start) * SENTENCE_CUT_KEEP))
    for k in range(end - 1, least - 1, -1):
        if _SENTENCE_END.search(text[spans[k][0]:spans[k][1]]):
            return k + 1
    return end


def split_words(
    text: str, max_tokens: int, overlap: int, count: TokenCounter = approx_token_counts
) -> list[str]:
    """Cut `text` at word boundaries into windows of <= max_tokens tokens; consecutive
    windows share about `overlap` tokens so a sentence cut in two is whole in one of them.
    Each window is a slice of `text`, so line breaks (Markdown lists, tables) survive."""
    if overlap >= max_tokens:
        raise ValueError(f"overlap ({overlap}) must be smaller than chunk size ({max_tokens})")
    spans = [m.span() for m in re.finditer(r"\S+", text)]
    if not spans:
        return []
    costs = count([text[a:b] for a, b in spans])
    chunks = []
    start = 0
    while start < len(spans):
        end, used = start, 0
        while end < len(spans) and (used + costs[end] <= max_tokens or end == start):
            used += costs[end]
            end += 1
        if end < len(spans):
            end = _sentence_end(text, spans, start, end)
        chunks.append(text[spans[start][0] : spans[end - 1][1]])
        if end == len(spans):
            break
        # Step back from `end` until `overlap` tokens are repeated, but always move forward.
        back, carried = end, 0
        while back - 1 > start and carried + costs[back - 1] <= overlap:
            back -= 1
            carried += costs[back]
        start = back
    return chunks


def render_table(rows: list[list[str]]) -> tuple[str, list[str]]:
    """(header lines, body lines): each row's non-empty cells joined by " | ".

    Plain rows measured best on TAT-QA dev (BM25 recall@5 0.805 against 0.782 for
    "label | 2019: value | 2018: value" rows, dense equal): repeating the column header
    beside every value lengthens table chunks, which BM25's length norm then penalises,
    while years match in nearly every chunk anyway. The header lines are repeated on
    every piece of a split table so each piece still says which column is which year.
    """
    rows = [[" ".join(str(c).split()) for c in r] for r in rows]
    rows = [r for r in rows if any(r)]
    if not rows:
        return "", []
    # TAT-QA headers are the leading rows without a row label, at least the first row.
    n_head = 1
    while n_head < min(len(rows) - 1, 3) and not rows[n_head][0]:
        n_head += 1
    lines = [" | ".join(c for c in r if c) for r in rows]
    return "\n".join(lines[:n_head]), lines[n_head:]


def table_piece_tokens(chunk_tokens: int) -> int:
    """The tokens a table piece may hold where prose chunks hold `chunk_tokens`."""
    return max(chunk_tokens, TABLE_PIECE_TOKENS)


def pack_table(head: str, body: list[str], max_tokens: int, count: TokenCounter) -> list[str]:
    """Split a rendered table between rows, each piece repeating the header lines.

    Rows are never cut: a single row over `max_tokens` stays whole (the encoder truncates
    it) because half a row's numbers without its label are useless to retrieve.
    """

    def cost(line: str) -> int:
        return sum(count(line.split())) if line.strip() else 0

    pieces: list[str] = []
    current: list[str] = []
    used = cost(head)
    for line in body:
        if current and used + cost(line) > max_tokens:
            pieces.append("\n".join([head, *current] if head else current))
            current, used = [], cost(head)
        current.append(line)
        used += cost(line)
    if current or head:
        pieces.append("\n".join([head, *current] if head else current))
    return pieces


def document_title(doc: Document) -> str:
    """"Apple Inc. 10-K FY2024"; the file's own title when the document names no company."""
    return title(doc.metadata, doc.title)


def _page_title(title: str, page: int | None) -> str:
    return f"{title}, p. {page}" if page is not None else title


# A fact's place in the chunks: (chunk id of the table's first piece, row, column).
FactCells = dict[str, tuple[str, int, int]]


def chunk_document(doc: Document, max_tokens: int, overlap: int,
                   count: TokenCounter = approx_token_counts) -> tuple[list[Chunk], FactCells]:
    """The chunks of a document in reading order, and where each tagged fact is shown.

    Prose of one page is cut as one run (so a passage cites one page); each table is its
    own run of pieces that carry the whole table, its caption heading every piece."""
    title = document_title(doc)
    chunks: list[Chunk] = []
    cells: FactCells = {}
    run: list[Paragraph] = []

    def flush() -> None:
        if not run:
            return
        page = run[0].page
        source = {"file": doc.doc_id} | ({"page": str(page)} if page is not None else {})
        text = "\n".join(p.text for p in run)
        for piece in split_words(text, max_tokens, overlap, count):
            chunks.append(Chunk(f"{doc.doc_id}#{len(chunks)}", doc.doc_id,
                                _page_title(title, page), piece, dict(source)))
        run.clear()

    n_tables = 0
    for block in doc.blocks:
        if isinstance(block, Paragraph):
            if run and run[0].page != block.page:
                flush()
            run.append(block)
            continue
        flush()
        chunks.extend(_table_chunks(doc, block, n_tables, title, max_tokens, count, cells))
        n_tables += 1
    flush()
    return chunks, cells


def _table_chunks(doc: Document, block: TableBlock, n: int, title: str, max_tokens: int,
                  count: TokenCounter, cells: FactCells) -> list[Chunk]:
    head, body = render_table(block.rows)
    head = "\n".join(part for part in (block.caption, head) if part)
    source = {"file": doc.doc_id, "table": str(n)} | \
        ({"page": str(block.page)} if block.page is not None else {}) | \
        ({"caption": block.caption} if block.caption else {}) | \
        ({"levels": " ".join(map(str, block.levels))} if block.levels else {})
    rows = [list(r) for r in block.rows]
    out = [Chunk(f"{doc.doc_id}#table{n}/{i}", doc.doc_id, _page_title(title, block.page), text,
                 dict(source), rows)
           for i, text in enumerate(pack_table(head, body, table_piece_tokens(max_tokens),
                                               count))]
    nested = block.nested_facts or {}
    for r, ids in enumerate(block.fact_ids or []):
        for c, fact_id in enumerate(ids):
            if fact_id and out:
                for shown in (fact_id, *nested.get(fact_id, ())):
                    cells.setdefault(shown, (out[0].chunk_id, r, c))
    return out
