"""Tensor parallelism over NCCL, one GPU per rank: greedy output equal to transformers'."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

pytestmark = pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs 2 CUDA devices")


def test_tp2_on_two_gpus_matches_transformers(tmp_path: Path) -> None:
    from test_engine_exactness import _tiny_model, engine_greedy, hf_greedy

    from llm_engine import LLM

    folder = _tiny_model(tmp_path, "llama")
    gen = torch.Generator().manual_seed(1)
    prompts = [torch.randint(0, 512, (n,), generator=gen).tolist() for n in (8, 100, 33, 70)]
    expected = hf_greedy(folder, prompts, 16)
    llm = LLM(str(folder), skip_tokenizer_init=True, device="cuda", dtype="float32",
              tensor_parallel_size=2, max_num_batched_tokens=32, gpu_memory_utilization=0.3)
    assert engine_greedy(llm, prompts, 16) == expected
    llm.llm_engine.shutdown()
