"""The Triton decode kernel, run by Triton's interpreter on the CPU, against plain attention.

TRITON_INTERPRET=1 must be set before `triton.jit` wraps the kernel, that is before the
kernel's module is first imported in a process; so the cases run in a child process of
their own (this file run as a script), and nothing else in the test session is touched.
tests/gpu/test_engine_cuda.py runs the same kernel compiled, on CUDA.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import torch
from prereqs import DEV, missing

ROOT = Path(__file__).resolve().parents[1]

# (heads, kv_heads, dim, block_size, max_len, num_blocks, dtype[, cache dtype]): GQA ratios
# 4, 3 (padded to 4 in the kernel), 1 and 6; a head size that is no power of two; block
# sizes below, at and above the kernel's 16-token tile; contexts that cross block
# boundaries; a bf16 cache under fp32 activations (kv_cache_dtype="bfloat16").
CASES = [
    (8, 2, 64, 16, 90, 64, torch.float32),
    (9, 3, 64, 16, 150, 64, torch.bfloat16),
    (4, 4, 32, 8, 70, 64, torch.float16),
    (12, 2, 48, 32, 100, 32, torch.float32),
    (4, 1, 16, 1, 40, 64, torch.float32),
    (4, 1, 16, 128, 300, 8, torch.bfloat16),
    (9, 3, 64, 16, 150, 64, torch.float32, torch.bfloat16),
]


def check_cases(cases: list[tuple], device: str = "cpu") -> None:
    """Each case through PagedAttention's decode hook: in the interpreter child on the CPU
    (this file), compiled on CUDA (tests/gpu)."""
    from test_paged_attention import _decode_case, _reference

    from llm_engine.layers.attention.attention import AttentionMetadata, DecodeGroup, PagedAttention
    from llm_engine.layers.attention.paged_attention_triton import paged_decode

    for heads, kv_heads, dim, block_size, max_len, num_blocks, dtype, *cache in cases:
        cache_dtype = cache[0] if cache else dtype
        attn, q, k, v, meta = _decode_case(8, heads, kv_heads, dim, block_size, num_blocks, max_len)
        attn.k_cache = attn.k_cache.to(device, cache_dtype)
        attn.v_cache = attn.v_cache.to(device, cache_dtype)
        q, k, v = q.to(device, dtype), k.to(device, dtype), v.to(device, dtype)
        g = meta.decodes[0]
        meta = AttentionMetadata(meta.slot_blocks.to(device), meta.slot_offsets.to(device), [
            DecodeGroup(0, g.end, g.block_tables.to(device), g.lens.to(device), None)], [])
        attn.decode_kernel = paged_decode
        out = attn(q, k, v, meta)
        # The reference reads the same (rounded) cache after the step's writes, in fp32.
        ref = PagedAttention(heads, kv_heads, dim)
        ref.k_cache, ref.v_cache = attn.k_cache.float(), attn.v_cache.float()
        expected = _reference(ref, q.float(), meta)
        # fp16/bf16: torch's default tolerances for the dtype (a few units in the last place
        # of the rounded fp32 result); fp32: those of the CPU kernel's test.
        tol = {"atol": 2e-5, "rtol": 1e-4} if dtype == torch.float32 else {}
        torch.testing.assert_close(out, expected.to(dtype), **tol)
        err = (out.float() - expected).abs().max().item()
        print(f"ok {device} heads={heads} kv_heads={kv_heads} dim={dim} block_size={block_size} "
              f"lens={meta.decodes[0].lens.tolist()} {dtype} (cache {cache_dtype}): max abs "
              f"error {err:.2e}")


def test_triton_decode_kernel_matches_reference_in_interpreter() -> None:
    if importlib.util.find_spec("triton") is None:
        missing("triton is not installed (Linux x86-64 only)", DEV)
    env = {**os.environ, "TRITON_INTERPRET": "1",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    proc = subprocess.run([sys.executable, __file__], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("ok ") == len(CASES), proc.stdout


if __name__ == "__main__":
    assert os.environ.get("TRITON_INTERPRET") == "1", "run through pytest (sets TRITON_INTERPRET=1)"
    check_cases(CASES)
