"""Engine and model configuration, validated when created.

Importing this module imports no torch (settings and `finrag index` read it, and never run
the engine): torch comes in where a check or property resolves a device or dtype.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from llm_engine.spec_decode.config import SpeculativeConfig

if TYPE_CHECKING:
    import torch

_GiB = 1 << 30
# The methods layers/quantization/quantization.py implements (EngineConfig.quantization).
QUANTIZATION_METHODS = ("int8",)


class AttentionBackend(str, Enum):
    """The decode attention (EngineConfig.attention_backend, whose strings these equal);
    layers/selector.py resolves it into kernels."""

    AUTO = "auto"  # Triton on CUDA where it compiles, the CPU kernel on fp32 CPU, else torch
    TORCH = "torch"  # gather the blocks, then SDPA
    CPU_KERNEL = "cpu_kernel"  # layers/attention/paged_attention_cpu.py: fp32 activations on CPU
    TRITON = "triton"  # layers/attention/paged_attention_triton.py: CUDA


def default_engines_dir() -> Path:
    """Where built artifacts go when engines_dir is None: $FINRAG_ENGINES_DIR or engines/."""
    return Path(os.environ.get("FINRAG_ENGINES_DIR") or "engines")


@dataclass(frozen=True)
class ModelConfig:
    """The decoder's hyperparameters, read from a Hugging Face `config.json`."""

    architecture: str
    vocab_size: int
    hidden_size: int
    intermediate_size: int
    num_hidden_layers: int
    num_attention_heads: int
    num_key_value_heads: int
    head_dim: int
    rms_norm_eps: float
    rope_theta: float
    rope_scaling: dict[str, Any] | None
    max_position_embeddings: int
    tie_word_embeddings: bool
    attention_bias: bool
    eos_token_ids: tuple[int, ...] = ()

    @classmethod
    def from_pretrained(cls, folder: str | os.PathLike) -> ModelConfig:
        path = Path(folder) / "config.json"
        if not path.exists():
            raise FileNotFoundError(f"{path}: no config.json; is this a Hugging Face model folder?")
        return cls.from_dict(json.loads(path.read_text()))

    @classmethod
    def from_dict(cls, cfg: dict[str, Any]) -> ModelConfig:
        by_type = {"llama": "LlamaForCausalLM", "mistral": "MistralForCausalLM",
                   "qwen2": "Qwen2ForCausalLM"}
        archs = cfg.get("architectures") or [by_type.get(cfg.get("model_type", ""), "")]
        arch = archs[0]
        supported = ("LlamaForCausalLM", "MistralForCausalLM", "Qwen2ForCausalLM")
        if arch not in supported:
            raise ValueError(f"architecture {arch!r} is not supported; supported: {supported}")
        # transformers 5 nests rope settings under `rope_parameters`; older files keep
        # `rope_theta` and `rope_scaling` at the top level.
        rope = dict(cfg.get("rope_parameters") or cfg.get("rope_scaling") or {})
        theta = float(rope.pop("rope_theta", cfg.get("rope_theta", 10000.0)))
        rope_type = rope.get("rope_type", rope.get("type", "default"))
        heads = int(cfg["num_attention_heads"])
        eos = cfg.get("eos_token_id")
        eos_ids = tuple(eos) if isinstance(eos, list) else (() if eos is None else (int(eos),))
        return cls(
            architecture=arch,
            vocab_size=int(cfg["vocab_size"]),
            hidden_size=int(cfg["hidden_size"]),
            intermediate_size=int(cfg["intermediate_size"]),
            num_hidden_layers=int(cfg["num_hidden_layers"]),
            num_attention_heads=heads,
            num_key_value_heads=int(cfg.get("num_key_value_heads") or heads),
            head_dim=int(cfg.get("head_dim") or cfg["hidden_size"] // heads),
            rms_norm_eps=float(cfg.get("rms_norm_eps", 1e-6)),
            rope_theta=theta,
            rope_scaling=None if rope_type == "default" else rope,
            max_position_embeddings=int(cfg.get("max_position_embeddings", 2048)),
            tie_word_embeddings=bool(cfg.get("tie_word_embeddings", False)),
            # Qwen2 always carries q/k/v biases; Llama only when `attention_bias` says so.
            attention_bias=arch == "Qwen2ForCausalLM" or bool(cfg.get("attention_bias", False)),
            eos_token_ids=eos_ids,
        )


def _check(ok: bool, name: str, allowed: str, value: object) -> None:
    if not ok:
        raise ValueError(f"{name} must be {allowed}, got {value!r}")


@dataclass
class EngineConfig:
    """Engine arguments, with vLLM's names and defaults where they carry over to CPU."""

    model: str = "default"
    block_size: int = 16
    max_num_seqs: int = 256
    max_num_batched_tokens: int = 2048
    kv_cache_memory: int | None = None
    gpu_memory_utilization: float = 0.9
    num_gpu_blocks_override: int | None = None
    # GiB of host memory for swapped-out KV blocks (per device, as in vLLM); None: 4 on
    # CUDA (vLLM's default), on CPU a quarter of the KV cache's size. 0 turns swapping off.
    swap_space: float | None = None
    # None (auto), "swap" or "recompute": how a sequence is preempted when blocks run out;
    # see Scheduler for the auto rule and the fallback when the swap space is full.
    preemption_mode: str | None = None
    max_model_len: int | None = None
    enable_prefix_caching: bool = True
    # How a full block's identity is hashed for prefix caching (vLLM's name): "sha256" is
    # collision-resistant, so one tenant cannot craft a prompt whose blocks collide with
    # another's (CVE-2025-25183); "builtin" is Python's hash(). Cost: benchmarks/block_hash.py.
    prefix_caching_hash_algo: str = "sha256"
    enable_chunked_prefill: bool = True
    device: str = "auto"
    # Model weights and activations.
    dtype: str = "auto"
    # vLLM's name. "auto": the KV cache in `dtype`. "bfloat16": K/V stored in bf16 while
    # activations stay in `dtype` (every attention path widens what it reads): on CPU in
    # fp32, half the bytes a decode step reads and half the memory a cached token takes,
    # at bf16's 8-bit mantissa (benchmarks/perplexity.py). On CUDA bf16 is `dtype`'s default.
    kv_cache_dtype: str = "auto"
    seed: int = 0
    # "auto": on CUDA the Triton decode kernel where Triton imports and compiles; on CPU the
    # compiled kernel for fp32 decode attention where it builds; else torch (SDPA).
    attention_backend: str = "auto"
    # vLLM's name, but True by default here (vLLM: False): the CUDA-graph decode path
    # (engine/cuda_graph.py) was written without a GPU to run it on, and unverified code
    # must not be the default path. Turn it on with enforce_eager=False (CUDA + Triton only)
    # once benchmarks/gpu_check.sh has passed on the GPU you serve from.
    enforce_eager: bool = True
    skip_tokenizer_init: bool = False
    engines_dir: str | None = None
    # Ranks the model is split over, one process each ("mp"); "uni" keeps one process.
    # On CPU the ranks share the host, and kv_cache_memory is for all of them together.
    tensor_parallel_size: int = 1
    distributed_executor_backend: str | None = None
    # vLLM's name. "int8": weights in int8 per output channel, activations quantized per
    # token at run time after SmoothQuant smoothing (CPU, fbgemm; every linear layer and
    # the LM head, each tensor-parallel rank its own shard). None: weights in `dtype`.
    # "auto" (like device and dtype; the server's default): "int8" where the engine runs
    # on CPU with fp32 activations and torch has fbgemm, else None. layers/quantization/quantization.py.
    quantization: str | None = None
    # vLLM's dict, e.g. {"method": "ngram", "num_speculative_tokens": 4, "prompt_lookup_max":
    # 4, "prompt_lookup_min": 2}; kept as a validated SpeculativeConfig. None: no drafts.
    speculative_config: SpeculativeConfig | dict[str, Any] | None = None

    def __post_init__(self) -> None:
        if isinstance(self.speculative_config, dict):
            self.speculative_config = SpeculativeConfig.from_dict(self.speculative_config)
        _check(self.speculative_config is None or isinstance(self.speculative_config, SpeculativeConfig),
               "speculative_config", "None, a dict or a SpeculativeConfig", self.speculative_config)
        _check(self.block_size in (1, 2, 4, 8, 16, 32, 64, 128), "block_size",
               "a power of two from 1 to 128", self.block_size)
        _check(self.max_num_seqs >= 1, "max_num_seqs", ">= 1", self.max_num_seqs)
        _check(self.max_num_batched_tokens >= 1, "max_num_batched_tokens", ">= 1",
               self.max_num_batched_tokens)
        _check(self.kv_cache_memory is None or self.kv_cache_memory > 0, "kv_cache_memory",
               "a positive number of bytes", self.kv_cache_memory)
        _check(0.0 < self.gpu_memory_utilization <= 1.0, "gpu_memory_utilization",
               "in (0, 1]", self.gpu_memory_utilization)
        _check(self.num_gpu_blocks_override is None or self.num_gpu_blocks_override >= 1,
               "num_gpu_blocks_override", ">= 1", self.num_gpu_blocks_override)
        _check(self.swap_space is None or self.swap_space >= 0, "swap_space",
               "a number of GiB >= 0", self.swap_space)
        _check(self.preemption_mode in (None, "swap", "recompute"), "preemption_mode",
               "None (auto), 'swap' or 'recompute'", self.preemption_mode)
        _check(not (self.preemption_mode == "swap" and self.swap_space == 0), "preemption_mode",
               "None or 'recompute' when swap_space=0 (or give swap_space > 0)",
               self.preemption_mode)
        _check(self.max_model_len is None or self.max_model_len >= 1, "max_model_len", ">= 1",
               self.max_model_len)
        if self.max_model_len is not None:
            self._check_prefill_budget(self.max_model_len)
        _check(self.prefix_caching_hash_algo in ("sha256", "builtin"), "prefix_caching_hash_algo",
               "'sha256' or 'builtin'", self.prefix_caching_hash_algo)
        _check(self.device in ("auto", "cpu", "cuda") or self.device.startswith("cuda:"),
               "device", "'auto', 'cpu' or 'cuda[:N]'", self.device)
        _check(self.attention_backend in {b.value for b in AttentionBackend},
               "attention_backend", "'auto', 'torch', 'cpu_kernel' or 'triton'",
               self.attention_backend)
        _check(self.attention_backend != "triton" or self.torch_device.type == "cuda",
               "attention_backend", "'auto', 'torch' or 'cpu_kernel' on CPU ('triton' needs "
               "CUDA)", self.attention_backend)
        _check(self.dtype in ("auto", "float32", "bfloat16", "float16"), "dtype",
               "'auto', 'float32', 'bfloat16' or 'float16'", self.dtype)
        # The CPU decode kernel reads fp32 queries on the host; elsewhere it would never run.
        # (On CPU "auto" is float32: torch_dtype.)
        _check(self.attention_backend != "cpu_kernel" or (
                   self.torch_device.type == "cpu" and self.dtype in ("auto", "float32")),
               "attention_backend", "'auto', 'torch' or 'triton' unless device is 'cpu' and "
               "dtype 'float32' ('cpu_kernel' needs fp32 on CPU)", self.attention_backend)
        _check(self.kv_cache_dtype in ("auto", "bfloat16"), "kv_cache_dtype",
               "'auto' or 'bfloat16'", self.kv_cache_dtype)
        _check(self.tensor_parallel_size >= 1, "tensor_parallel_size", ">= 1",
               self.tensor_parallel_size)
        _check(self.distributed_executor_backend in (None, "mp", "uni"),
               "distributed_executor_backend", "None, 'mp' or 'uni'", self.distributed_executor_backend)
        _check(self.distributed_executor_backend != "uni" or self.tensor_parallel_size == 1,
               "distributed_executor_backend", "'mp' (or None) when tensor_parallel_size > 1",
               self.distributed_executor_backend)
        _check(self.quantization in (None, "auto", *QUANTIZATION_METHODS), "quantization",
               " or ".join(["None", "'auto'", *map(repr, QUANTIZATION_METHODS)]), self.quantization)
        if self.quantization not in (None, "auto"):
            from llm_engine.layers.quantization.quantization import check_quantization

            check_quantization(self.quantization, self.torch_device, self.torch_dtype)

    @property
    def quantization_method(self) -> str | None:
        """The quantization the engine applies: `quantization` with "auto" resolved."""
        if self.quantization == "auto":
            from llm_engine.layers.quantization.quantization import auto_quantization

            return auto_quantization(self.torch_device, self.torch_dtype)
        return self.quantization

    @property
    def torch_device(self) -> torch.device:
        import torch

        if self.device == "auto":
            return torch.device("cuda" if torch.cuda.is_available() else "cpu")
        return torch.device(self.device)

    @property
    def torch_dtype(self) -> torch.dtype:
        import torch

        if self.dtype != "auto":
            return getattr(torch, self.dtype)
        # bf16 matmuls are ~50x slower than fp32 on these CPUs; on CUDA bf16 is the norm.
        return torch.bfloat16 if self.torch_device.type == "cuda" else torch.float32

    @property
    def torch_kv_cache_dtype(self) -> torch.dtype:
        import torch

        return self.torch_dtype if self.kv_cache_dtype == "auto" else getattr(torch, self.kv_cache_dtype)

    def _check_prefill_budget(self, max_model_len: int) -> None:
        # Without chunking a prompt is prefilled in one step: one longer than the step's
        # token budget would never be scheduled, and would block every request behind it.
        if not self.enable_chunked_prefill and self.max_num_batched_tokens < max_model_len:
            raise ValueError(
                f"max_num_batched_tokens ({self.max_num_batched_tokens}) is smaller than "
                f"max_model_len ({max_model_len}) with enable_chunked_prefill=False: a longer "
                "prompt could never be scheduled. Raise max_num_batched_tokens to at least "
                f"{max_model_len}, lower max_model_len to at most {self.max_num_batched_tokens}, "
                "or set enable_chunked_prefill=True")

    def resolve_max_model_len(self, model_config: ModelConfig) -> int:
        """max_model_len, or the model's own limit; refused where the model cannot reach it."""
        limit = model_config.max_position_embeddings
        if self.max_model_len is not None and self.max_model_len > limit:
            # Positions past the trained range have no rotary table entry (and no meaning).
            raise ValueError(
                f"max_model_len ({self.max_model_len}) is greater than the model's "
                f"max_position_embeddings ({limit}, config.json): lower max_model_len to at "
                f"most {limit}")
        max_model_len = self.max_model_len or limit
        self._check_prefill_budget(max_model_len)
        return max_model_len

    def swap_space_bytes(self, kv_cache_bytes: int) -> int:
        """Host bytes for swapped-out blocks, given the size of the device KV cache."""
        if self.swap_space is not None:
            return int(self.swap_space * _GiB)
        if self.torch_device.type == "cuda":
            return 4 * _GiB
        # On CPU the "device" cache is host memory too: swap only buys room to park a
        # preempted sequence cheaply, so it stays a fraction of the cache.
        return kv_cache_bytes // 4

    def default_kv_cache_memory(self) -> int:
        """CPU KV budget when none is given: a quarter of available memory, at most 4 GiB."""
        if self.kv_cache_memory is not None:
            return self.kv_cache_memory
        try:
            avail = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (ValueError, OSError):
            avail = 8 * _GiB
        return int(min(4 * _GiB, avail // 4))
