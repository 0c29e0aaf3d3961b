"""The engine on CUDA: greedy output equal to transformers' on the same device and dtype."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")

LENGTHS = [8, 600, 33, 150, 17, 420, 64, 9]


def test_cuda_fp32_greedy_matches_transformers(prepared_default: Path) -> None:
    from engine_prompts import prompts_of_lengths
    from transformers import AutoModelForCausalLM

    from llm_engine import LLM, SamplingParams

    llm = LLM(str(prepared_default), device="cuda", dtype="float32", gpu_memory_utilization=0.5)
    prompts = prompts_of_lengths(llm.get_tokenizer(), LENGTHS)
    params = SamplingParams(temperature=0, max_tokens=24)
    got = [o.outputs[0].token_ids
           for o in llm.generate([{"prompt_token_ids": p} for p in prompts], params)]
    model = AutoModelForCausalLM.from_pretrained(prepared_default, dtype=torch.float32).cuda()
    for ids, out in zip(prompts, got, strict=True):
        ref = model.generate(torch.tensor([ids], device="cuda"), max_new_tokens=24, do_sample=False)
        assert out == ref[0, len(ids):].tolist()
