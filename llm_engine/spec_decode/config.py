"""`speculative_config`, with vLLM's keys and defaults, validated when created."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

METHODS = ("ngram",)


@dataclass
class SpeculativeConfig:
    """Prompt lookup: propose the `num_speculative_tokens` tokens that followed an earlier
    occurrence of the sequence's last n tokens, n from `prompt_lookup_max` down to
    `prompt_lookup_min`. As in vLLM, a bound left out takes the other's value, and both
    default to 5. `disable_by_batch_size` (vLLM v0's key): no drafts while that many
    requests or more are running, where a step is already compute-bound and verifying
    rejected drafts costs more than it saves."""

    method: str
    num_speculative_tokens: int
    prompt_lookup_max: int | None = None
    prompt_lookup_min: int | None = None
    disable_by_batch_size: int | None = None

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise ValueError(f"speculative_config method must be one of {list(METHODS)}, "
                             f"got {self.method!r}")
        if self.prompt_lookup_max is None:
            self.prompt_lookup_max = self.prompt_lookup_min or 5
        if self.prompt_lookup_min is None:
            self.prompt_lookup_min = self.prompt_lookup_max
        for name in ("num_speculative_tokens", "prompt_lookup_max", "prompt_lookup_min"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"speculative_config {name} must be an integer >= 1, got {value!r}")
        if self.disable_by_batch_size is not None and (
                not isinstance(self.disable_by_batch_size, int) or self.disable_by_batch_size < 2):
            raise ValueError("speculative_config disable_by_batch_size must be None or an integer "
                             f">= 2, got {self.disable_by_batch_size!r}")
        if self.prompt_lookup_min > self.prompt_lookup_max:
            raise ValueError(
                f"speculative_config prompt_lookup_min ({self.prompt_lookup_min}) must be <= "
                f"prompt_lookup_max ({self.prompt_lookup_max})")

    @classmethod
    def from_dict(cls, cfg: dict[str, Any]) -> SpeculativeConfig:
        accepted = [f.name for f in fields(cls)]
        unknown = sorted(set(cfg) - set(accepted))
        if unknown:
            raise ValueError(f"speculative_config: unknown key(s) {unknown}; accepted: {accepted}")
        missing = [k for k in ("method", "num_speculative_tokens") if k not in cfg]
        if missing:
            raise ValueError(f"speculative_config needs {missing} (method one of {list(METHODS)})")
        return cls(**cfg)
