"""Greedy output must equal Hugging Face transformers' token for token on the same weights."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from engine_prompts import prompts_of_lengths
from paths import REPO

from llm_engine import LLM, SamplingParams
from llm_engine.utils.cpu_isa import ISA_ENV, CpuIsa, host_isa

MAX_NEW = 24
# Under a block (8, 9), whole blocks (16, 48, 64, 512), a block and a bit (17, 33), and
# long prompts (150, 350, 420, 600), each compared with transformers' own greedy run.
LENGTHS = [8, 600, 33, 150, 17, 420, 64, 9, 512, 48, 16, 350]
# The variants of one engine path (ISA level, prefill chunk size, preemption) run the first
# 8 prompts: under a block (8, 9), just over one (17, 33), whole blocks (64), and long ones
# (150, 420, 600: 19 chunks of 32; together past the preemption test's 768 cache tokens).
# Every length runs in the warm prefix-cache test.
VARIANT_PROMPTS = 8
# (prepared model folder, prompts, transformers' greedy tokens for each prompt)
Case = tuple[Path, list[list[int]], list[list[int]]]


# transformers' generate() takes the prompts in groups, each prompt at most GROUP_SPAN times
# (plus a block) the length of its group's shortest, left-padded under an attention mask.
# Decoding the 135M SmolLM2 one sequence at a time is bound by reading its 540 MB of fp32
# weights at every token (65 ms a token on one core); a group reads them once a step for all
# its prompts, and the span keeps the padding a group computes small. The 12 prompts here:
# 23.7 -> 14.6 s on one core, the same tokens as one prompt at a time.
GROUP_SPAN = 4


def length_groups(prompts: list[list[int]]) -> list[list[int]]:
    """Indices of `prompts`, shortest first, in groups of similar length (GROUP_SPAN)."""
    groups: list[list[int]] = []
    for i in sorted(range(len(prompts)), key=lambda i: len(prompts[i])):
        if groups and len(prompts[i]) <= GROUP_SPAN * len(prompts[groups[-1][0]]) + 16:
            groups[-1].append(i)
        else:
            groups.append([i])
    return groups


def hf_greedy(model_dir: Path, prompts: list[list[int]], max_new: int) -> list[list[int]]:
    """transformers' greedy tokens for each prompt, as generate() gives them for the prompt
    alone: up to and with the first end-of-sequence token (a group goes on padding a row
    that has ended, until all its rows have)."""
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).eval()
    eos = model.generation_config.eos_token_id
    eos = set() if eos is None else {eos} if isinstance(eos, int) else set(eos)
    outs: dict[int, list[int]] = {}
    with torch.inference_mode():
        for group in length_groups(prompts):
            width = max(len(prompts[i]) for i in group)
            pads = [width - len(prompts[i]) for i in group]
            ids = torch.tensor([[0] * pad + prompts[i] for pad, i in zip(pads, group, strict=True)])
            mask = (torch.arange(width) >= torch.tensor(pads)[:, None]).long()
            gen = model.generate(ids, attention_mask=mask, max_new_tokens=max_new,
                                 do_sample=False, pad_token_id=0)
            for i, row in zip(group, gen[:, width:].tolist(), strict=True):
                end = next((j + 1 for j, t in enumerate(row) if t in eos), len(row))
                outs[i] = row[:end]
    return [outs[i] for i in range(len(prompts))]


def engine_greedy(llm: LLM, prompts: list[list[int]], max_new: int) -> list[list[int]]:
    params = SamplingParams(temperature=0.0, max_tokens=max_new)
    outs = llm.generate([{"prompt_token_ids": p} for p in prompts], params, use_tqdm=False)
    return [o.outputs[0].token_ids for o in outs]


def variant_case(case: Case) -> Case:
    """smollm2_case cut to its first VARIANT_PROMPTS prompts and their expected tokens."""
    model_dir, prompts, expected = case
    return model_dir, prompts[:VARIANT_PROMPTS], expected[:VARIANT_PROMPTS]


def assert_all_blocks_free(llm: LLM) -> None:
    stats = llm.llm_engine.get_stats()
    assert stats.num_running == stats.num_waiting == 0
    assert stats.num_free_blocks == stats.num_blocks
    assert all(b.ref_count == 0 for b in llm.llm_engine.block_manager.blocks)


@pytest.fixture(scope="module")
def smollm2_case(prepared_default: Path):
    from llm_engine.tokenizer import Tokenizer

    prompts = prompts_of_lengths(Tokenizer.from_pretrained(prepared_default), LENGTHS)
    return prepared_default, prompts, hf_greedy(prepared_default, prompts, MAX_NEW)


def test_smollm2_matches_transformers_with_warm_prefix_cache(smollm2_case) -> None:
    model_dir, prompts, expected = smollm2_case
    llm = LLM(str(model_dir), kv_cache_memory=512 << 20)
    assert engine_greedy(llm, prompts, MAX_NEW) == expected
    assert_all_blocks_free(llm)
    # Same prompts again: most prompt blocks now come from the prefix cache.
    before = llm.llm_engine.get_stats().prefix_cache_hits
    assert engine_greedy(llm, prompts, MAX_NEW) == expected
    assert llm.llm_engine.get_stats().prefix_cache_hits - before > sum(LENGTHS) // 2
    assert_all_blocks_free(llm)


def greedy_in_subprocess(model_dir: Path, prompts: list[list[int]], max_new: int,
                         isa: str) -> subprocess.CompletedProcess:
    """tests/greedy_subprocess.py run with FINRAG_CPU_ISA=isa (read once a process)."""
    env = {**os.environ, ISA_ENV: isa,
           "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    return subprocess.run([sys.executable, str(REPO / "tests" / "greedy_subprocess.py"),
                           str(model_dir), str(max_new)], input=json.dumps(prompts), env=env,
                          capture_output=True, text=True, cwd=REPO, check=False)


def test_smollm2_matches_transformers_on_the_avx2_kernels(smollm2_case) -> None:
    """FINRAG_CPU_ISA=avx2: the kernels every x86 server runs, on an AVX-512 machine too."""
    model_dir, prompts, expected = variant_case(smollm2_case)
    run = greedy_in_subprocess(model_dir, prompts, MAX_NEW, CpuIsa.AVX2.value)
    assert run.returncode == 0, run.stderr[-3000:]
    result = json.loads(run.stdout)
    backends = result["backends"]
    assert backends["isa"] == "avx2" and backends["decode"] == "cpu_kernel", backends
    assert backends["fused_ops"] and backends["norm_lanes"] is not None, backends
    assert result["tokens"] == expected


def test_a_cpu_isa_above_the_cpu_fails_the_start_naming_the_switch(smollm2_case) -> None:
    above = [level for level in CpuIsa if host_isa() < level]
    if not above:
        pytest.skip(f"this CPU runs the highest level, {host_isa().value}")
    run = greedy_in_subprocess(smollm2_case[0], [[1, 2, 3]], 1, above[-1].value)
    assert run.returncode != 0
    assert f"{ISA_ENV}={above[-1].value} but this CPU runs at most {host_isa().value}" in run.stderr


def test_smollm2_matches_transformers_with_small_prefill_chunks(smollm2_case) -> None:
    model_dir, prompts, expected = variant_case(smollm2_case)
    llm = LLM(str(model_dir), max_num_batched_tokens=32, enable_prefix_caching=False,
              kv_cache_memory=512 << 20)
    assert engine_greedy(llm, prompts, MAX_NEW) == expected
    assert_all_blocks_free(llm)


def test_smollm2_matches_transformers_under_preemption(smollm2_case) -> None:
    model_dir, prompts, expected = variant_case(smollm2_case)
    # 48 blocks of 16 = 768 tokens: the longest request fits, all of them together do not.
    llm = LLM(str(model_dir), num_gpu_blocks_override=48, max_model_len=700,
              enable_prefix_caching=False)
    assert engine_greedy(llm, prompts, MAX_NEW) == expected
    assert llm.llm_engine.get_stats().num_preemptions > 0
    assert_all_blocks_free(llm)


def _tiny_model(tmp_path: Path, arch: str) -> Path:
    from transformers import LlamaConfig, LlamaForCausalLM, Qwen2Config, Qwen2ForCausalLM

    common = dict(vocab_size=512, hidden_size=64, intermediate_size=160, num_hidden_layers=3,
                  num_attention_heads=8, num_key_value_heads=2, max_position_embeddings=1024,
                  initializer_range=0.3, eos_token_id=None, bos_token_id=None,
                  tie_word_embeddings=False)
    torch.manual_seed(0)
    if arch == "llama":
        rope = {"rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0,
                "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                "original_max_position_embeddings": 128}
        model = LlamaForCausalLM(LlamaConfig(rope_parameters=rope, **common))
    else:
        common["tie_word_embeddings"] = True
        model = Qwen2ForCausalLM(Qwen2Config(rope_theta=10000.0, **common))
    folder = tmp_path / arch
    model.save_pretrained(folder)
    return folder


@pytest.mark.parametrize("arch", ["llama", "qwen2"])
def test_tiny_random_models_match_transformers(tmp_path: Path, arch: str) -> None:
    folder = _tiny_model(tmp_path, arch)
    gen = torch.Generator().manual_seed(1)
    prompts = [torch.randint(0, 512, (n,), generator=gen).tolist() for n in LENGTHS]
    expected = hf_greedy(folder, prompts, 16)
    for args in ({}, {"attention_backend": "torch"}, {"max_num_batched_tokens": 32},
                 {"num_gpu_blocks_override": 48, "max_model_len": 700}):
        llm = LLM(str(folder), skip_tokenizer_init=True, kv_cache_memory=64 << 20, **args)
        assert engine_greedy(llm, prompts, 16) == expected, args
        assert_all_blocks_free(llm)


def test_max_model_len_that_cannot_fit_fails_at_start(tmp_path: Path) -> None:
    folder = _tiny_model(tmp_path, "llama")
    with pytest.raises(ValueError, match=r"max_model_len=1000 tokens .* holds 160 tokens .* "
                                         r"num_gpu_blocks_override"):
        LLM(str(folder), skip_tokenizer_init=True, num_gpu_blocks_override=10,
            max_model_len=1000)
