"""Prompt-lookup speculative decoding on RAG-shaped prompts: acceptance and decode speed-up.

Prompts are built as the pipeline builds its generation prompt (system text, question, then
numbered passages and the answer instruction; pipeline.prompts): TAT-QA dev questions, each
with its own report's table and first paragraphs as the passages, cut to the server's
max_passage_chars (what a perfect retriever would return). Greedy, max_tokens as the
server's default. For each batch size the same prompts run on an engine without drafts and
on one with `speculative_config`, alternating, in this process; decode tok/s counts the
tokens generated after every request of the batch has its first token, over the time
since then (prefill excluded: drafting does not change it). Acceptance is the engine's
spec_decode counters: accepted / drafted tokens.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout, not an install
sys.path.insert(0, str(Path(__file__).resolve().parent))
from reproduce import print_command  # noqa: E402
from workloads import TATQA  # noqa: E402

from llm_engine import LLM, SamplingParams  # noqa: E402
from retriever_trt.indexing.chunking import render_table  # noqa: E402


def rag_prompts(tokenizer, count: int) -> list[list[int]]:
    from pipeline.rag.prompts import answer_tail, build_prompt_ids, system_text
    from pipeline.settings import Settings

    settings = Settings()
    system = system_text(settings.system_prompt, settings.intent_labels)
    prompts = []
    for report in json.loads(TATQA.read_text()):
        head, body = render_table(report["table"]["table"])
        paragraphs = sorted(report["paragraphs"], key=lambda p: p["order"])[:2]
        passages = [SimpleNamespace(text="\n".join([head, *body]))] + \
            [SimpleNamespace(text=p["text"]) for p in paragraphs]
        # One question a report: questions on one report share every passage token.
        question = report["questions"][0]["question"]
        tail = answer_tail(passages, settings.answer_instruction, settings.max_passage_chars,
                           question)
        prompts.append(build_prompt_ids(tokenizer, system, question, tail))
        if len(prompts) == count:
            return prompts
    raise SystemExit(f"{TATQA} holds fewer than {count} reports")


def decode_run(llm: LLM, prompts: list[list[int]], max_tokens: int) -> tuple[float, int, list]:
    """(decode seconds, tokens generated after the batch's last first token, outputs)."""
    engine = llm.llm_engine
    params = SamplingParams(temperature=0.0, max_tokens=max_tokens)
    for i, p in enumerate(prompts):
        engine.add_request(f"b{i}", {"prompt_token_ids": p}, params)
    outs: dict[str, list[int]] = {}
    started: set[str] = set()
    t_decode, tokens_at_start = None, 0
    while engine.has_unfinished_requests():
        for out in engine.step():
            started.add(out.request_id)
            outs[out.request_id] = out.outputs[0].token_ids
        if t_decode is None and len(started) == len(prompts):
            t_decode, tokens_at_start = time.perf_counter(), sum(map(len, outs.values()))
    elapsed = time.perf_counter() - t_decode
    total = sum(map(len, outs.values()))
    return elapsed, total - tokens_at_start, [outs[f"b{i}"] for i in range(len(prompts))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="default")
    ap.add_argument("--batch-sizes", default="1,4,32")
    ap.add_argument("--max-tokens", type=int, default=128)
    ap.add_argument("--num-speculative-tokens", type=int, default=4)
    ap.add_argument("--prompt-lookup-max", type=int, default=4)
    ap.add_argument("--prompt-lookup-min", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=1,
                    help="runs of each engine per batch size, alternating; the fastest counts")
    ap.add_argument("--quantization", default=None, help="engine quantization, if supported")
    args = ap.parse_args()
    spec = {"method": "ngram", "num_speculative_tokens": args.num_speculative_tokens,
            "prompt_lookup_max": args.prompt_lookup_max,
            "prompt_lookup_min": args.prompt_lookup_min}
    common = {"max_model_len": 2048, "kv_cache_memory": 512 << 20, "max_num_seqs": 32,
              "enable_prefix_caching": False}
    if args.quantization:
        common["quantization"] = args.quantization
    plain = LLM(args.model, **common)
    drafting = LLM(args.model, speculative_config=spec, **common)
    batch_sizes = [int(b) for b in args.batch_sizes.split(",")]
    prompts = rag_prompts(plain.get_tokenizer(), max(batch_sizes))
    print(f"{len(prompts)} RAG prompts of {min(map(len, prompts))}-{max(map(len, prompts))} "
          f"tokens, greedy, max_tokens={args.max_tokens}; speculative_config={spec}")
    # Warm both (kernel compilation, first-touch of the caches).
    for llm in (plain, drafting):
        decode_run(llm, prompts[:2], 8)
    rows = []
    for b in batch_sizes:
        best = {"plain": float("inf"), "spec": float("inf")}
        tokens = {}
        for _ in range(args.repeats):
            for name, llm in (("plain", plain), ("spec", drafting)):
                before = llm.llm_engine.get_stats()
                secs, n, outs = decode_run(llm, prompts[:b], args.max_tokens)
                after = llm.llm_engine.get_stats()
                best[name] = min(best[name], secs / max(n, 1))
                tokens[name] = outs
                if name == "spec":
                    drafted = after.spec_decode_num_draft_tokens - before.spec_decode_num_draft_tokens
                    accepted = (after.spec_decode_num_accepted_tokens
                                - before.spec_decode_num_accepted_tokens)
                    steps = after.spec_decode_num_drafts - before.spec_decode_num_drafts
        same = tokens["plain"] == tokens["spec"]
        rate = accepted / drafted if drafted else 0.0
        rows.append((b, 1 / best["plain"], 1 / best["spec"], best["plain"] / best["spec"], rate,
                     accepted / steps if steps else 0.0, same))
        print(f"batch {b}: plain {1 / best['plain']:.1f} tok/s, spec {1 / best['spec']:.1f} tok/s, "
              f"acceptance {rate:.3f}, outputs identical: {same}", flush=True)
    print("\n| batch | decode tok/s, no drafts | with drafts | speed-up | acceptance rate "
          "| accepted per verification | greedy outputs identical |")
    print("|---:|---:|---:|---:|---:|---:|---|")
    for b, p, s, up, rate, per, same in rows:
        print(f"| {b} | {p:.1f} | {s:.1f} | {up:.2f}x | {rate:.3f} | {per:.2f} | {same} |")
    print_command(__file__)


if __name__ == "__main__":
    main()
