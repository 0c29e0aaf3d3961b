"""A Triton kernel for decode attention that reads K/V blocks where they lie (CUDA).

The GPU twin of paged_attention_cpu.py, behind the same `decode_kernel` hook: one program
per (sequence, K/V head) walks the sequence's block table in tiles of BLOCK_N tokens,
scores all the query heads that share the K/V head at once (GQA), and keeps a running
max and sum (online softmax), so the context is read once and never gathered into a copy.
K/V may be fp32, fp16 or bf16; scores, softmax and the weighted sum are in fp32.

All attention metadata it needs (block tables, context lengths) lives in tensors, so a
CUDA graph can capture it and replay it with new contents (engine/cuda_graph.py).

This module imports triton at import time; the model runner imports it only when it
selects the Triton backend, so CPU-only installs never need Triton.
"""

from __future__ import annotations

import logging

import torch
import triton
import triton.language as tl

logger = logging.getLogger(__name__)


# The block tables' row stride changes from step to step (their width is the longest
# context's): specialising on it would compile a variant whenever it crosses 1 or a
# multiple of 16.
@triton.jit(do_not_specialize=["stride_tr"])
def _paged_decode_kernel(
    q_ptr, k_ptr, v_ptr, out_ptr, tables_ptr, lens_ptr, scale,
    stride_qr, stride_qh, stride_qd,
    stride_or, stride_oh, stride_od,
    stride_kh, stride_kb, stride_kd, stride_kt,
    stride_vh, stride_vb, stride_vt, stride_vd,
    stride_tr,
    GROUP: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_SIZE: tl.constexpr,
    BLOCK_G: tl.constexpr, BLOCK_D: tl.constexpr, BLOCK_N: tl.constexpr,
):
    # 64-bit offsets: a large cache's head stride times the head index passes 2**31.
    row = tl.program_id(0).to(tl.int64)
    kv_head = tl.program_id(1).to(tl.int64)
    g = tl.arange(0, BLOCK_G)
    d = tl.arange(0, BLOCK_D)
    n = tl.arange(0, BLOCK_N)
    g_ok = g < GROUP
    d_ok = d < HEAD_DIM
    heads = kv_head * GROUP + g
    q = tl.load(q_ptr + row * stride_qr + heads[:, None] * stride_qh + d[None, :] * stride_qd,
                mask=g_ok[:, None] & d_ok[None, :], other=0.0).to(tl.float32)  # [G, D]
    length = tl.load(lens_ptr + row)
    k_base = k_ptr + kv_head * stride_kh
    v_base = v_ptr + kv_head * stride_vh
    table = tables_ptr + row * stride_tr

    m_i = tl.full([BLOCK_G], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_G], tl.float32)
    acc = tl.zeros([BLOCK_G, BLOCK_D], tl.float32)
    for start in range(0, length, BLOCK_N):
        tok = start + n
        tok_ok = tok < length
        # A tile may span several cache blocks (block_size < BLOCK_N): one block id per token.
        block = tl.load(table + tok // BLOCK_SIZE, mask=tok_ok, other=0)
        offset = tok % BLOCK_SIZE
        k = tl.load(k_base + block[None, :] * stride_kb + d[:, None] * stride_kd
                    + offset[None, :] * stride_kt,
                    mask=d_ok[:, None] & tok_ok[None, :], other=0.0).to(tl.float32)  # [D, N]
        s = tl.sum(q[:, :, None] * k[None, :, :], axis=1) * scale  # [G, N]
        s = tl.where(tok_ok[None, :], s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        alpha = tl.exp(m_i - m_new)
        p = tl.exp(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        v = tl.load(v_base + block[:, None] * stride_vb + offset[:, None] * stride_vt
                    + d[None, :] * stride_vd,
                    mask=tok_ok[:, None] & d_ok[None, :], other=0.0).to(tl.float32)  # [N, D]
        acc = acc * alpha[:, None] + tl.sum(p[:, :, None] * v[None, :, :], axis=1)
        m_i = m_new
    out = acc / l_i[:, None]
    tl.store(out_ptr + row * stride_or + heads[:, None] * stride_oh + d[None, :] * stride_od,
             out.to(out_ptr.dtype.element_ty), mask=g_ok[:, None] & d_ok[None, :])


def paged_decode(q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor,
                 tables: torch.Tensor, lens: torch.Tensor, scale: float) -> torch.Tensor:
    """q: [rows, heads, dim]; k_cache: [kv_heads, blocks, dim, block_size]; v_cache:
    [kv_heads, blocks, block_size, dim]; tables: [rows, max_blocks]; lens: [rows] context
    lengths (>= 1), the new token included. Returns [rows, heads, dim] in q's dtype."""
    rows, heads, dim = q.shape
    kv_heads, _, block_size, _ = v_cache.shape
    group = heads // kv_heads
    out = torch.empty_like(q)
    block_g = triton.next_power_of_2(group)
    block_d = triton.next_power_of_2(dim)
    # Tokens per tile: the [G, D, N] products stay near 8K fp32 values (registers), and
    # at least 16 so that short tiles don't multiply the loop's overhead.
    block_n = max(16, min(64, triton.next_power_of_2(8192 // (block_g * block_d))))
    _paged_decode_kernel[(rows, kv_heads)](
        q, k_cache, v_cache, out, tables, lens, scale,
        *q.stride(), *out.stride(), *k_cache.stride(), *v_cache.stride(), tables.stride(0),
        GROUP=group, HEAD_DIM=dim, BLOCK_SIZE=block_size,
        BLOCK_G=block_g, BLOCK_D=block_d, BLOCK_N=block_n,
        num_warps=4 if block_g * block_d * block_n <= 8192 else 8,
    )
    return out


_checked: dict[torch.device, bool] = {}


def load_kernel(device: torch.device):
    """`paged_decode` if it compiles and runs on `device`, else None (logged once).

    Triton compiles at the first launch (it needs a C compiler for its launcher and a
    driver it supports): a one-sequence probe here lets 'auto' keep the torch path when
    that fails, rather than failing at the first request.
    """
    if device not in _checked:
        try:
            q = torch.randn(1, 2, 16, device=device)
            k_cache = torch.randn(1, 1, 16, 16, device=device)
            v_cache = torch.randn(1, 1, 16, 16, device=device)
            ones = torch.ones(1, 1, dtype=torch.long, device=device)
            paged_decode(q, k_cache, v_cache, ones - 1, ones[0], 0.25)
            torch.cuda.synchronize(device)
            _checked[device] = True
        except Exception as exc:  # compiler, driver or PTX version trouble
            logger.warning("Triton paged-attention kernel unavailable on %s (%s); using the "
                           "torch path", device, exc)
            _checked[device] = False
    return paged_decode if _checked[device] else None
