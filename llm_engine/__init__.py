"""finrag's paged-KV LLM engine, in the design of vLLM.

The names below load on first use (PEP 562, as vLLM's package does): `from llm_engine
import EngineConfig` reads the configuration without importing the engine, and so without
torch (~1.5 s), which `finrag index` and the settings never need.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from llm_engine.config import EngineConfig, ModelConfig
    from llm_engine.engine.async_llm_engine import AsyncLLMEngine
    from llm_engine.engine.engine_stats import EngineStats
    from llm_engine.engine.errors import EngineDeadError, InvalidRequestError, RequestFailedError
    from llm_engine.engine.llm_engine import LLMEngine
    from llm_engine.llm import LLM
    from llm_engine.outputs import CompletionOutput, Logprob, RequestOutput
    from llm_engine.sampling_params import SamplingParams

# Each public name and the module that defines it.
_MODULES = {
    "EngineConfig": "llm_engine.config", "ModelConfig": "llm_engine.config",
    "AsyncLLMEngine": "llm_engine.engine.async_llm_engine",
    "EngineDeadError": "llm_engine.engine.errors",
    "InvalidRequestError": "llm_engine.engine.errors",
    "RequestFailedError": "llm_engine.engine.errors",
    "EngineStats": "llm_engine.engine.engine_stats", "LLMEngine": "llm_engine.engine.llm_engine",
    "LLM": "llm_engine.llm",
    "CompletionOutput": "llm_engine.outputs", "Logprob": "llm_engine.outputs",
    "RequestOutput": "llm_engine.outputs",
    "SamplingParams": "llm_engine.sampling_params",
}

__all__ = [
    "LLM", "AsyncLLMEngine", "CompletionOutput", "EngineConfig", "Logprob", "EngineDeadError",
    "EngineStats", "InvalidRequestError", "LLMEngine", "ModelConfig", "RequestFailedError",
    "RequestOutput", "SamplingParams",
]


def __getattr__(name: str) -> Any:
    if name not in _MODULES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_MODULES[name]), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
