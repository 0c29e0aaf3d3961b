"""Corpus encoding: each distinct text once, in batches of like length, while reading goes on.

- Distinct texts: a text that occurs twice (a filing's boilerplate repeated on one page, the
  same note in two filings of one title) is encoded once and its vector copied.
- Length-sorted batches: sorted by the encoder's tokens, a batch is padded little to its
  longest text, which makes corpus encoding several times faster than in file order.
- `streaming_encoder.StreamingEncoder` encodes in a thread while the caller still reads the
  corpus, with these two.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from tqdm.auto import tqdm

from retriever_trt.embedders.embedder import Embedder

DEFAULT_BATCH = 64


def text_lengths(embedder: Embedder, texts: Sequence[str]) -> list[int]:
    """Each text's length in the embedder's tokens when it exposes its tokenizer, else in
    characters. Sorted by characters, a 10-K's batches of 64 were padded to 1.21 times
    their tokens, sorted by tokens to 1.07 (tokenizing them costs ~1% of encoding them)."""
    tokenizer = getattr(embedder, "tokenizer", None)
    if hasattr(tokenizer, "encode_batch"):
        return [len(e.ids) for e in tokenizer.encode_batch(list(texts))]
    return [len(t) for t in texts]


class DistinctTexts:
    """The distinct texts seen so far, in order of first sight, and each text's row
    among them (`rows`), so distinct vectors scatter back to every text."""

    def __init__(self) -> None:
        self.first: dict[str, int] = {}
        self.rows: list[int] = []

    def add(self, texts: Sequence[str]) -> list[str]:
        """Record `texts`; return the ones not seen before, in order."""
        new: list[str] = []
        for text in texts:
            count = len(self.first)
            row = self.first.setdefault(text, count)
            if row == count:
                new.append(text)
            self.rows.append(row)
        return new

    def scatter(self, vectors: np.ndarray) -> np.ndarray:
        """Every added text's vector, from the distinct texts' `vectors`."""
        return vectors[np.asarray(self.rows, dtype=np.int64)]


def encode_sorted(embedder: Embedder, texts: Sequence[str], batch_size: int,
                  on_batch: Callable[[int], None] | None = None) -> np.ndarray:
    """`texts` encoded in batches sorted by length; `on_batch(n)` after each batch of n."""
    order = np.argsort(text_lengths(embedder, texts), kind="stable")
    out = np.empty((len(texts), embedder.dim), dtype=np.float32)
    for start in range(0, len(texts), batch_size):
        rows = order[start : start + batch_size]
        out[rows] = embedder.encode([texts[i] for i in rows])
        if on_batch is not None:
            on_batch(len(rows))
    return out


def encode_corpus(
    embedder: Embedder, texts: Sequence[str], batch_size: int = DEFAULT_BATCH,
    progress: bool = True, on_batch: Callable[[int], None] | None = None,
) -> np.ndarray:
    """Every text's vector, each distinct text encoded once in length-sorted batches.
    `on_batch(done)` hears after each batch how far encoding is, in texts of `texts`."""
    seen = DistinctTexts()
    distinct = seen.add(texts)
    done = 0
    with tqdm(total=len(distinct), desc="encoding", unit="chunk", disable=not progress) as bar:
        def step(n: int) -> None:
            nonlocal done
            done += n
            bar.update(n)
            if on_batch is not None:
                on_batch(round(len(texts) * done / len(distinct)))

        vectors = encode_sorted(embedder, distinct, batch_size, step)
    return seen.scatter(vectors)
