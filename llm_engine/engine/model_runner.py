"""Runs one forward pass over the flat token list of every scheduled sequence."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import torch

from llm_engine.config import EngineConfig, ModelConfig
from llm_engine.distributed.parallel_state import SINGLE, TensorParallelGroup
from llm_engine.engine.cuda_graph import DecodeCUDAGraphs, use_cuda_graphs
from llm_engine.engine.scheduler import SchedulerOutput
from llm_engine.engine.step_input import StepInput
from llm_engine.layers.attention import AttentionMetadata, DecodeGroup, PrefillSpan
from llm_engine.layers.paged_attention_cpu import load_kernel, paged_decode
from llm_engine.layers.sampler import Sampler, SampleResult
from llm_engine.models.llama import LlamaForCausalLM
from llm_engine.sequence import Sequence
from llm_engine.utils.safetensors_io import iter_safetensors

logger = logging.getLogger(__name__)


class ModelRunner:
    """Owns the weights and the KV cache; turns a scheduler step into sampled tokens.

    Under tensor parallelism one runner lives in each rank's process and holds that rank's
    shard of the weights and of the K/V heads; every rank runs `execute_step` on the same
    StepInput, and only the driver's runner (rank 0) samples.
    """

    def __init__(self, config: EngineConfig, model_config: ModelConfig, model_dir: Path,
                 eos_token_ids: set[int], tp: TensorParallelGroup = SINGLE) -> None:
        self.config = config
        self.model_config = model_config
        self.tp = tp
        self.device = tp.device(config.torch_device)
        self.dtype = config.torch_dtype
        self.block_size = config.block_size
        torch.manual_seed(config.seed)
        with torch.device(self.device):
            model = LlamaForCausalLM(model_config, tp)
        model.load_weights(iter_safetensors(model_dir))
        self.model = model.to(self.dtype).eval()
        self.num_kv_heads = self.model.attention_layers()[0].num_kv_heads
        self.num_blocks = self._allocate_kv_cache()
        self._select_attention_backend()
        self.forward: Callable[..., torch.Tensor] = self.model
        if use_cuda_graphs(config, self.device, self.attention_backend):
            self.num_blocks -= 1  # the last block takes padded rows' K/V (see cuda_graph.py)
            self.forward = DecodeCUDAGraphs(self.model, config, model_config, self.num_blocks,
                                            self.device)
        self.sampler = Sampler(eos_token_ids, torch.Generator().manual_seed(config.seed))

    def kv_bytes_per_block(self) -> int:
        """Bytes of one block on this rank (its share of the K/V heads)."""
        cfg = self.model_config
        elem = torch.empty((), dtype=self.dtype).element_size()
        per_token = 2 * cfg.num_hidden_layers * self.num_kv_heads * cfg.head_dim * elem
        return per_token * self.block_size

    def _allocate_kv_cache(self) -> int:
        per_block = self.kv_bytes_per_block()
        if self.config.num_gpu_blocks_override is not None:
            num_blocks = self.config.num_gpu_blocks_override
        elif self.device.type == "cuda":
            free, total = torch.cuda.mem_get_info(self.device)
            used = total - free
            # Leave room for one step's activations at the full token budget.
            act = 64 * self.config.max_num_batched_tokens * self.model_config.hidden_size * 4
            budget = total * self.config.gpu_memory_utilization - used - act
            num_blocks = int(budget // per_block)
        else:
            # The ranks of a CPU group share the host's memory: the budget is for all of them.
            budget = self.config.default_kv_cache_memory() // self.tp.size
            num_blocks = int(budget // per_block)
        # Every rank must offer the scheduler the same blocks.
        num_blocks = self.tp.min(num_blocks, self.device)
        if num_blocks < 1:
            raise ValueError(
                f"no memory left for the KV cache ({per_block} bytes a block): raise "
                "kv_cache_memory (CPU) or gpu_memory_utilization (CUDA)"
            )
        cfg = self.model_config
        kvh, bs, d = self.num_kv_heads, self.block_size, cfg.head_dim
        for attn in self.model.attention_layers():
            attn.k_cache = torch.zeros((kvh, num_blocks, d, bs), dtype=self.dtype, device=self.device)
            attn.v_cache = torch.zeros((kvh, num_blocks, bs, d), dtype=self.dtype, device=self.device)
        logger.info("KV cache: %d blocks of %d tokens (%.2f GiB)", num_blocks, self.block_size,
                    num_blocks * per_block / 2**30)
        return num_blocks

    def _select_attention_backend(self) -> None:
        backend = self.config.attention_backend
        triton_kernel = _triton_kernel(self.device) if backend in ("auto", "triton") else None
        if backend == "auto" and triton_kernel is not None:
            backend = "triton"
        elif backend == "triton" and triton_kernel is None:
            raise ValueError("attention_backend='triton' but Triton is missing or its kernel "
                             "failed to compile (see the warning above); use 'torch' or 'auto'")
        elif backend == "auto":
            cpu_fp32 = self.device.type == "cpu" and self.dtype == torch.float32
            backend = "cpu_kernel" if cpu_fp32 and load_kernel() is not None else "torch"
        elif backend == "cpu_kernel" and load_kernel() is None:
            raise ValueError("attention_backend='cpu_kernel' but the kernel could not be "
                             "compiled (see the warning above); use 'torch' or 'auto'")
        self.attention_backend = backend
        kernel = {"cpu_kernel": paged_decode, "triton": triton_kernel}.get(backend)
        for attn in self.model.attention_layers():
            attn.decode_kernel = kernel

    def execute(self, sched: SchedulerOutput) -> dict[Sequence, SampleResult]:
        """Compute the scheduled tokens; sample for every sequence that has caught up."""
        return self.execute_step(*StepInput.from_scheduler_output(sched, self.block_size))

    @torch.inference_mode()
    def execute_step(self, step: StepInput, sample_seqs: list[Sequence] | None = None
                     ) -> dict[Sequence, SampleResult]:
        """Run the forward pass of one step on this rank. The driver passes the sequences
        to sample for; the other ranks pass none, join the collectives and return {}."""
        input_ids, positions, meta = self._prepare(step)
        hidden = self.forward(input_ids, positions, meta)
        if not step.sample_rows:
            return {}
        logits = self.model.compute_logits(hidden[step.sample_rows])
        if logits is None or not sample_seqs:
            return {}
        results = self.sampler(logits, sample_seqs)
        return dict(zip(sample_seqs, results, strict=True))

    def _decode_groups(self, tables: list[list[int]], lens: list[int]) -> list[DecodeGroup]:
        """Split length-sorted decode rows where the context length more than doubles."""
        groups = []
        start = 0
        for end in range(1, len(lens) + 1):
            # The Triton kernel reads each row's length: one group, one launch per layer.
            if end < len(lens) and (self.attention_backend == "triton" or lens[end] <= 2 * lens[start]):
                continue
            width = len(tables[end - 1])
            padded = [t + [0] * (width - len(t)) for t in tables[start:end]]
            keys = torch.arange(width * self.block_size, device=self.device)
            group_lens = torch.tensor(lens[start:end], device=self.device)
            mask = keys[None, :] < group_lens[:, None]
            groups.append(DecodeGroup(start, end, torch.tensor(padded, device=self.device),
                                      group_lens, mask[:, None, :]))
            start = end
        return groups

    def _prepare(self, step: StepInput
                 ) -> tuple[torch.Tensor, torch.Tensor, AttentionMetadata]:
        dev = self.device
        prefills = [
            PrefillSpan(c.start, c.end, c.num_computed,
                        None if c.block_table is None else torch.tensor(c.block_table, device=dev))
            for c in step.prefills
        ]
        positions_t = torch.tensor(step.positions, device=dev)
        meta = AttentionMetadata(
            slot_blocks=torch.tensor(step.slot_blocks, device=dev),
            slot_offsets=positions_t % self.block_size,
            decodes=self._decode_groups(step.decode_tables, step.decode_lens),
            prefills=prefills,
        )
        return torch.tensor(step.token_ids, device=dev), positions_t, meta


def _triton_kernel(device: torch.device) -> Callable[..., torch.Tensor] | None:
    """The Triton decode kernel on CUDA where Triton imports and compiles, else None."""
    if device.type != "cuda":
        return None
    try:
        from llm_engine.layers.paged_attention_triton import load_kernel
    except ImportError as exc:
        logger.warning("Triton unavailable (%s); using the torch attention path", exc)
        return None
    return load_kernel(device)
