"""Indexing speed of one filing: its chunks encoded the way fbb4869 did and the way the
code does now, alternating in one process on the same chunks, so a shared host's load
falls on both alike.

- before: batches of 64 sorted by characters, each padded to the profile's power-of-two
  sequence bucket (a 10-K's 121-136-token chunks to 256);
- now: `retriever_trt.indexing.encoding.encode_corpus` as `finrag index` runs it (batches sorted by
  the encoder's tokens, each padded to its longest text rounded up to
  `ort_embedder.SEQ_MULTIPLE`).

Prints, per round and path, wall and CPU seconds (user + sys of every thread), the tokens
the encoder ran (padding included) against the chunks' own, the lowest cosine between the
two paths' vectors of one chunk and their largest difference, and the load average before
and after.

    python benchmarks/index_speed.py [--file ../shared/data/filings/aapl-10-k-2024-11-01.html]
        [--rounds 3] [--engines-dir engines]
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
import numpy as np  # noqa: E402
from reproduce import print_command  # noqa: E402

from retriever_trt.embedders.loader import load_embedder  # noqa: E402
from retriever_trt.embedders.profiles import make_batches  # noqa: E402
from retriever_trt.indexing.chunking import DEFAULT_OVERLAP  # noqa: E402
from retriever_trt.indexing.encoding import encode_corpus  # noqa: E402
from retriever_trt.indexing.ingest import ingest  # noqa: E402
from retriever_trt.search.retriever import chunk_counter  # noqa: E402

FILING = REPO.parent / "shared" / "data" / "filings" / "aapl-10-k-2024-11-01.html"
# The batch encode_corpus and fbb4869's encoding both used.
BATCH = 64
# What the two paths must agree to for every chunk: the same retrieval.
MIN_COSINE = 0.9999


class CountingSession:
    """An ONNX Runtime session that counts the token positions it is given."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.tokens = inner, 0

    def run(self, outputs: list[str], feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
        self.tokens += int(feeds["input_ids"].size)
        return self.inner.run(outputs, feeds)


def encode_before(embedder: Any, texts: Sequence[str]) -> np.ndarray:
    """fbb4869's encoding: character-sorted batches, padded to the profile's buckets."""
    order = np.argsort([len(t) for t in texts], kind="stable")
    out = np.empty((len(texts), embedder.dim), dtype=np.float32)
    for start in range(0, len(texts), BATCH):
        rows = order[start : start + BATCH]
        ids = [e.ids for e in embedder.tokenizer.encode_batch([texts[i] for i in rows])]
        for batch in make_batches(ids, [embedder.profile], embedder.overflow):
            emb = embedder.session.run(["embeddings"], {"input_ids": batch.input_ids,
                                                        "attention_mask": batch.attention_mask})
            out[rows[batch.rows]] = emb[0][: len(batch.rows)]
    return out


def encode_now(embedder: Any, texts: Sequence[str]) -> np.ndarray:
    return encode_corpus(embedder, texts, BATCH, progress=False)


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def timed(fn: Callable[[], Any]) -> tuple[Any, float, float]:
    """(result, wall seconds, CPU seconds) of one call."""
    wall, cpu = time.perf_counter(), cpu_seconds()
    result = fn()
    return result, time.perf_counter() - wall, cpu_seconds() - cpu


def cpu_name() -> str:
    """The CPU's model name (/proc/cpuinfo on Linux), else the machine type."""
    try:
        lines = Path("/proc/cpuinfo").read_text().splitlines()
    except OSError:
        return platform.machine()
    names = [line.split(":", 1)[1].strip() for line in lines if line.startswith("model name")]
    return names[0] if names else platform.machine()


def load_line() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def read_chunks(path: Path, embedder: Any) -> list[str]:
    """The texts `finrag index` encodes for `path`, at the server's chunk size."""
    from pipeline.settings import Settings

    chunk_tokens = Settings.model_fields["chunk_tokens"].default
    (store, report), wall, cpu = timed(lambda: ingest(path, chunk_tokens, DEFAULT_OVERLAP,
                                                      chunk_counter(embedder)))
    print(f"read: {report.pages} pages, {len(store)} chunks of {chunk_tokens} tokens in "
          f"{wall:.2f} s wall, {cpu:.2f} s CPU")
    return [store.index_text(i) for i in range(len(store))]


def compare(embedder: Any, texts: list[str], rounds: int) -> None:
    own = sum(len(e.ids) for e in embedder.tokenizer.encode_batch(texts))
    session = embedder.session = CountingSession(embedder.session)
    paths = {"before": encode_before, "now": encode_now}
    vectors: dict[str, np.ndarray] = {}
    print(f"{'round':>5} {'path':>7} {'wall s':>7} {'CPU s':>7} {'chunks/s':>8} "
          f"{'tokens run':>10} {'x own':>6}")
    for r in range(1, rounds + 1):
        for name, encode in paths.items():
            session.tokens = 0
            vectors[name], wall, cpu = timed(lambda e=encode: e(embedder, texts))
            print(f"{r:5d} {name:>7} {wall:7.2f} {cpu:7.2f} {len(texts) / wall:8.1f} "
                  f"{session.tokens:10d} {session.tokens / own:6.2f}")
    cosine = float((vectors["before"] * vectors["now"]).sum(axis=1).min())
    largest = float(np.abs(vectors["before"] - vectors["now"]).max())
    verdict = "same vectors" if cosine >= MIN_COSINE else "VECTORS DIFFER"
    print(f"lowest cosine of a chunk's two vectors: {cosine:.7f} ({verdict}, threshold "
          f"{MIN_COSINE}), largest difference of a component {largest:.1e}; the chunks' "
          f"own tokens: {own}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--file", type=Path, default=FILING, help="the filing to index")
    ap.add_argument("--rounds", type=int, default=3, help="alternations of the two paths")
    ap.add_argument("--engines-dir", type=Path, default=REPO / "engines",
                    help="where the encoder's ONNX file is (exported there when missing)")
    args = ap.parse_args()
    print_command(__file__)
    print(f"{cpu_name()}, {os.cpu_count()} CPUs; {load_line()}")
    embedder = load_embedder(None, args.engines_dir)
    texts = read_chunks(args.file, embedder)
    compare(embedder, texts, args.rounds)
    print(load_line())


if __name__ == "__main__":
    main()
