"""Tensor parallelism on CPU: ranks in worker processes over gloo give the same greedy
tokens as one rank, token for token, and the engine starts and stops them cleanly."""

from __future__ import annotations

import gc
import os
import signal
from pathlib import Path

import pytest
import torch
import torch.distributed as dist
from test_engine_exactness import _tiny_model, assert_all_blocks_free, engine_greedy, hf_greedy

from llm_engine import LLM, EngineConfig, SamplingParams
from llm_engine.distributed.worker import WorkerDiedError

LENGTHS = [8, 100, 33, 70, 17]
TINY = dict(skip_tokenizer_init=True, kv_cache_memory=16 << 20)
# Two ranks add their halves of the row-parallel sums (o_proj, down_proj) with an
# all-reduce, so fp32 rounds in another order than on one rank: prompt logprobs agree to
# ~1e-5 (1.24e-5 at most, 2 of 892 past 1e-5, on a 2-vCPU Xeon running the AVX-512
# VNNI/BF16 kernels); the greedy tokens are checked exact.
TP_LOGPROB_ABS = 5e-5


def _random_prompts(vocab: int) -> list[list[int]]:
    gen = torch.Generator().manual_seed(1)
    return [torch.randint(0, vocab, (n,), generator=gen).tolist() for n in LENGTHS]


def _workers_alive(llm: LLM) -> list[bool]:
    return [w.process.is_alive() for w in llm.llm_engine.executor.workers]


def test_tp2_equals_tp1_with_chunked_prefill_and_prefix_hits(tmp_path: Path) -> None:
    # 8 query heads, 2 K/V heads, vocabulary 512: each rank owns 4 and 1, and 256 rows.
    folder = _tiny_model(tmp_path, "llama")
    prompts = _random_prompts(512)
    expected = hf_greedy(folder, prompts, 16)
    # 32 tokens a step: the longer prompts are prefilled in chunks next to running decodes.
    # max_num_seqs=8: prompt_logprobs' LM-head gathers run 8 rows at a time, on every rank.
    args = dict(TINY, max_num_batched_tokens=32, max_num_seqs=8)
    tp1 = LLM(str(folder), **args)
    assert engine_greedy(tp1, prompts, 16) == expected
    asked = SamplingParams(temperature=0.0, max_tokens=1, prompt_logprobs=3)
    feed = [{"prompt_token_ids": p} for p in prompts]
    want = [o.prompt_logprobs for o in tp1.generate(feed, asked, use_tqdm=False)]
    del tp1

    llm = LLM(str(folder), tensor_parallel_size=2, **args)
    workers = llm.llm_engine.executor.workers
    try:
        assert _workers_alive(llm) == [True]
        assert engine_greedy(llm, prompts, 16) == expected
        got = [o.prompt_logprobs for o in llm.generate(feed, asked, use_tqdm=False)]
        for g, w in zip(got, want, strict=True):
            assert len(g) == len(w) and g[0] is w[0] is None
            for ge, we in zip(g[1:], w[1:], strict=True):
                assert {t: lp.rank for t, lp in ge.items()} == {t: lp.rank for t, lp in we.items()}
                assert all(ge[t].logprob == pytest.approx(we[t].logprob, abs=TP_LOGPROB_ABS)
                           for t in we)
        before = llm.llm_engine.get_stats().prefix_cache_hits
        assert engine_greedy(llm, prompts, 16) == expected
        # Every full block of every prompt now comes from the cache, on both ranks.
        assert llm.llm_engine.get_stats().prefix_cache_hits - before == \
            sum(n // 16 * 16 for n in LENGTHS)
        assert_all_blocks_free(llm)

        with pytest.raises(RuntimeError, match="already running in this process"):
            LLM(str(folder), tensor_parallel_size=2, **args)
    finally:  # a failed check must not leave its ranks running for the next test
        llm.llm_engine.shutdown()
    assert not any(w.process.is_alive() for w in workers)
    assert not dist.is_initialized()


def test_tp2_replicated_kv_head_padded_vocab_tied_head(tmp_path: Path) -> None:
    """Qwen2 with q/k/v biases, one K/V head (each rank keeps a copy), a vocabulary of 509
    (the second rank's rows padded) and the LM head tied to the embedding."""
    from transformers import Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(0)
    cfg = Qwen2Config(vocab_size=509, hidden_size=64, intermediate_size=96, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=1, max_position_embeddings=512,
                      initializer_range=0.3, eos_token_id=None, bos_token_id=None,
                      tie_word_embeddings=True, rope_theta=10000.0)
    folder = tmp_path / "qwen2"
    Qwen2ForCausalLM(cfg).save_pretrained(folder)
    prompts = _random_prompts(509)
    expected = hf_greedy(folder, prompts, 12)

    llm = LLM(str(folder), tensor_parallel_size=2, **TINY)
    assert engine_greedy(llm, prompts, 12) == expected
    workers = llm.llm_engine.executor.workers
    del llm
    gc.collect()
    assert not any(w.process.is_alive() for w in workers)
    assert not dist.is_initialized()


def test_smollm2_tp3_equals_tp1_and_refuses_tp2(prepared_default: Path) -> None:
    # SmolLM2-135M has 9 query heads and 3 K/V heads: 3 ranks split it, 2 cannot.
    with pytest.raises(ValueError, match=r"tensor_parallel_size=2 cannot split this model: "
                                         r"num_attention_heads=9 is not divisible by it.*"
                                         r"Sizes that work for it: 1, 3"):
        LLM(str(prepared_default), tensor_parallel_size=2)
    args = dict(kv_cache_memory=256 << 20, max_model_len=1024)
    prompts = [{"prompt": p} for p in ("The capital of France is", "Net revenue in 2019 rose")]
    params = SamplingParams(temperature=0, max_tokens=8)
    tp1 = LLM(str(prepared_default), **args).generate(prompts, params, use_tqdm=False)
    tp3 = LLM(str(prepared_default), tensor_parallel_size=3, **args)
    got = tp3.generate(prompts, params, use_tqdm=False)
    assert [o.outputs[0].text for o in got] == [o.outputs[0].text for o in tp1]
    assert [o.outputs[0].token_ids for o in got] == [o.outputs[0].token_ids for o in tp1]
    tp3.llm_engine.shutdown()


def test_dead_worker_is_an_error_not_a_hang(tmp_path: Path) -> None:
    folder = _tiny_model(tmp_path, "llama")
    llm = LLM(str(folder), tensor_parallel_size=2, **TINY)
    worker = llm.llm_engine.executor.workers[0]
    os.kill(worker.process.pid, signal.SIGKILL)
    worker.process.join(10)
    with pytest.raises(WorkerDiedError, match=r"worker rank 1 exited \(exit code -9\)"):
        engine_greedy(llm, _random_prompts(512), 4)
    llm.llm_engine.shutdown()
    assert not dist.is_initialized()


@pytest.mark.parametrize("args,message", [
    (dict(tensor_parallel_size=0), r"^tensor_parallel_size must be >= 1"),
    (dict(tensor_parallel_size=2, distributed_executor_backend="uni"),
     r"^distributed_executor_backend must be 'mp' \(or None\) when tensor_parallel_size > 1"),
    (dict(distributed_executor_backend="ray"), r"^distributed_executor_backend must be None"),
])
def test_bad_parallel_args_name_the_field(args: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        EngineConfig(**args)


def test_unsplittable_sizes_are_refused_before_any_process_starts(tmp_path: Path) -> None:
    folder = _tiny_model(tmp_path, "llama")
    with pytest.raises(ValueError, match=r"tensor_parallel_size=3 cannot split this model: "
                                         r"num_attention_heads=8 is not divisible by it; "
                                         r"num_key_value_heads=2 neither divides by it nor "
                                         r"divides it; intermediate_size=160 is not divisible "
                                         r"by it\. Sizes that work for it: 1, 2, 4, 8"):
        LLM(str(folder), tensor_parallel_size=3, **TINY)
    if torch.cuda.device_count() < 2:
        with pytest.raises(ValueError, match=r"tensor_parallel_size=2 needs 2 CUDA devices"):
            LLM(str(folder), tensor_parallel_size=2, device="cuda", **TINY)
    assert not dist.is_initialized()
