"""CUDA graphs for decode steps: one captured forward per batch size, replayed with new inputs.

A decode step of a small model is a few hundred short kernel launches whose launch cost
exceeds their work; a captured graph replays them as one launch. A graph replays fixed
tensor addresses and shapes, so each captured batch size reads its inputs from static
buffers (token ids, positions, slots, block tables padded to the longest sequence the
engine admits, context lengths), and a step of n decodes runs the graph of the smallest
captured size >= n, its rows past n padded. Padded rows write their K/V into a scratch
block that the block manager never hands out (the model runner keeps the cache's last
block back) and attend to that one slot: they touch no sequence's cache and yield no NaN.

Steps with prefill chunks, or more decodes than the largest size, run eagerly. Graphs need
attention metadata that lives in tensors of fixed shape: the Triton decode kernel reads
block tables and lengths from tensors, the torch path builds per-step padded masks, so
graphs are used only with the Triton backend. The KV cache tensors must not be
reallocated after capture (the graphs hold their addresses).
"""

from __future__ import annotations

import bisect
import logging

import torch

from llm_engine.config import EngineConfig
from llm_engine.layers.attention.attention import AttentionMetadata, DecodeGroup
from llm_engine.layers.backends import AttentionBackend

logger = logging.getLogger(__name__)

# vLLM's batch sizes for decode graphs: 1, 2, 4, then every multiple of 8. Past 256 rows a
# step's launches are amortized over enough work that capturing more sizes buys little.
_MAX_CAPTURE = 256


def use_cuda_graphs(config: EngineConfig, device: torch.device,
                    attention_backend: AttentionBackend) -> bool:
    """Whether decode steps run as CUDA graphs (logged when asked for but not possible)."""
    if config.enforce_eager:
        return False
    if device.type != "cuda" or attention_backend != AttentionBackend.TRITON:
        logger.warning("enforce_eager=False ignored: CUDA graphs need a CUDA device and the "
                       "Triton attention backend (here %s, %s)", device, attention_backend.value)
        return False
    if config.tensor_parallel_size > 1:
        # A captured step would hold NCCL collectives; every rank would have to capture and
        # replay in lockstep, which has not been built (or run) yet.
        logger.warning("enforce_eager=False ignored: CUDA graphs are not supported with "
                       "tensor_parallel_size > 1")
        return False
    return True


def capture_sizes(config: EngineConfig) -> list[int]:
    # A decode step holds at most max_num_seqs rows, and at most one per batched token.
    cap = min(config.max_num_seqs, config.max_num_batched_tokens, _MAX_CAPTURE)
    return sorted({s for s in [1, 2, 4, *range(8, cap + 1, 8)] if s <= cap} | {cap})


class StaticDecodeInputs:
    """Fixed-address inputs of the captured decode forwards, rows past the step's padded."""

    def __init__(self, max_rows: int, max_blocks: int, scratch_block: int,
                 device: torch.device) -> None:
        def full(shape: tuple[int, ...], value: int) -> torch.Tensor:
            return torch.full(shape, value, dtype=torch.long, device=device)

        self.scratch_block = scratch_block
        self.input_ids = full((max_rows,), 0)
        self.positions = full((max_rows,), 0)
        self.slot_blocks = full((max_rows,), scratch_block)
        self.slot_offsets = full((max_rows,), 0)
        self.block_tables = full((max_rows, max_blocks), scratch_block)
        self.lens = full((max_rows,), 1)

    @property
    def max_blocks(self) -> int:
        return self.block_tables.shape[1]

    def meta(self, rows: int) -> AttentionMetadata:
        """Metadata over the first `rows` rows: views, so a graph reads what `load` wrote."""
        group = DecodeGroup(0, rows, self.block_tables[:rows], self.lens[:rows], mask=None)
        return AttentionMetadata(self.slot_blocks[:rows], self.slot_offsets[:rows], [group], [])

    def load(self, input_ids: torch.Tensor, positions: torch.Tensor, meta: AttentionMetadata,
             rows: int) -> None:
        """Copy a pure-decode step (one decode group) in; pad rows [n, rows)."""
        n = input_ids.shape[0]
        group = meta.decodes[0]
        width = group.block_tables.shape[1]
        self.input_ids[:n].copy_(input_ids)
        self.positions[:n].copy_(positions)
        self.slot_blocks[:n].copy_(meta.slot_blocks)
        self.slot_offsets[:n].copy_(meta.slot_offsets)
        # Columns past `width` keep stale block ids: the kernel reads only ceil(len / block_size).
        self.block_tables[:n, :width].copy_(group.block_tables)
        self.lens[:n].copy_(group.lens)
        # Reset the padding every step: a larger earlier step left real slots in these rows.
        self.input_ids[n:rows] = 0
        self.positions[n:rows] = 0
        self.slot_blocks[n:rows] = self.scratch_block
        self.slot_offsets[n:rows] = 0
        self.block_tables[n:rows, 0] = self.scratch_block
        self.lens[n:rows] = 1


class DecodeCUDAGraphs:
    """The model's forward, replayed from a CUDA graph for pure-decode steps that fit.

    Called like the model: `(input_ids, positions, meta) -> hidden states [rows, hidden]`.
    """

    def __init__(self, model: torch.nn.Module, config: EngineConfig, scratch_block: int,
                 device: torch.device) -> None:
        self.model = model
        self.sizes = capture_sizes(config)
        assert config.max_model_len is not None, "resolved by LLMEngine"
        max_blocks = -(-config.max_model_len // config.block_size)
        self.inputs = StaticDecodeInputs(self.sizes[-1], max_blocks, scratch_block, device)
        self.graphs: dict[int, torch.cuda.CUDAGraph] = {}
        self.outputs: dict[int, torch.Tensor] = {}
        self._capture(device)

    @torch.inference_mode()
    def _capture(self, device: torch.device) -> None:
        # One side stream for warm-up and capture: Triton compiles its kernel and cuBLAS
        # creates its handle and workspace for a stream at first use, neither of which may
        # happen during capture.
        stream = torch.cuda.Stream(device)
        stream.wait_stream(torch.cuda.current_stream(device))
        with torch.cuda.stream(stream):
            for size in self.sizes:
                self._forward(size)
        stream.synchronize()
        pool = torch.cuda.graph_pool_handle()
        # Largest first: the smaller graphs then reuse its memory from the shared pool.
        for size in reversed(self.sizes):
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph, pool=pool, stream=stream):
                self.outputs[size] = self._forward(size)
            self.graphs[size] = graph
        torch.cuda.synchronize(device)
        logger.info("CUDA graphs captured for decode batch sizes %s", self.sizes)

    def _forward(self, rows: int) -> torch.Tensor:
        i = self.inputs
        return self.model(i.input_ids[:rows], i.positions[:rows], i.meta(rows))

    def graph_size(self, meta: AttentionMetadata, rows: int) -> int | None:
        """The captured batch size that runs this step, or None to run it eagerly."""
        if meta.prefills or len(meta.decodes) != 1 or rows > self.sizes[-1]:
            return None
        if meta.decodes[0].block_tables.shape[1] > self.inputs.max_blocks:
            return None
        return self.sizes[bisect.bisect_left(self.sizes, rows)]

    def __call__(self, input_ids: torch.Tensor, positions: torch.Tensor,
                 meta: AttentionMetadata) -> torch.Tensor:
        rows = input_ids.shape[0]
        size = self.graph_size(meta, rows)
        if size is None:
            return self.model(input_ids, positions, meta)
        self.inputs.load(input_ids, positions, meta, size)
        self.graphs[size].replay()
        return self.outputs[size][:rows]
