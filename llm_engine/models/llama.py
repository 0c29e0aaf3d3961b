"""The Llama decoder (Llama 2/3, Mistral, SmolLM2; Qwen2 with q/k/v bias), paged.

Read top to bottom it is the paper's block: RMSNorm -> attention with rotary positions
and grouped K/V heads -> residual -> RMSNorm -> SwiGLU MLP -> residual (each residual add
done by the norm after it, vLLM's form, so that the two are one pass). Parameter names
follow Hugging Face so checkpoints load by name; q/k/v and gate/up are packed into one
matrix each at load time (fewer, larger matmuls). Under tensor parallelism each rank
builds the same module tree with its share of the heads, the MLP and the vocabulary
(layers/linear.py, layers/embed_head.py) and loads only that share.
"""

from __future__ import annotations

from collections.abc import Iterable

import torch
from torch import nn

from llm_engine.config import ModelConfig
from llm_engine.distributed.parallel_state import SINGLE, TensorParallelGroup
from llm_engine.layers.activation import SiluAndMul
from llm_engine.layers.attention.attention import AttentionMetadata, PagedAttention
from llm_engine.layers.backends import TORCH_BACKENDS, Backends
from llm_engine.layers.embed_head import ParallelLMHead, VocabParallelEmbedding
from llm_engine.layers.layernorm import RMSNorm
from llm_engine.layers.linear import MergedColumnParallelLinear, QKVParallelLinear, RowParallelLinear
from llm_engine.layers.rotary_embedding import RotaryEmbedding


def tensor_parallel_problems(cfg: ModelConfig, tp_size: int) -> list[str]:
    """Why this model cannot be split over `tp_size` ranks (empty when it can)."""
    problems = []
    if cfg.num_attention_heads % tp_size:
        problems.append(f"num_attention_heads={cfg.num_attention_heads} is not divisible by it")
    kv = cfg.num_key_value_heads
    if kv % tp_size and tp_size % kv:
        problems.append(f"num_key_value_heads={kv} neither divides by it nor divides it")
    if cfg.intermediate_size % tp_size:
        problems.append(f"intermediate_size={cfg.intermediate_size} is not divisible by it")
    return problems


def check_tensor_parallel(cfg: ModelConfig, tp_size: int) -> None:
    problems = tensor_parallel_problems(cfg, tp_size)
    if problems:
        valid = [n for n in range(1, cfg.num_attention_heads + 1) if not tensor_parallel_problems(cfg, n)]
        raise ValueError(
            f"tensor_parallel_size={tp_size} cannot split this model: {'; '.join(problems)}. "
            f"Sizes that work for it: {', '.join(map(str, valid))}")


class LlamaAttention(nn.Module):
    def __init__(self, cfg: ModelConfig, rotary: RotaryEmbedding, tp: TensorParallelGroup) -> None:
        super().__init__()
        self.qkv_proj = QKVParallelLinear(cfg.hidden_size, cfg.head_dim, cfg.num_attention_heads,
                                          cfg.num_key_value_heads, bias=cfg.attention_bias, tp=tp)
        # This rank's share of the heads.
        self.num_heads, self.num_kv_heads = self.qkv_proj.num_heads, self.qkv_proj.num_kv_heads
        self.head_dim = cfg.head_dim
        self.q_size, self.kv_size = self.qkv_proj.q_size, self.qkv_proj.kv_size
        self.o_proj = RowParallelLinear(cfg.num_attention_heads * cfg.head_dim, cfg.hidden_size,
                                        bias=False, tp=tp)
        self.rotary = rotary
        self.attn = PagedAttention(self.num_heads, self.num_kv_heads, self.head_dim)

    def forward(self, x: torch.Tensor, positions: torch.Tensor, meta: AttentionMetadata):
        q, k, v = self.qkv_proj(x).split([self.q_size, self.kv_size, self.kv_size], dim=-1)
        q = q.view(-1, self.num_heads, self.head_dim)
        k = k.view(-1, self.num_kv_heads, self.head_dim)
        v = v.view(-1, self.num_kv_heads, self.head_dim)
        q, k = self.rotary(positions, q, k)
        return self.o_proj(self.attn(q, k, v, meta))


class LlamaMLP(nn.Module):
    def __init__(self, cfg: ModelConfig, tp: TensorParallelGroup) -> None:
        super().__init__()
        self.gate_up_proj = MergedColumnParallelLinear(cfg.hidden_size, [cfg.intermediate_size] * 2,
                                                       bias=False, tp=tp)
        self.act = SiluAndMul()
        self.down_proj = RowParallelLinear(cfg.intermediate_size, cfg.hidden_size, bias=False, tp=tp)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down_proj(self.act(self.gate_up_proj(x)))


class LlamaDecoderLayer(nn.Module):
    def __init__(self, cfg: ModelConfig, rotary: RotaryEmbedding, tp: TensorParallelGroup) -> None:
        super().__init__()
        self.input_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.self_attn = LlamaAttention(cfg, rotary, tp)
        self.post_attention_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.mlp = LlamaMLP(cfg, tp)

    def forward(self, x: torch.Tensor, residual: torch.Tensor | None, positions: torch.Tensor,
                meta: AttentionMetadata) -> tuple[torch.Tensor, torch.Tensor]:
        """The block's output as vLLM carries it: (what the MLP adds, the residual stream
        before that); the next norm adds the two (RMSNorm's residual form: one pass)."""
        if residual is None:
            x, residual = self.input_layernorm(x), x
        else:
            x, residual = self.input_layernorm(x, residual)
        x = self.self_attn(x, positions, meta)
        x, residual = self.post_attention_layernorm(x, residual)
        return self.mlp(x), residual


class LlamaModel(nn.Module):
    def __init__(self, cfg: ModelConfig, tp: TensorParallelGroup) -> None:
        super().__init__()
        self.embed_tokens = VocabParallelEmbedding(cfg.vocab_size, cfg.hidden_size, tp)
        rotary = RotaryEmbedding(cfg.head_dim, cfg.max_position_embeddings, cfg.rope_theta,
                                 cfg.rope_scaling)
        self.layers = nn.ModuleList(LlamaDecoderLayer(cfg, rotary, tp)
                                    for _ in range(cfg.num_hidden_layers))
        self.norm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)

    def forward(self, input_ids: torch.Tensor, positions: torch.Tensor, meta: AttentionMetadata):
        x, residual = self.embed_tokens(input_ids), None
        for layer in self.layers:
            x, residual = layer(x, residual, positions, meta)
        return self.norm(x, residual)[0]


class LlamaForCausalLM(nn.Module):
    # checkpoint name fragment -> (packed parameter fragment, shard id)
    packed = {
        "q_proj": ("qkv_proj", "q"), "k_proj": ("qkv_proj", "k"), "v_proj": ("qkv_proj", "v"),
        "gate_proj": ("gate_up_proj", 0), "up_proj": ("gate_up_proj", 1),
    }

    def __init__(self, cfg: ModelConfig, tp: TensorParallelGroup = SINGLE) -> None:
        super().__init__()
        check_tensor_parallel(cfg, tp.size)
        self.config = cfg
        self.model = LlamaModel(cfg, tp)
        self.lm_head = ParallelLMHead(cfg.vocab_size, cfg.hidden_size, tp)
        if cfg.tie_word_embeddings:
            self.lm_head.weight = self.model.embed_tokens.weight

    def forward(self, input_ids: torch.Tensor, positions: torch.Tensor, meta: AttentionMetadata):
        return self.model(input_ids, positions, meta)

    def compute_logits(self, hidden: torch.Tensor) -> torch.Tensor | None:
        """fp32 logits on the driver; None on the other tensor-parallel ranks."""
        logits = self.lm_head(hidden)
        return None if logits is None else logits.float()

    def quantizable_layers(self) -> dict[str, nn.Module]:
        """Every linear layer and the LM head, by name."""
        return {name: m for name, m in self.named_modules() if hasattr(m, "quantize_int8")}

    def quantize(self, method: str, act_max: dict[str, torch.Tensor] | None = None,
                 backends: Backends = TORCH_BACKENDS) -> None:
        """Quantize every linear layer and the LM head in place, after loading; `act_max`
        (calibration's largest |input| per channel, by layer name) smooths them; `backends`:
        the engine's kernels, which the int8 weights run on."""
        assert method == "int8", method  # EngineConfig admits no other
        for name, module in self.quantizable_layers().items():
            module.quantize_int8((act_max or {}).get(name), backends)

    def attention_layers(self) -> list[PagedAttention]:
        return [layer.self_attn.attn for layer in self.model.layers]

    @torch.no_grad()
    def load_weights(self, weights: Iterable[tuple[str, torch.Tensor]]) -> None:
        """Copy this rank's shard of each Hugging Face-named tensor in, packing q/k/v and
        gate/up as they arrive."""
        params = dict(self.named_parameters())
        loaded: set[str] = set()
        for name, tensor in weights:
            if "rotary_emb" in name:
                continue
            if name == "lm_head.weight" and self.config.tie_word_embeddings:
                continue
            for part, (packed, shard) in self.packed.items():
                if f".{part}." in name:
                    target = name.replace(part, packed)
                    params[target].weight_loader(params[target], tensor, shard)
                    loaded.add(f"{target}#{shard}")
                    break
            else:
                if name not in params:
                    raise ValueError(f"checkpoint tensor {name!r} has no place in the model")
                param = params[name]
                getattr(param, "weight_loader", _copy_whole)(param, tensor)
                loaded.add(name)
        expected = {n for n in params if "qkv_proj" not in n and "gate_up_proj" not in n}
        expected |= {f"{n}#{i}" for n in params if "qkv_proj" in n for i in "qkv"}
        expected |= {f"{n}#{i}" for n in params if "gate_up_proj" in n for i in range(2)}
        if self.config.tie_word_embeddings:
            expected.discard("lm_head.weight")
        missing = expected - loaded
        if missing:
            raise ValueError(f"checkpoint lacks {len(missing)} tensors, e.g. {sorted(missing)[:3]}")


def _copy_whole(param: torch.Tensor, loaded: torch.Tensor) -> None:
    """Replicated parameters (the norms) are the same on every rank."""
    param.copy_(loaded)
