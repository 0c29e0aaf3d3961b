"""A naive RAG server, the baseline of benchmarks/serving.py: same models, no engine.

Per request, one at a time (a global lock): torch embedding of the question, FAISS flat
search over the same chunks, then transformers' `generate` on the same prepared SmolLM2
weights with the same prompt. No batching, no KV reuse, no streaming (TTFT = end to end).

    python3 benchmarks/baseline_server.py --port 8100 --corpus pipeline/data/demo_corpus.json
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import threading
import time

import faiss
import torch
import uvicorn
from fastapi import FastAPI
from pydantic import BaseModel


class AskRequest(BaseModel):
    question: str
    top_k: int = 3
    max_tokens: int = 16
    stream: bool = False


def build_app(corpus: str, engines_dir: str | None, top_k: int = 3) -> FastAPI:
    from transformers import AutoModelForCausalLM

    from llm_engine.tokenizer import Tokenizer
    from llm_engine.utils.model_path import resolve_model
    from pipeline.rag.prompts import answer_tail, build_prompt_ids, system_text
    from pipeline.settings import Settings
    from retriever_trt.embedders.torch_embedder import TorchEmbedder

    load_corpus = importlib.import_module("retriever_trt.indexing.ingest").load_corpus

    settings = Settings()
    model_dir = resolve_model("default", engines_dir)
    tok = Tokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir, torch_dtype=torch.float32).eval()
    embedder = TorchEmbedder()
    store = load_corpus(corpus, settings.chunk_tokens)
    index = faiss.IndexFlatIP(embedder.dim)
    index.add(embedder.encode([c.text for c in store.chunks]))
    system = system_text(settings.system_prompt, settings.intent_labels)
    lock = threading.Lock()
    app = FastAPI()

    def answer(req: AskRequest) -> dict:
        with lock:
            t0 = time.perf_counter()
            _, ids = index.search(embedder.encode([req.question]), req.top_k)
            chunks = [store.chunks[i] for i in ids[0] if i >= 0]
            t1 = time.perf_counter()
            prompt = build_prompt_ids(tok, system, req.question, answer_tail(
                chunks, settings.answer_instruction, settings.max_passage_chars, req.question))
            with torch.inference_mode():
                out = model.generate(torch.tensor([prompt]), max_new_tokens=req.max_tokens,
                                     do_sample=False)
            new = out[0, len(prompt):].tolist()
            t2 = time.perf_counter()
        return {"answer": tok.decode(new), "intent": "finance_question",
                "sources": [{"id": c.chunk_id, "doc_id": c.doc_id, "title": c.title,
                             "text": c.text, "score": 0.0} for c in chunks],
                "usage": {"prompt_tokens": len(prompt), "completion_tokens": len(new)},
                "timings": {"intent_ms": 0.0, "retrieve_ms": (t1 - t0) * 1000,
                            "generate_ms": (t2 - t1) * 1000, "ttft_ms": (t2 - t0) * 1000,
                            "total_ms": (t2 - t0) * 1000}}

    @app.post("/ask")
    async def ask(req: AskRequest) -> dict:
        return await asyncio.to_thread(answer, req)

    @app.get("/health")
    async def health() -> dict:
        return {"status": "ok"}

    return app


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8100)
    p.add_argument("--corpus", default="pipeline/data/demo_corpus.json")
    p.add_argument("--engines-dir", default=None)
    a = p.parse_args()
    uvicorn.run(build_app(a.corpus, a.engines_dir), host=a.host, port=a.port,
                log_level="warning")


if __name__ == "__main__":
    main()
