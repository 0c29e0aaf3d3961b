"""What a preemption costs: recomputing a sequence of N tokens vs swapping its blocks out
and back in, side by side on the engine's own model runner.

For each N, interleaved over the repetitions: (a) swap: copy ceil(N / block_size) blocks
device -> host and back (`ModelRunner.swap_blocks`, as a step does); (b) recompute alone:
a prefill step of the N tokens; (c) recompute in a step: the same prefill added to a step
of `--decodes` decoding sequences, minus that decode step alone (what a resumed sequence
really adds, since its prefill shares the step's weight reads). Each figure is the best
of `--repeats` (the minimum: on a shared machine, what other processes add is noise).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import torch
from reproduce import print_command

from llm_engine import LLMEngine, SamplingParams
from llm_engine.engine.scheduler import SchedulerOutput
from llm_engine.sequence import Sequence


def _timed(fn: Callable[..., object], *args: object) -> float:
    start = time.perf_counter()
    for arg in args:
        fn(arg)
    if torch.cuda.is_available():
        torch.cuda.synchronize()  # swaps are asynchronous there
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--model", default="default")
    ap.add_argument("--tokens", default="4,16,64,256,1024", help="sequence lengths N")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--decodes", type=int, default=32, help="decoding sequences in the step")
    ap.add_argument("--decode-context", type=int, default=256)
    args = ap.parse_args()
    lengths = [int(n) for n in args.tokens.split(",")]

    bs = 16
    per_seq = -(-max(lengths) // bs)
    ctx_blocks = -(-(args.decode_context + 1) // bs)
    blocks = per_seq + args.decodes * ctx_blocks
    engine = LLMEngine.from_engine_args(model=args.model, num_gpu_blocks_override=blocks,
                                        max_model_len=min(blocks * bs, 2048), swap_space=0.5,
                                        block_size=bs, max_num_batched_tokens=max(lengths) + 64)
    runner = engine.executor.driver
    gen = torch.Generator().manual_seed(0)
    vocab = engine.model_config.vocab_size
    params = SamplingParams(temperature=0)

    def seq(rid: str, n: int, table: list[int], computed: int) -> Sequence:
        s = Sequence(rid, None, torch.randint(0, vocab, (n,), generator=gen).tolist(), params)
        s.block_table, s.num_computed_tokens = table, computed
        return s

    decodes = [seq(f"d{i}", args.decode_context + 1,
                   list(range(per_seq + i * ctx_blocks, per_seq + (i + 1) * ctx_blocks)),
                   args.decode_context) for i in range(args.decodes)]
    decode_step = SchedulerOutput(decodes, [1] * len(decodes))
    runner.execute(decode_step)  # warm up

    print(f"model {engine.model_dir.name}, {runner.dtype}, device {runner.device}, block of "
          f"{bs} tokens = {runner.kv_bytes_per_block()} bytes, torch threads "
          f"{torch.get_num_threads()}; {args.decodes} decodes at context {args.decode_context}")
    print(f"{'N':>6} {'blocks':>6} {'swap out+in ms':>15} {'recompute alone ms':>19} "
          f"{'recompute in step ms':>21} {'alone/swap':>11} {'in step/swap':>13}")
    for n in lengths:
        nb = -(-n // bs)
        target = seq("r", n, list(range(nb)), 0)
        prefill = SchedulerOutput([target], [n])
        mixed = SchedulerOutput([*decodes, target], [1] * len(decodes) + [n])
        out = SchedulerOutput(blocks_to_swap_out=[(b, b) for b in range(nb)])
        back = SchedulerOutput(blocks_to_swap_in=[(b, b) for b in range(nb)])
        runner.execute(prefill)
        swap, alone, mixed_t, decode_t = [], [], [], []
        for _ in range(args.repeats):
            swap.append(_timed(runner.swap_blocks, out, back))
            alone.append(_timed(runner.execute, prefill))
            mixed_t.append(_timed(runner.execute, mixed))
            decode_t.append(_timed(runner.execute, decode_step))
        s, a = min(swap) * 1e3, min(alone) * 1e3
        m = (min(mixed_t) - min(decode_t)) * 1e3
        print(f"{n:6d} {nb:6d} {s:15.3f} {a:19.1f} {m:21.1f} {a / s:10.0f}x {m / s:12.0f}x",
              flush=True)
    print_command(__file__)


if __name__ == "__main__":
    main()
