"""A process that uploads and deletes documents until it is killed (test_documents_kill.py).

    python kill_worker.py FOLDER ONNX ROUND

It prints `ready ID` once a document is ready, `deleting ID` before a delete and
`deleted ID` once it returned, so the test knows what a restart must find, whenever the
SIGKILL lands (a document killed mid-delete may be there or not).
"""

from __future__ import annotations

import io
import sys
import time

from retriever_trt.embedders.ort_embedder import OnnxRuntimeEmbedder
from retriever_trt.live.catalog import DocumentStatus
from retriever_trt.live.live_documents import LiveConfig, LiveDocuments
from retriever_trt.search.retriever import Retriever

CONFIG = LiveConfig(chunk_tokens=120, overlap=20, poll_interval=0.05)
DELETE_EVERY = 3


def main(folder: str, onnx: str, round_no: str) -> None:
    embedder = OnnxRuntimeEmbedder(onnx)
    live = LiveDocuments(Retriever.empty(embedder), embedder, folder, CONFIG)
    live.start()
    ready: list[str] = []
    for i in range(10_000):
        text = (f"Round {round_no} note {i}: the company's backlog reached {i * 7 + 3} units "
                f"and its margin {i % 40} percent. ") * (1 + i % 5)
        record, _ = live.add(f"r{round_no}-note{i}.md", io.BytesIO(text.encode()), "alpha")
        while (got := live.get(record.id, None)) is not None and \
                got.status is DocumentStatus.INDEXING:
            time.sleep(0.01)
        print(f"ready {record.id}", flush=True)
        ready.append(record.id)
        if i % DELETE_EVERY == DELETE_EVERY - 1:
            gone = ready.pop(0)
            print(f"deleting {gone}", flush=True)
            live.delete(gone, None)
            print(f"deleted {gone}", flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:4])
