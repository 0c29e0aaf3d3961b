"""Runs one forward pass over the flat token list of every scheduled sequence."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import torch

from llm_engine.config import EngineConfig, ModelConfig
from llm_engine.engine.cuda_graph import DecodeCUDAGraphs, use_cuda_graphs
from llm_engine.engine.kv_sizing import plan_kv_cache
from llm_engine.engine.scheduler import SchedulerOutput
from llm_engine.engine.swap_space import HostAllocator, SwapSpace, default_host_allocator
from llm_engine.layers.attention import AttentionMetadata, DecodeGroup, PrefillSpan
from llm_engine.layers.paged_attention_cpu import load_kernel, paged_decode
from llm_engine.layers.sampler import Sampler, SampleResult
from llm_engine.models.llama import LlamaForCausalLM
from llm_engine.sequence import Sequence
from llm_engine.utils.safetensors_io import iter_safetensors

logger = logging.getLogger(__name__)


class ModelRunner:
    """Owns the weights, the KV cache and its swap space; turns a scheduler step into
    sampled tokens."""

    def __init__(self, config: EngineConfig, model_config: ModelConfig, model_dir: Path,
                 eos_token_ids: set[int], host_allocator: HostAllocator | None = None) -> None:
        self.config = config
        self.model_config = model_config
        self.device = config.torch_device
        self.dtype = config.torch_dtype
        self.block_size = config.block_size
        torch.manual_seed(config.seed)
        with torch.device(self.device):
            model = LlamaForCausalLM(model_config)
        model.load_weights(iter_safetensors(model_dir))
        self.model = model.to(self.dtype).eval()
        self._select_attention_backend()
        graphs = use_cuda_graphs(config, self.device, self.attention_backend)
        # With CUDA graphs the cache's last block takes padded rows' K/V (see cuda_graph.py).
        self.num_blocks = self._allocate_kv_cache(reserved_blocks=1 if graphs else 0)
        self.swap_space = self._allocate_swap_space(host_allocator or default_host_allocator)
        self.forward: Callable[..., torch.Tensor] = self.model
        if graphs:
            self.forward = DecodeCUDAGraphs(self.model, config, model_config, self.num_blocks,
                                            self.device)
        self.sampler = Sampler(eos_token_ids, torch.Generator().manual_seed(config.seed))

    def _kv_block_shape(self) -> tuple[int, ...]:
        """One block of every layer: [layers, K/V, kv_heads, block_size * head_dim]."""
        layers = self.model.attention_layers()
        # Read from the layers, not the model config: a sharded layer holds fewer heads.
        attn = layers[0]
        return (len(layers), 2, attn.num_kv_heads, self.block_size * attn.head_dim)

    def kv_bytes_per_block(self) -> int:
        elem = torch.empty((), dtype=self.dtype).element_size()
        return elem * int(torch.Size(self._kv_block_shape()).numel())

    def _bind_kv_cache(self, num_blocks: int) -> None:
        """One tensor for the whole cache; each attention layer gets views of its K and V."""
        layers, _, kvh, slots = self._kv_block_shape()
        d = self.model.attention_layers()[0].head_dim
        self.kv_cache = torch.zeros((layers, 2, kvh, num_blocks, slots), dtype=self.dtype,
                                    device=self.device)
        for i, attn in enumerate(self.model.attention_layers()):
            attn.k_cache = self.kv_cache[i, 0].view(kvh, num_blocks, d, self.block_size)
            attn.v_cache = self.kv_cache[i, 1].view(kvh, num_blocks, self.block_size, d)

    def _allocate_kv_cache(self, reserved_blocks: int) -> int:
        """Size and allocate the cache; returns the blocks the block manager may hand out."""
        plan = plan_kv_cache(self.config, self.device, self.kv_bytes_per_block(),
                             self._profile_forward, reserved_blocks)
        plan.check_fits(self.config.resolve_max_model_len(self.model_config), self.block_size,
                        self.config)
        self.kv_plan = plan
        self._bind_kv_cache(plan.num_blocks)
        logger.info("KV cache: %d blocks of %d tokens (%.2f GiB; %s)", plan.num_blocks,
                    self.block_size, plan.num_blocks * plan.bytes_per_block / 2**30, plan.detail)
        return plan.usable_blocks

    def _allocate_swap_space(self, allocator: HostAllocator) -> SwapSpace:
        per_block = self.kv_bytes_per_block()
        num = self.config.swap_space_bytes(self.num_blocks * per_block) // per_block
        if self.config.preemption_mode == "swap" and num == 0:
            raise ValueError(f"preemption_mode='swap' but swap_space={self.config.swap_space} GiB "
                             f"holds no block of {per_block} bytes: raise swap_space")
        logger.info("swap space: %d blocks (%.2f GiB)", num, num * per_block / 2**30)
        return SwapSpace(num, self._kv_block_shape(), self.dtype, allocator)

    @torch.inference_mode()
    def _profile_forward(self) -> int:
        """A forward pass at the full token budget, on a scratch cache just big enough;
        returns the scratch cache's bytes (part of the peak, not of the activations).

        Runs before the real cache exists. Prompts are cut at max_model_len, as the
        scheduler's would be; the logits (and a softmax, the sampler's largest buffer) are
        computed for up to max_num_seqs rows.
        """
        cfg = self.config
        tokens = cfg.max_num_batched_tokens
        span = min(tokens, cfg.resolve_max_model_len(self.model_config))
        scratch_blocks = -(-tokens // self.block_size)
        self._bind_kv_cache(scratch_blocks)
        starts = list(range(0, tokens, span))
        positions = torch.cat([torch.arange(min(span, tokens - s)) for s in starts]).to(self.device)
        slots = torch.arange(tokens, device=self.device)
        meta = AttentionMetadata(
            slot_blocks=slots // self.block_size, slot_offsets=slots % self.block_size,
            decodes=[], prefills=[PrefillSpan(s, min(s + span, tokens), 0, None) for s in starts])
        input_ids = torch.zeros(tokens, dtype=torch.long, device=self.device)
        hidden = self.model(input_ids, positions, meta)
        rows = min(cfg.max_num_seqs, tokens)
        torch.softmax(self.model.compute_logits(hidden[-rows:]).float(), dim=-1)
        self._bind_kv_cache(0)
        return scratch_blocks * self.kv_bytes_per_block()

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

    @torch.inference_mode()
    def execute(self, sched: SchedulerOutput) -> dict[Sequence, SampleResult]:
        """Apply the step's swaps, compute the scheduled tokens, and sample for every
        sequence that has caught up."""
        self.swap_blocks(sched)
        if not sched.seqs:
            return {}
        input_ids, positions, meta, sample_rows, sample_seqs = self._prepare(sched)
        hidden = self.forward(input_ids, positions, meta)
        if not sample_seqs:
            return {}
        logits = self.model.compute_logits(hidden[sample_rows])
        results = self.sampler(logits, sample_seqs)
        return dict(zip(sample_seqs, results, strict=True))

    def swap_blocks(self, sched: SchedulerOutput) -> None:
        """Copy blocks out, then in, before the forward pass writes any of them."""
        if sched.blocks_to_swap_out:
            self.swap_space.swap_out(self.kv_cache, sched.blocks_to_swap_out)
        if sched.blocks_to_swap_in:
            self.swap_space.swap_in(self.kv_cache, sched.blocks_to_swap_in)

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

    def _prepare(self, sched: SchedulerOutput):
        bs = self.block_size
        # Decodes (one token each) go first, shortest context first, so the attention can
        # batch neighbours of similar length.
        order = sorted(range(len(sched.seqs)), key=lambda i: (
            sched.num_tokens[i] != 1, sched.seqs[i].num_computed_tokens))
        tokens: list[int] = []
        positions: list[int] = []
        slot_blocks: list[int] = []
        decode_tables: list[list[int]] = []
        decode_lens: list[int] = []
        prefills: list[PrefillSpan] = []
        sample_rows: list[int] = []
        sample_seqs: list[Sequence] = []
        for i in order:
            seq, n = sched.seqs[i], sched.num_tokens[i]
            start = seq.num_computed_tokens
            row = len(tokens)
            tokens.extend(seq.token_ids[start : start + n])
            pos = range(start, start + n)
            positions.extend(pos)
            table = seq.block_table
            slot_blocks.extend(table[p // bs] for p in pos)
            if n == 1:
                decode_tables.append(table[: (start + bs) // bs])
                decode_lens.append(start + 1)
            else:
                bt = None
                if start:
                    bt = torch.tensor(table[: -(-(start + n) // bs)], device=self.device)
                prefills.append(PrefillSpan(row, row + n, start, bt))
            if start + n == seq.num_tokens:
                sample_rows.append(row + n - 1)
                sample_seqs.append(seq)

        dev = self.device
        positions_t = torch.tensor(positions, device=dev)
        meta = AttentionMetadata(
            slot_blocks=torch.tensor(slot_blocks, device=dev),
            slot_offsets=positions_t % bs,
            decodes=self._decode_groups(decode_tables, decode_lens),
            prefills=prefills,
        )
        return torch.tensor(tokens, device=dev), positions_t, meta, sample_rows, sample_seqs


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
