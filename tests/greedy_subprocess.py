"""Greedy tokens of the engine in a process of its own, for tests that set its environment
(FINRAG_CPU_ISA: the CPU kernels' ISA level is read once a process).

    python tests/greedy_subprocess.py MODEL_DIR MAX_NEW < prompts.json > result.json

prompts.json: a list of token-id lists. result.json: {"backends": {...}, "tokens": [...]}.
"""

from __future__ import annotations

import json
import sys

from llm_engine import LLM, SamplingParams


def main() -> None:
    model_dir, max_new = sys.argv[1], int(sys.argv[2])
    prompts = json.load(sys.stdin)
    llm = LLM(model_dir, kv_cache_memory=512 << 20)
    backends = llm.llm_engine.executor.driver.backends
    params = SamplingParams(temperature=0.0, max_tokens=max_new)
    outs = llm.generate([{"prompt_token_ids": p} for p in prompts], params, use_tqdm=False)
    json.dump({"backends": {"isa": None if backends.isa is None else backends.isa.value,
                            "decode": backends.decode.value,
                            "fused_ops": backends.fused_ops is not None,
                            "norm_lanes": backends.norm_lanes},
               "tokens": [o.outputs[0].token_ids for o in outs]}, sys.stdout)


if __name__ == "__main__":
    main()
