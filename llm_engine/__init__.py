"""finrag's paged-KV LLM engine, in the design of vLLM."""

from llm_engine.config import EngineConfig, ModelConfig
from llm_engine.engine.async_llm_engine import AsyncLLMEngine
from llm_engine.engine.errors import EngineDeadError, InvalidRequestError, RequestFailedError
from llm_engine.engine.llm_engine import EngineStats, LLMEngine
from llm_engine.llm import LLM
from llm_engine.outputs import CompletionOutput, Logprob, RequestOutput
from llm_engine.sampling_params import SamplingParams

__all__ = [
    "LLM", "AsyncLLMEngine", "CompletionOutput", "EngineConfig", "Logprob", "EngineDeadError",
    "EngineStats", "InvalidRequestError", "LLMEngine", "ModelConfig", "RequestFailedError",
    "RequestOutput", "SamplingParams",
]
