"""Token embedding and LM head with the vocabulary split across tensor-parallel ranks.

Each rank holds a contiguous range of ceil(vocab / ranks) rows; the last range is padded
with zero rows when the vocabulary does not divide. An embedding lookup finds each token
on exactly one rank (the others contribute zeros to an all-reduce); the LM head computes
this rank's logits, and the driver gathers the ranges and drops the padding.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from llm_engine.distributed.parallel_state import SINGLE, TensorParallelGroup
from llm_engine.layers.backends import TORCH_BACKENDS, BackendLayer, Backends
from llm_engine.layers.linear import fp32_gemm
from llm_engine.layers.quantization.quantization import Int8Weight


class VocabParallelEmbedding(nn.Module):
    def __init__(self, num_embeddings: int, embedding_dim: int,
                 tp: TensorParallelGroup = SINGLE) -> None:
        super().__init__()
        self.tp = tp
        self.num_embeddings = num_embeddings
        self.rows_per_rank = -(-num_embeddings // tp.size)
        self.vocab_start = tp.rank * self.rows_per_rank
        self.weight = nn.Parameter(torch.empty(self.rows_per_rank, embedding_dim),
                                   requires_grad=False)
        self.weight.weight_loader = self.weight_loader

    def weight_loader(self, param: nn.Parameter, loaded: torch.Tensor) -> None:
        rows = loaded[self.vocab_start : self.vocab_start + self.rows_per_rank]
        param[: rows.shape[0]].copy_(rows)
        param[rows.shape[0] :].zero_()

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        if self.tp.size == 1:
            return F.embedding(input_ids, self.weight)
        local = input_ids - self.vocab_start
        here = (local >= 0) & (local < self.rows_per_rank)
        x = F.embedding(local.masked_fill(~here, 0), self.weight)
        return self.tp.all_reduce(x.masked_fill_(~here[:, None], 0.0))


class ParallelLMHead(VocabParallelEmbedding, BackendLayer):
    """Logits over the vocabulary; with several ranks only the driver gets them.

    With int8 the head keeps its fp32 weight too: it is usually the embedding's, tied.
    """

    int8: Int8Weight | None = None

    def bind(self, backends: Backends) -> None:
        self.gemm = fp32_gemm(backends)

    def quantize_int8(self, act_max: torch.Tensor | None = None,
                      backends: Backends = TORCH_BACKENDS) -> None:
        self.int8 = Int8Weight.quantize(self.weight, None, act_max, backends)

    def forward(self, hidden: torch.Tensor) -> torch.Tensor | None:  # type: ignore[override]
        logits = self.gemm(hidden, self.weight, None) if self.int8 is None else self.int8(hidden)
        if self.tp.size == 1:
            return logits
        full = self.tp.gather_to_driver(logits, dim=-1)
        return None if full is None else full[:, : self.num_embeddings]
