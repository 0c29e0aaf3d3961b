"""Runs one forward pass over the flat token list of every scheduled sequence."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import torch

from llm_engine.config import EngineConfig, ModelConfig
from llm_engine.distributed.parallel_state import SINGLE, TensorParallelGroup
from llm_engine.engine.calibration_cache import (
    cache_path,
    calibration_key,
    load_maxima,
    save_maxima,
)
from llm_engine.engine.cuda_graph import DecodeCUDAGraphs, use_cuda_graphs
from llm_engine.engine.kv_sizing import plan_kv_cache
from llm_engine.engine.scheduler import SchedulerOutput
from llm_engine.engine.step_input import PromptLogprobSpan, StepInput
from llm_engine.engine.swap_space import HostAllocator, SwapSpace, default_host_allocator
from llm_engine.layers.attention.attention import AttentionMetadata, DecodeGroup, PrefillSpan
from llm_engine.layers.backends import AttentionBackend, bind_backends
from llm_engine.layers.quantization.calibration import calibration_windows, record_input_maxima
from llm_engine.layers.sampler import Sampler, SampleResult
from llm_engine.layers.selector import select_backends
from llm_engine.models.llama import LlamaForCausalLM
from llm_engine.sequence import Sequence
from llm_engine.spec_decode.rejection_sampler import RejectionSampler
from llm_engine.structured_output import StructuredOutputManager
from llm_engine.tokenizer import Tokenizer
from llm_engine.utils.safetensors_io import iter_safetensors

logger = logging.getLogger(__name__)


class ModelRunner:
    """Owns the weights, the KV cache and its swap space; turns a scheduler step into
    sampled tokens.

    Under tensor parallelism one runner lives in each rank's process and holds that rank's
    shard of the weights, of the K/V heads and of the swap space; every rank runs
    `execute_step` on the same StepInput, and only the driver's runner (rank 0) samples.
    """

    def __init__(self, config: EngineConfig, model_config: ModelConfig, model_dir: Path,
                 eos_token_ids: set[int], tp: TensorParallelGroup = SINGLE,
                 host_allocator: HostAllocator | None = None) -> None:
        self.config = config
        self.model_config = model_config
        self.tp = tp
        self.device = tp.device(config.torch_device)
        self.dtype = config.torch_dtype
        self.kv_dtype = config.torch_kv_cache_dtype
        self.block_size = config.block_size
        # LLMEngine resolved it (EngineConfig.resolve_max_model_len) before any rank started.
        assert config.max_model_len is not None, "a ModelRunner takes the engine's resolved config"
        self.max_model_len = config.max_model_len
        torch.manual_seed(config.seed)
        with torch.device(self.device):
            model = LlamaForCausalLM(model_config, tp)
        model.load_weights(iter_safetensors(model_dir))
        self.model = model.to(self.dtype).eval()
        quantization = config.quantization_method
        # Every kernel choice, once (layers/selector.py), handed to the layers.
        self.backends = select_backends(self.device, self.dtype, self.kv_dtype,
                                        model_config.head_dim,
                                        AttentionBackend(config.attention_backend),
                                        int8=quantization is not None)
        self.attention_backend = self.backends.decode
        bind_backends(self.model, self.backends)
        if quantization is not None:
            self.model.quantize(quantization, self._calibrate(model_dir), self.backends)
        graphs = use_cuda_graphs(config, self.device, self.attention_backend)
        # With CUDA graphs the cache's last block takes padded rows' K/V (see cuda_graph.py).
        self.num_blocks = self._allocate_kv_cache(reserved_blocks=1 if graphs else 0)
        self.swap_space = self._allocate_swap_space(host_allocator or default_host_allocator)
        self.forward: Callable[..., torch.Tensor] = self.model
        if graphs:
            self.forward = DecodeCUDAGraphs(self.model, config, self.num_blocks, self.device)
        self.sampler = Sampler(eos_token_ids, torch.Generator().manual_seed(config.seed))
        self.rejection_sampler = RejectionSampler(self.sampler)

    def set_structured_outputs(self, manager: StructuredOutputManager) -> None:
        """The grammar compiler the sampler masks logits with (the driver's runner only)."""
        self.sampler.structured = manager

    def _kv_block_shape(self) -> tuple[int, ...]:
        """One block of every layer: [layers, K/V, kv_heads, block_size * head_dim]."""
        layers = self.model.attention_layers()
        # Read from the layers, not the model config: a sharded layer holds fewer heads.
        attn = layers[0]
        return (len(layers), 2, attn.num_kv_heads, self.block_size * attn.head_dim)

    def kv_bytes_per_block(self) -> int:
        """Bytes of one block on this rank (its share of the K/V heads)."""
        elem = torch.empty((), dtype=self.kv_dtype).element_size()
        return elem * int(torch.Size(self._kv_block_shape()).numel())

    def _bind_kv_cache(self, num_blocks: int) -> None:
        """One tensor for the whole cache; each attention layer gets views of its K and V."""
        layers, _, kvh, slots = self._kv_block_shape()
        d = self.model.attention_layers()[0].head_dim
        self.kv_cache = torch.zeros((layers, 2, kvh, num_blocks, slots), dtype=self.kv_dtype,
                                    device=self.device)
        for i, attn in enumerate(self.model.attention_layers()):
            attn.k_cache = self.kv_cache[i, 0].view(kvh, num_blocks, d, self.block_size)
            attn.v_cache = self.kv_cache[i, 1].view(kvh, num_blocks, self.block_size, d)

    def _allocate_kv_cache(self, reserved_blocks: int) -> int:
        """Size and allocate the cache; returns the blocks the block manager may hand out."""
        plan = plan_kv_cache(self.config, self.device, self.kv_bytes_per_block(),
                             self._profile_forward, reserved_blocks, self.tp.size)
        # Every rank must offer the scheduler the same blocks (and fail the check alike).
        plan = replace(plan, num_blocks=self.tp.min(plan.num_blocks, self.device))
        plan.check_fits(self.max_model_len, self.block_size, self.config)
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
        return SwapSpace(num, self._kv_block_shape(), self.kv_dtype, allocator)

    def _calibrate(self, model_dir: Path) -> dict[str, torch.Tensor]:
        """Each quantizable layer's largest |input| per channel over the calibration text:
        loaded from the cache beside the weights when an earlier start computed it under
        the same key (engine/calibration_cache.py), else computed and cached. Without a
        tokenizer (a bare weights folder) nothing is smoothed."""
        if not (model_dir / "tokenizer.json").is_file():
            logger.warning("quantization: %s has no tokenizer.json to calibrate with; int8 "
                           "without smoothing (perplexity about 3%% higher)", model_dir)
            return {}
        tokenizer = Tokenizer.from_pretrained(model_dir)
        windows = calibration_windows(lambda text: tokenizer.encode(text, add_special_tokens=False),
                                      self.max_model_len)
        layers = self.model.quantizable_layers()
        # What the fp32 forward pass is built from and runs on besides the weights: the
        # config.json fields, the kernels, the dtypes (a bf16 cache rounds the K/V the
        # prefill reads back), the cache's block size and this rank's shard.
        context = {"model": repr(self.model_config), "backends": self.backends.describe(),
                   "dtype": str(self.dtype), "kv_dtype": str(self.kv_dtype),
                   "block_size": str(self.block_size), "device": self.device.type,
                   "rank": f"{self.tp.rank}/{self.tp.size}"}
        key = calibration_key(model_dir, windows, context)
        path = cache_path(model_dir, key)
        maxima = load_maxima(path, key, layers)
        if maxima is None:
            maxima = self._record_maxima(windows, layers)
            save_maxima(path, key, maxima)
        return maxima

    @torch.inference_mode()
    def _record_maxima(self, windows: list[list[int]], layers: dict[str, torch.nn.Module]
                       ) -> dict[str, torch.Tensor]:
        """The maxima read by the fp32 model over `windows` on a scratch cache
        (layers/quantization/calibration.py); runs before the real cache exists."""
        with record_input_maxima(layers) as maxima:
            for ids in windows:
                hidden = self._scratch_prefill(torch.tensor(ids, device=self.device), len(ids))
                self.model.compute_logits(hidden)
        self._bind_kv_cache(0)
        return maxima

    def _scratch_prefill(self, input_ids: torch.Tensor, span: int) -> torch.Tensor:
        """The hidden states of `input_ids` read as prompts of `span` tokens each (the last
        one shorter), from position 0, on a scratch cache bound just big enough. Only before
        the real cache exists: the caller unbinds it (`_bind_kv_cache(0)`)."""
        tokens = input_ids.shape[0]
        self._bind_kv_cache(-(-tokens // self.block_size))
        starts = list(range(0, tokens, span))
        positions = torch.cat([torch.arange(min(span, tokens - s)) for s in starts]).to(self.device)
        slots = torch.arange(tokens, device=self.device)
        meta = AttentionMetadata(
            slot_blocks=slots // self.block_size, slot_offsets=slots % self.block_size,
            decodes=[], prefills=[PrefillSpan(s, min(s + span, tokens), 0, None) for s in starts])
        return self.model(input_ids, positions, meta)

    @torch.inference_mode()
    def _profile_forward(self) -> int:
        """A forward pass at the full token budget, on a scratch cache just big enough;
        returns the scratch cache's bytes (part of the peak, not of the activations).

        Runs before the real cache exists. Prompts are cut at max_model_len, as the
        scheduler's would be; the logits (and a softmax, the sampler's largest buffer) are
        computed for up to max_num_seqs rows (times 1 + drafts with speculative decoding).
        """
        cfg = self.config
        tokens = cfg.max_num_batched_tokens
        span = min(tokens, self.max_model_len)
        hidden = self._scratch_prefill(torch.zeros(tokens, dtype=torch.long, device=self.device),
                                       span)
        drafts = cfg.speculative_config.num_speculative_tokens if cfg.speculative_config else 0
        rows = min(cfg.max_num_seqs * (1 + drafts), tokens)
        logits = self.model.compute_logits(hidden[-rows:])  # None on ranks other than 0
        if logits is not None:
            torch.softmax(logits.float(), dim=-1)
        self._bind_kv_cache(0)
        return -(-tokens // self.block_size) * self.kv_bytes_per_block()

    def execute(self, sched: SchedulerOutput) -> dict[Sequence, list[SampleResult]]:
        """Compute the scheduled tokens; sample for every sequence that has caught up: one
        token, or, for a sequence with drafts, the 1 to 1 + drafts tokens it keeps."""
        return self.execute_step(*StepInput.from_scheduler_output(sched, self.block_size))

    @torch.inference_mode()
    def execute_step(self, step: StepInput, sample_seqs: list[Sequence] | None = None,
                     prompt_spans: list[PromptLogprobSpan] | None = None
                     ) -> dict[Sequence, list[SampleResult]]:
        """Run the forward pass of one step on this rank. The driver passes the sequences
        to sample for and the prompt positions to report logprobs of (appended to their
        sequences' `prompt_logprobs`); the other ranks pass none, join the collectives and
        return {}. The step's swaps come first: each rank copies its shard of the blocks."""
        self.swap_blocks(step)
        if not step.token_ids:
            return {}
        input_ids, positions, meta = self._prepare(step)
        hidden = self.forward(input_ids, positions, meta)
        out: dict[Sequence, list[SampleResult]] = {}
        if step.sample_rows:
            logits = self.model.compute_logits(hidden[step.sample_rows])
            if logits is not None and sample_seqs:
                out = self._sample(logits, sample_seqs)
        if step.prompt_logprob_rows:
            self._prompt_logprobs(hidden[step.prompt_logprob_rows], prompt_spans or [])
        return out

    def _prompt_logprobs(self, hidden: torch.Tensor, spans: list[PromptLogprobSpan]) -> None:
        """Logits of the prompt rows, max_num_seqs rows at a time: the size the memory
        profile ran the LM head and the softmax at, so a long prompt adds no peak."""
        targets: list[int] = []
        ks: list[int] = []
        for span in spans:
            seq = span.seq
            targets += seq.token_ids[span.position + 1 : span.position + 1 + span.count]
            ks += [seq.params.prompt_logprobs] * span.count
        entries = []
        size = self.config.max_num_seqs
        for at in range(0, hidden.shape[0], size):
            logits = self.model.compute_logits(hidden[at : at + size])  # a collective
            if logits is not None and spans:
                entries += self.sampler.prompt_logprobs(logits, targets[at : at + size],
                                                        ks[at : at + size])
        at = 0
        for span in spans:
            span.seq.prompt_logprobs.extend(entries[at : at + span.count])
            at += span.count

    def _sample(self, logits: torch.Tensor, seqs: list[Sequence]) -> dict[Sequence, list[SampleResult]]:
        """Rows of `logits` follow `seqs`, 1 + len(spec_token_ids) rows each."""
        rows: list[int] = []
        plain: list[Sequence] = []
        spec_rows: list[int] = []
        spec: list[Sequence] = []
        row = 0
        for seq in seqs:
            n = 1 + len(seq.spec_token_ids)
            if n == 1:
                rows.append(row)
                plain.append(seq)
            else:
                spec_rows.extend(range(row, row + n))
                spec.append(seq)
            row += n
        out: dict[Sequence, list[SampleResult]] = {}
        if plain:
            sampled = self.sampler(logits[rows] if spec else logits, plain)
            out.update((seq, [r]) for seq, r in zip(plain, sampled, strict=True))
        if spec:
            out.update(zip(spec, self.rejection_sampler(logits[spec_rows], spec), strict=True))
        return out

    def swap_blocks(self, step: StepInput | SchedulerOutput) -> None:
        """Copy blocks out, then in, before the forward pass writes any of them."""
        if step.blocks_to_swap_out:
            self.swap_space.swap_out(self.kv_cache, step.blocks_to_swap_out)
        if step.blocks_to_swap_in:
            self.swap_space.swap_in(self.kv_cache, step.blocks_to_swap_in)

    def _decode_groups(self, tables: list[list[int]], lens: list[int]) -> list[DecodeGroup]:
        """Split length-sorted decode rows where the context length more than doubles."""
        groups = []
        start = 0
        for end in range(1, len(lens) + 1):
            # The Triton kernel reads each row's length: one group, one launch per layer.
            one_group = self.attention_backend == AttentionBackend.TRITON
            if end < len(lens) and (one_group or lens[end] <= 2 * lens[start]):
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

