"""Paged attention: K/V live in fixed-size blocks, found through each sequence's block table."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from llm_engine.layers.backends import BackendLayer, Backends, PrefillAttention


@dataclass
class PrefillSpan:
    """One sequence's chunk in the flat token list: rows [start, end), context before it."""

    start: int
    end: int
    num_computed: int
    block_table: torch.Tensor | None  # None when nothing was cached before the chunk


@dataclass
class DecodeGroup:
    """Decode rows [start, end), one token each, of similar context lengths."""

    start: int
    end: int
    block_tables: torch.Tensor  # [rows, max_blocks], padded with block 0
    lens: torch.Tensor  # [rows] context lengths, the new token included
    # [rows, 1, max_blocks * block_size], True where a key exists; None where a decode
    # kernel, which reads `lens`, is set (the CUDA-graph inputs, engine/cuda_graph.py).
    mask: torch.Tensor | None


@dataclass
class AttentionMetadata:
    """Where this step's tokens go and what they attend to.

    Decode rows (one new token per sequence) come first in the flat list, sorted by
    context length and attended in a few padded batches of similar lengths (so padding
    stays small); each prefill chunk is attended on its own.
    """

    # Cache slot of every new token, as (block id, offset in the block); [num_tokens] each.
    slot_blocks: torch.Tensor
    slot_offsets: torch.Tensor
    decodes: list[DecodeGroup]
    prefills: list[PrefillSpan]


class PagedAttention(BackendLayer):
    """Writes the step's K/V into their slots, then attends through block tables.

    The caches of a layer are head-major so that a gather of whole blocks (`index_select`,
    a plain memory copy) lands K/V in the [kv_heads, rows, tokens, head_dim] layout the
    batched matmuls read: values as [kv_heads, num_blocks, block_size, head_dim], keys as
    [kv_heads, num_blocks, head_dim, block_size], transposed within each block so that
    the CPU decode kernel scores a whole block with one vector operation per dimension.
    """

    def __init__(self, num_heads: int, num_kv_heads: int, head_dim: int) -> None:
        super().__init__()
        self.num_heads = num_heads
        self.num_kv_heads = num_kv_heads
        self.head_dim = head_dim
        self.group = num_heads // num_kv_heads
        self.scale = head_dim**-0.5
        self.k_cache = torch.empty(0)
        self.v_cache = torch.empty(0)

    def bind(self, backends: Backends) -> None:
        # The decode kernel: the CPU kernel or the Triton kernel (CUDA); None: gather + SDPA.
        self.decode_kernel: Callable[..., torch.Tensor] | None = backends.decode_kernel
        # The prefill of a chunk without and with a cached context before it; None: SDPA.
        self.prefill: PrefillAttention | None = backends.prefill
        self.prefill_after_context: PrefillAttention | None = backends.prefill_after_context
        # The K/V writes in one pass (layers/cpu_ops.py); None: two indexed assignments.
        self.write_kv: Callable[..., None] | None = (
            None if backends.fused_ops is None else backends.fused_ops.write_kv_)

    def forward(
        self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, meta: AttentionMetadata
    ) -> torch.Tensor:
        """q: [T, heads, dim]; k, v: [T, kv_heads, dim]. Returns [T, heads * dim]."""
        kvh, d = self.num_kv_heads, self.head_dim
        # Indices split by a slice index to the front ([T, kvh, d]); adjacent ones stay put.
        # The cache may be narrower than the activations (kv_cache_dtype): rounded here,
        # widened where it is read.
        if self.write_kv is not None:
            self.write_kv(self.k_cache, self.v_cache, k, v, meta.slot_blocks, meta.slot_offsets)
        else:
            self.k_cache[:, meta.slot_blocks, :, meta.slot_offsets] = k.to(self.k_cache.dtype)
            self.v_cache[:, meta.slot_blocks, meta.slot_offsets] = v.transpose(0, 1).to(self.v_cache.dtype)

        out = torch.empty_like(q)
        for group in meta.decodes:
            if self.decode_kernel is not None:
                out[group.start : group.end] = self.decode_kernel(
                    q[group.start : group.end], self.k_cache, self.v_cache, group.block_tables,
                    group.lens, self.scale)
                continue
            rows = group.end - group.start
            # [kvh, rows, L, d]
            keys = self._gather(self.k_cache, group.block_tables, q.dtype, keys=True)
            values = self._gather(self.v_cache, group.block_tables, q.dtype)
            # The query heads that share a K/V head become that head's query rows.
            qs = q[group.start : group.end].view(rows, kvh, self.group, d).transpose(0, 1)
            o = F.scaled_dot_product_attention(qs, keys, values, attn_mask=group.mask[None],
                                               scale=self.scale)
            out[group.start : group.end] = o.transpose(0, 1).reshape(rows, self.num_heads, d)
        for span in meta.prefills:
            qs = q[span.start : span.end]
            if span.block_table is None:
                keys, values = k[span.start : span.end], v[span.start : span.end]
            else:  # the context cached before the chunk, then the chunk, read back: [ctx, kvh, d]
                ctx = span.num_computed + span.end - span.start
                table = span.block_table[None]
                keys = self._gather(self.k_cache, table, q.dtype, keys=True)[:, 0, :ctx].transpose(0, 1)
                values = self._gather(self.v_cache, table, q.dtype)[:, 0, :ctx].transpose(0, 1)
            prefill = self.prefill if span.block_table is None else self.prefill_after_context
            if prefill is not None:  # on CPU: the blocked kernels (layers/selector.py)
                out[span.start : span.end] = prefill(qs, keys, values, self.scale)
                continue
            mask = None
            if span.block_table is not None:
                mask = chunk_causal_mask(span.end - span.start, span.num_computed, q.device)
            o = F.scaled_dot_product_attention(
                qs.transpose(0, 1)[None], keys.transpose(0, 1)[None], values.transpose(0, 1)[None],
                attn_mask=mask, is_causal=mask is None, scale=self.scale, enable_gqa=self.group > 1,
            )
            out[span.start : span.end] = o[0].transpose(0, 1)
        return out.flatten(1)

    def _gather(self, cache: torch.Tensor, tables: torch.Tensor, dtype: torch.dtype,
                keys: bool = False) -> torch.Tensor:
        """[rows, max_blocks] block ids -> [kv_heads, rows, max_blocks * block_size, dim],
        widened to the activations' `dtype`."""
        kvh, num_blocks, block_size, d = self.v_cache.shape
        rows, width = tables.shape
        blocks = cache.view(kvh, num_blocks, -1).index_select(1, tables.flatten()).to(dtype)
        if keys:
            blocks = blocks.view(kvh, rows, width, d, block_size).transpose(-1, -2)
        return blocks.reshape(kvh, rows, width * block_size, d)


def chunk_causal_mask(num_new: int, num_computed: int, device: torch.device) -> torch.Tensor:
    """Query i (at position num_computed + i) sees keys 0 .. num_computed + i."""
    rows = torch.arange(num_new, device=device)[:, None] + num_computed
    cols = torch.arange(num_computed + num_new, device=device)[None, :]
    return cols <= rows
