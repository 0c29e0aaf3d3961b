"""Paged attention: K/V live in fixed-size blocks, found through each sequence's block table."""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F


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
    mask: torch.Tensor  # [rows, 1, 1, max_blocks * block_size], True where a key exists


@dataclass
class AttentionMetadata:
    """Where this step's tokens go and what they attend to.

    Decode rows (one new token per sequence) come first in the flat list, sorted by
    context length and attended in a few padded batches of similar lengths (so padding
    stays small); each prefill chunk is attended on its own.
    """

    slot_mapping: torch.Tensor  # [num_tokens] cache slot of every new token
    decodes: list[DecodeGroup]
    prefills: list[PrefillSpan]


class PagedAttention(torch.nn.Module):
    """Writes the step's K/V into their slots, then attends through block tables."""

    def __init__(self, num_heads: int, num_kv_heads: int, head_dim: int) -> None:
        super().__init__()
        self.num_heads = num_heads
        self.num_kv_heads = num_kv_heads
        self.head_dim = head_dim
        self.scale = head_dim**-0.5
        self.k_cache = torch.empty(0)
        self.v_cache = torch.empty(0)

    def forward(
        self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, meta: AttentionMetadata
    ) -> torch.Tensor:
        """q: [T, heads, dim]; k, v: [T, kv_heads, dim]. Returns [T, heads * dim]."""
        num_blocks, block_size = self.k_cache.shape[:2]
        k_flat = self.k_cache.view(num_blocks * block_size, self.num_kv_heads, self.head_dim)
        v_flat = self.v_cache.view(num_blocks * block_size, self.num_kv_heads, self.head_dim)
        k_flat.index_copy_(0, meta.slot_mapping, k)
        v_flat.index_copy_(0, meta.slot_mapping, v)

        out = torch.empty_like(q)
        for group in meta.decodes:
            keys = self._gather(self.k_cache, group.block_tables)
            values = self._gather(self.v_cache, group.block_tables)
            qs = q[group.start : group.end].unsqueeze(2)
            out[group.start : group.end] = self._attend(qs, keys, values, group.mask).squeeze(2)
        for span in meta.prefills:
            qs = q[span.start : span.end].transpose(0, 1).unsqueeze(0)
            if span.block_table is None:
                keys = k[span.start : span.end].transpose(0, 1).unsqueeze(0)
                values = v[span.start : span.end].transpose(0, 1).unsqueeze(0)
                o = self._attend(qs, keys, values, None, causal=True)
            else:
                ctx = span.num_computed + span.end - span.start
                keys = self._gather(self.k_cache, span.block_table[None])[:, :, :ctx]
                values = self._gather(self.v_cache, span.block_table[None])[:, :, :ctx]
                mask = _chunk_causal_mask(span.end - span.start, span.num_computed, q.device)
                o = self._attend(qs, keys, values, mask)
            out[span.start : span.end] = o.squeeze(0).transpose(0, 1)
        return out.flatten(1)

    def _gather(self, cache: torch.Tensor, tables: torch.Tensor) -> torch.Tensor:
        """[B, max_blocks] block ids -> [B, kv_heads, max_blocks * block_size, dim]."""
        blocks = cache[tables]  # [B, nb, bs, kvh, d]
        b, nb, bs = blocks.shape[:3]
        return blocks.view(b, nb * bs, self.num_kv_heads, self.head_dim).transpose(1, 2)

    def _attend(
        self,
        q: torch.Tensor,
        k: torch.Tensor,
        v: torch.Tensor,
        mask: torch.Tensor | None,
        causal: bool = False,
    ) -> torch.Tensor:
        return F.scaled_dot_product_attention(
            q, k, v, attn_mask=mask, is_causal=causal, scale=self.scale,
            enable_gqa=self.num_heads != self.num_kv_heads,
        )


def _chunk_causal_mask(num_new: int, num_computed: int, device: torch.device) -> torch.Tensor:
    """Query i (at position num_computed + i) sees keys 0 .. num_computed + i."""
    rows = torch.arange(num_new, device=device)[:, None] + num_computed
    cols = torch.arange(num_computed + num_new, device=device)[None, :]
    return cols <= rows
