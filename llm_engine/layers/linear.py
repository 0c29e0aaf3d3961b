"""Linear layers, sharded Megatron-style across tensor-parallel ranks.

A column-parallel layer splits its output features: each rank computes its slice and no
communication follows. A row-parallel layer splits its input features: each rank computes
a partial sum that an all-reduce completes. Attention's q/k/v and the MLP's gate/up are
column-parallel (each rank owns whole heads and a slice of the MLP), o_proj and down_proj
row-parallel, so a decoder layer costs two all-reduces. Each parameter carries a
`weight_loader` that copies this rank's shard out of the full checkpoint tensor.

With one rank every layer is the plain GEMM below and nothing else. With
`quantization="int8"` each rank quantizes its own shard after loading (layers/
quantization/quantization.py): per-output-channel scales need nothing from the other ranks, and a
row-parallel rank's partial sums are dequantized before the all-reduce adds them.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn

from llm_engine.distributed.parallel_state import SINGLE, TensorParallelGroup, divide
from llm_engine.layers.backends import TORCH_BACKENDS, BackendLayer, Backends
from llm_engine.layers.quantization.quantization import Int8Weight

Gemm = Callable[[torch.Tensor, torch.Tensor, torch.Tensor | None], torch.Tensor]


# oneDNN builds (and torch's ideep layer caches, up to 1,024 entries) a GEMM primitive for
# every distinct row count M per weight shape, and each call at a new M leaves megabytes
# of allocator memory behind: serving, where M is whatever the scheduler packed, grew RSS
# by 40% in ten minutes. Rows are padded up to a bucket instead: M itself up to
# _EXACT_ROWS, then four buckets per power of two (at most 25% padding; 40 buckets up to
# 2,048 rows), so the primitives and the memory behind them stop growing once every
# bucket has been seen. benchmarks/memory_probe.py has the probes.
_EXACT_ROWS = 8
_BUCKETS_PER_OCTAVE = 4


def bucket_rows(m: int) -> int:
    """The row count a GEMM of m rows is padded to."""
    if m <= _EXACT_ROWS:
        return m
    step = 1 << max(0, (m - 1).bit_length() - _BUCKETS_PER_OCTAVE.bit_length())
    return -(-m // step) * step


def linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
    """x @ weight.T + bias through oneDNN's fp32 GEMM, rows padded to their bucket (where
    the selector chose it: layers/selector.py); F.linear for what oneDNN does not take here
    (off CPU, not fp32, not 2-D)."""
    if x.device.type == "cpu" and x.dtype == torch.float32 and x.dim() == 2:
        m = x.shape[0]
        padded = bucket_rows(m)
        if padded != m:
            x = F.pad(x, (0, 0, 0, padded - m))
        return torch.ops.mkldnn._linear_pointwise(x, weight, bias, "none", [], "")[:m]
    return F.linear(x, weight, bias)


def fp32_gemm(backends: Backends) -> Gemm:
    """The fp32 GEMM the engine chose: oneDNN's (`linear`) or torch's."""
    return linear if backends.onednn_linear else F.linear


class _ShardedLinear(BackendLayer):
    """weight [output_size, input_size] and bias [output_size], as this rank holds them."""

    def __init__(self, input_size: int, output_size: int, bias: bool,
                 tp: TensorParallelGroup) -> None:
        super().__init__()
        self.tp = tp
        self.weight = nn.Parameter(torch.empty(output_size, input_size), requires_grad=False)
        self.weight.weight_loader = self.weight_loader
        self.bias = None
        if bias:
            self.bias = nn.Parameter(torch.empty(output_size), requires_grad=False)
            self.bias.weight_loader = self.weight_loader
        self.int8: Int8Weight | None = None

    def bind(self, backends: Backends) -> None:
        self.gemm = fp32_gemm(backends)

    def _local_bias(self) -> torch.Tensor | None:
        """The bias this rank adds."""
        return self.bias

    def quantize_int8(self, act_max: torch.Tensor | None = None,
                      backends: Backends = TORCH_BACKENDS) -> None:
        """Replace the fp32 weight by its int8 form (after loading; frees the fp32 copy)."""
        self.int8 = Int8Weight.quantize(self.weight, self._local_bias(), act_max, backends)
        self.weight = self.bias = None

    def _gemm(self, x: torch.Tensor) -> torch.Tensor:
        if self.int8 is not None:
            return self.int8(x)
        return self.gemm(x, self.weight, self._local_bias())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self._gemm(x)


class ColumnParallelLinear(_ShardedLinear):
    """Output features split across ranks; each rank returns its slice."""

    def __init__(self, input_size: int, output_size: int, bias: bool = False,
                 tp: TensorParallelGroup = SINGLE) -> None:
        super().__init__(input_size, divide(output_size, tp.size), bias, tp)

    def weight_loader(self, param: nn.Parameter, loaded: torch.Tensor) -> None:
        size = param.shape[0]
        param.copy_(loaded.narrow(0, self.tp.rank * size, size))


class MergedColumnParallelLinear(ColumnParallelLinear):
    """Several column-parallel matrices side by side (gate and up): one GEMM instead of two.

    Each rank holds its slice of every part, in part order, so the output splits into the
    parts with a plain `chunk`.
    """

    def __init__(self, input_size: int, output_sizes: list[int], bias: bool = False,
                 tp: TensorParallelGroup = SINGLE) -> None:
        self.output_sizes = output_sizes
        super().__init__(input_size, sum(output_sizes), bias, tp)

    def weight_loader(self, param: nn.Parameter, loaded: torch.Tensor,  # type: ignore[override]
                      shard_id: int) -> None:
        tp = self.tp
        size = divide(self.output_sizes[shard_id], tp.size)
        offset = divide(sum(self.output_sizes[:shard_id]), tp.size)
        param.narrow(0, offset, size).copy_(loaded.narrow(0, tp.rank * size, size))


class QKVParallelLinear(ColumnParallelLinear):
    """q, k and v projections packed; each rank owns whole query heads and their K/V heads.

    When there are fewer K/V heads than ranks, each rank holds a copy of the one K/V head
    its query heads read (as vLLM does), so the group size must be a multiple of them.
    """

    def __init__(self, hidden_size: int, head_dim: int, num_heads: int, num_kv_heads: int,
                 bias: bool = False, tp: TensorParallelGroup = SINGLE) -> None:
        self.head_dim = head_dim
        self.total_num_kv_heads = num_kv_heads
        self.num_heads = divide(num_heads, tp.size)
        self.num_kv_heads = max(1, num_kv_heads // tp.size)
        self.q_size = self.num_heads * head_dim
        self.kv_size = self.num_kv_heads * head_dim
        super().__init__(hidden_size, (num_heads + 2 * self.num_kv_heads * tp.size) * head_dim,
                         bias, tp)

    def weight_loader(self, param: nn.Parameter, loaded: torch.Tensor,  # type: ignore[override]
                      shard_id: str) -> None:
        if shard_id == "q":
            offset, size, start = 0, self.q_size, self.tp.rank * self.q_size
        else:
            offset = self.q_size if shard_id == "k" else self.q_size + self.kv_size
            # Rank r starts at K/V head r * heads // ranks: its own slice, or the shared head.
            first_head = self.tp.rank * self.total_num_kv_heads // self.tp.size
            size, start = self.kv_size, first_head * self.head_dim
        param.narrow(0, offset, size).copy_(loaded.narrow(0, start, size))


class RowParallelLinear(_ShardedLinear):
    """Input features split across ranks; the partial outputs are summed by an all-reduce."""

    def __init__(self, input_size: int, output_size: int, bias: bool = False,
                 tp: TensorParallelGroup = SINGLE) -> None:
        super().__init__(divide(input_size, tp.size), output_size, bias, tp)

    def weight_loader(self, param: nn.Parameter, loaded: torch.Tensor) -> None:
        if param.dim() == 1:  # the bias is whole on every rank and added once, by rank 0
            param.copy_(loaded)
            return
        size = param.shape[1]
        param.copy_(loaded.narrow(1, self.tp.rank * size, size))

    def _local_bias(self) -> torch.Tensor | None:
        return self.bias if self.tp.is_driver else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self._gemm(x)
        return y if self.tp.size == 1 else self.tp.all_reduce(y)
