"""The Llama decoder (Llama 2/3, Mistral, SmolLM2; Qwen2 with q/k/v bias), paged.

Read top to bottom it is the paper's block: RMSNorm -> attention with rotary positions
and grouped K/V heads -> residual -> RMSNorm -> SwiGLU MLP -> residual. Parameter names
follow Hugging Face so checkpoints load by name; q/k/v and gate/up are packed into one
matrix each at load time (fewer, larger matmuls).
"""

from __future__ import annotations

from collections.abc import Iterable

import torch
import torch.nn.functional as F
from torch import nn

from llm_engine.config import ModelConfig
from llm_engine.layers.attention import AttentionMetadata, PagedAttention
from llm_engine.layers.layernorm import RMSNorm
from llm_engine.layers.linear import Linear
from llm_engine.layers.rotary_embedding import RotaryEmbedding


class LlamaAttention(nn.Module):
    def __init__(self, cfg: ModelConfig, rotary: RotaryEmbedding) -> None:
        super().__init__()
        self.num_heads, self.num_kv_heads = cfg.num_attention_heads, cfg.num_key_value_heads
        self.head_dim = cfg.head_dim
        self.q_size = self.num_heads * self.head_dim
        self.kv_size = self.num_kv_heads * self.head_dim
        self.qkv_proj = Linear(cfg.hidden_size, self.q_size + 2 * self.kv_size,
                                  bias=cfg.attention_bias)
        self.o_proj = Linear(self.q_size, cfg.hidden_size, bias=False)
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
    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.gate_up_proj = Linear(cfg.hidden_size, 2 * cfg.intermediate_size, bias=False)
        self.down_proj = Linear(cfg.intermediate_size, cfg.hidden_size, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        gate, up = self.gate_up_proj(x).chunk(2, dim=-1)
        return self.down_proj(F.silu(gate) * up)


class LlamaDecoderLayer(nn.Module):
    def __init__(self, cfg: ModelConfig, rotary: RotaryEmbedding) -> None:
        super().__init__()
        self.input_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.self_attn = LlamaAttention(cfg, rotary)
        self.post_attention_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.mlp = LlamaMLP(cfg)

    def forward(self, x: torch.Tensor, positions: torch.Tensor, meta: AttentionMetadata):
        x = x + self.self_attn(self.input_layernorm(x), positions, meta)
        return x + self.mlp(self.post_attention_layernorm(x))


class LlamaModel(nn.Module):
    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.embed_tokens = nn.Embedding(cfg.vocab_size, cfg.hidden_size)
        rotary = RotaryEmbedding(cfg.head_dim, cfg.max_position_embeddings, cfg.rope_theta,
                                 cfg.rope_scaling)
        self.layers = nn.ModuleList(LlamaDecoderLayer(cfg, rotary) for _ in range(cfg.num_hidden_layers))
        self.norm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)

    def forward(self, input_ids: torch.Tensor, positions: torch.Tensor, meta: AttentionMetadata):
        x = self.embed_tokens(input_ids)
        for layer in self.layers:
            x = layer(x, positions, meta)
        return self.norm(x)


class LlamaForCausalLM(nn.Module):
    # checkpoint name fragment -> (packed parameter fragment, shard index)
    packed = {
        "q_proj": ("qkv_proj", 0), "k_proj": ("qkv_proj", 1), "v_proj": ("qkv_proj", 2),
        "gate_proj": ("gate_up_proj", 0), "up_proj": ("gate_up_proj", 1),
    }

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.config = cfg
        self.model = LlamaModel(cfg)
        self.lm_head = Linear(cfg.hidden_size, cfg.vocab_size, bias=False)
        if cfg.tie_word_embeddings:
            self.lm_head.weight = self.model.embed_tokens.weight

    def forward(self, input_ids: torch.Tensor, positions: torch.Tensor, meta: AttentionMetadata):
        return self.model(input_ids, positions, meta)

    def compute_logits(self, hidden: torch.Tensor) -> torch.Tensor:
        return self.lm_head(hidden).float()

    def attention_layers(self) -> list[PagedAttention]:
        return [layer.self_attn.attn for layer in self.model.layers]

    @torch.no_grad()
    def load_weights(self, weights: Iterable[tuple[str, torch.Tensor]]) -> None:
        """Copy Hugging Face-named tensors in, packing q/k/v and gate/up as they arrive."""
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
                    self._load_shard(params[target], tensor, packed, shard)
                    loaded.add(f"{target}#{shard}")
                    break
            else:
                if name not in params:
                    raise ValueError(f"checkpoint tensor {name!r} has no place in the model")
                params[name].copy_(tensor)
                loaded.add(name)
        expected = {n for n in params if "qkv_proj" not in n and "gate_up_proj" not in n}
        expected |= {f"{n}#{i}" for n in params if "qkv_proj" in n for i in range(3)}
        expected |= {f"{n}#{i}" for n in params if "gate_up_proj" in n for i in range(2)}
        if self.config.tie_word_embeddings:
            expected.discard("lm_head.weight")
        missing = expected - loaded
        if missing:
            raise ValueError(f"checkpoint lacks {len(missing)} tensors, e.g. {sorted(missing)[:3]}")

    def _load_shard(self, param: torch.Tensor, tensor: torch.Tensor, packed: str, shard: int):
        cfg = self.config
        if packed == "qkv_proj":
            q, kv = cfg.num_attention_heads * cfg.head_dim, cfg.num_key_value_heads * cfg.head_dim
            sizes = [q, kv, kv]
        else:
            sizes = [cfg.intermediate_size] * 2
        start = sum(sizes[:shard])
        param[start : start + sizes[shard]].copy_(tensor)
