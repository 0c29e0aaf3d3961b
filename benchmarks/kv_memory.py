"""KV-cache memory: the waste of finrag's block allocation vs contiguous preallocation, and
what prefix sharing saves on a RAG-shaped workload.

Both parts run the real engine and read the real allocator: after every scheduling
decision the block tables of the running sequences are walked (each distinct block once)
to count allocated slots and the slots that hold a token once the step has run.

1. The standard workload of benchmarks/throughput.py (64 requests, prompts of U[32, 512]
   tokens, 128 new tokens each). Waste = allocated slots holding no token / allocated
   slots. The preallocation baselines are applied to the same running sequences at each
   step: a contiguous buffer of max_model_len slots per sequence (what transformers'
   static cache and the systems before vLLM reserve), and the tightest such reservation,
   each request's own prompt + max_tokens.
2. A RAG-shaped workload: TAT-QA dev questions, a few per annual report, each prompt the
   chat of one long system prompt (finrag's own, with its intent labels), the report's
   passages and the question, all submitted at once. Prefix caching off vs on: peak KV
   blocks in use and prompt tokens prefilled. Two prompt layouts: passages before the
   question (requests on one report share the passages too) and finrag's pipeline layout,
   question first (shared with the intent request, see pipeline/rag/prompts.py).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout, not an install
sys.path.insert(0, str(Path(__file__).resolve().parent))
from reproduce import print_command  # noqa: E402
from workloads import TATQA, standard_prompts  # noqa: E402

from llm_engine import LLM, SamplingParams  # noqa: E402
from llm_engine.engine.scheduler import Scheduler, SchedulerOutput  # noqa: E402


@dataclass
class StepKV:
    running: int
    blocks: int  # distinct blocks in use
    held: int  # slots holding a token, each distinct block counted once
    seq_tokens: int  # tokens per sequence summed (what an allocator without sharing holds)
    reserve_max: int  # slots if each running sequence had max_model_len reserved
    reserve_own: int  # slots if each had exactly prompt + max_tokens reserved
    prefill: int  # prompt tokens computed in this step


class KVRecorder:
    """Reads the block tables right after each `schedule()` of an engine's scheduler."""

    def __init__(self, llm: LLM, max_tokens: int) -> None:
        self.engine = llm.llm_engine
        self.max_tokens = max_tokens
        self.steps: list[StepKV] = []
        sched = self.engine.scheduler
        schedule = sched.schedule

        def recorded() -> SchedulerOutput:
            out = schedule()
            self.record(sched, out)
            return out

        sched.schedule = recorded  # type: ignore[method-assign]

    def record(self, sched: Scheduler, out: SchedulerOutput) -> None:
        bs = sched.block_size
        scheduled = dict(zip(out.seqs, out.num_tokens, strict=True))
        filled: dict[int, int] = {}
        seq_tokens = 0
        for seq in sched.running:
            tokens = seq.num_computed_tokens + scheduled.get(seq, 0)
            seq_tokens += tokens
            for i, block in enumerate(seq.block_table):
                filled[block] = max(filled.get(block, 0), min(bs, max(tokens - i * bs, 0)))
        prefill = sum(max(min(s.num_computed_tokens + n, s.num_prompt_tokens) - s.num_computed_tokens, 0)
                      for s, n in scheduled.items())
        n = len(sched.running)
        self.steps.append(StepKV(
            n, len(filled), sum(filled.values()), seq_tokens,
            n * self.engine.max_model_len,
            sum(s.num_prompt_tokens + self.max_tokens for s in sched.running), prefill))


def run(model: str, prompts: list[list[int]], max_tokens: int, prefix: bool,
        engine_args: dict) -> tuple[KVRecorder, list[list[int]]]:
    llm = LLM(model, enable_prefix_caching=prefix, **engine_args)
    rec = KVRecorder(llm, max_tokens)
    params = SamplingParams(temperature=0, max_tokens=max_tokens, ignore_eos=True)
    outs = llm.generate([{"prompt_token_ids": p} for p in prompts], params, use_tqdm=True)
    return rec, [o.outputs[0].token_ids for o in outs]


def waste_rows(rec: KVRecorder) -> list[tuple[str, int, float, float, int, float]]:
    """Per allocator: peak slots, waste at that step, max waste over steps (and how many
    sequences ran then), waste over the whole run (slot-steps)."""
    bs = rec.engine.block_manager.block_size
    steps = [s for s in rec.steps if s.running]
    systems = [
        (f"finrag paged blocks of {bs}", lambda s: s.blocks * bs, lambda s: s.held),
        (f"reserve max_model_len={rec.engine.max_model_len} per sequence",
         lambda s: s.reserve_max, lambda s: s.seq_tokens),
        ("reserve prompt + max_tokens per sequence", lambda s: s.reserve_own,
         lambda s: s.seq_tokens),
    ]
    rows = []
    for name, alloc, held in systems:
        def waste(s: StepKV, alloc=alloc, held=held) -> float:
            return 1 - held(s) / alloc(s)

        # The latest step at the peak, as the engine's kv_cache_waste_at_peak takes it.
        peak = max(reversed(steps), key=alloc)
        worst = max(steps, key=waste)
        total = 1 - sum(map(held, steps)) / sum(map(alloc, steps))
        rows.append((name, alloc(peak), waste(peak), waste(worst), worst.running, total))
    return rows


def rag_prompts(tokenizer, num_reports: int, per_report: int, passages_first: bool
                ) -> list[list[int]]:
    from pipeline.rag.prompts import answer_tail, build_prompt_ids, question_head, system_text
    from pipeline.settings import Settings

    settings = Settings()
    system = system_text(settings.system_prompt, settings.intent_labels)
    prompts = []
    for report in json.loads(TATQA.read_text())[:num_reports]:
        paragraphs = sorted(report["paragraphs"], key=lambda p: p["order"])[:3]
        shown = [SimpleNamespace(text=p["text"]) for p in paragraphs]
        for q in report["questions"][:per_report]:
            tail = answer_tail(shown, settings.answer_instruction, settings.max_passage_chars,
                               q["question"])
            passages, instruction = tail.rsplit("\n\n", 1)
            if passages_first:
                chat = [{"role": "system", "content": system},
                        {"role": "user", "content": f"{passages}\n\n{question_head(q['question'])}"
                                                    f"{instruction}"}]
                text = tokenizer.apply_chat_template(chat, add_generation_prompt=True)
                prompts.append(tokenizer.encode(text, add_special_tokens=False))
            else:
                prompts.append(build_prompt_ids(tokenizer, system, q["question"], tail))
    return prompts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="default")
    ap.add_argument("--num-requests", type=int, default=64, help="standard workload requests")
    ap.add_argument("--new-tokens", type=int, default=128, help="standard workload new tokens")
    ap.add_argument("--max-model-len", type=int, default=2048)
    ap.add_argument("--rag-reports", type=int, default=8)
    ap.add_argument("--rag-questions-per-report", type=int, default=4)
    ap.add_argument("--rag-new-tokens", type=int, default=32)
    ap.add_argument("--skip-standard", action="store_true")
    ap.add_argument("--skip-rag", action="store_true")
    args = ap.parse_args()

    from llm_engine.tokenizer import Tokenizer
    from llm_engine.utils.model_path import resolve_model

    model = str(resolve_model(args.model))
    tokenizer = Tokenizer.from_pretrained(model)
    engine_args = {"max_model_len": args.max_model_len, "kv_cache_memory": 2 << 30}
    print(f"engine: {engine_args}, block_size 16, max_num_batched_tokens 2048")

    if not args.skip_standard:
        prompts = standard_prompts(tokenizer, args.num_requests)
        print(f"\n1. standard workload: {len(prompts)} requests, {sum(map(len, prompts))} prompt "
              f"tokens, {args.new_tokens} new tokens each (prefix caching off)", flush=True)
        rec, _ = run(model, prompts, args.new_tokens, False, engine_args)
        print(f"{len(rec.steps)} steps, up to {max(s.running for s in rec.steps)} sequences "
              f"running, no preemption: {rec.engine.get_stats().num_preemptions == 0}")
        print(f"{'allocator':44s} {'peak slots':>10s} {'waste at peak':>13s} "
              f"{'max waste (seqs)':>17s} {'whole run':>9s}")
        for name, peak, at_peak, worst, seqs, total in waste_rows(rec):
            print(f"{name:44s} {peak:10d} {at_peak:13.2%} {worst:10.2%} ({seqs:3d}) {total:9.2%}")
        stats = rec.engine.get_stats()
        print(f"engine stats: kv_cache_waste_at_peak {stats.kv_cache_waste_at_peak:.2%}, "
              f"peak_num_used_blocks {stats.peak_num_used_blocks}")

    if not args.skip_rag:
        if not TATQA.exists():
            print(f"\n2. skipped: TAT-QA not found at {TATQA}")
        for passages_first in ([] if not TATQA.exists() else [True, False]):
            prompts = rag_prompts(tokenizer, args.rag_reports, args.rag_questions_per_report,
                                  passages_first)
            layout = "system, passages, question" if passages_first else \
                "system, question, passages (finrag's pipeline)"
            print(f"\n2. RAG workload, {layout}: {len(prompts)} requests ({args.rag_reports} "
                  f"reports x {args.rag_questions_per_report} questions), "
                  f"{sum(map(len, prompts))} prompt tokens (mean {sum(map(len, prompts)) // len(prompts)})"
                  f", {args.rag_new_tokens} new tokens each", flush=True)
            results = {}
            for prefix in (False, True):
                rec, outs = run(model, prompts, args.rag_new_tokens, prefix, engine_args)
                peak = max(s.blocks for s in rec.steps)
                results[prefix] = (peak, sum(s.prefill for s in rec.steps), outs)
            (off_blocks, off_prefill, off_outs), (on_blocks, on_prefill, on_outs) = \
                results[False], results[True]
            print(f"{'prefix caching':15s} {'peak KV blocks':>14s} {'prefill tokens':>15s}")
            print(f"{'off':15s} {off_blocks:14d} {off_prefill:15d}")
            print(f"{'on':15s} {on_blocks:14d} {on_prefill:15d}")
            print(f"saved: {1 - on_blocks / off_blocks:.1%} of peak KV memory, "
                  f"{1 - on_prefill / off_prefill:.1%} of prefill tokens; same greedy outputs: "
                  f"{on_outs == off_outs}")

    print_command(__file__)


if __name__ == "__main__":
    main()
