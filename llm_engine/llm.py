"""`LLM`: the offline entry point, with vLLM's names."""

from __future__ import annotations

from collections.abc import Sequence as Seq
from typing import Any

from llm_engine.config import EngineConfig
from llm_engine.engine.llm_engine import LLMEngine, PromptType
from llm_engine.outputs import RequestOutput
from llm_engine.sampling_params import SamplingParams
from llm_engine.tokenizer import Tokenizer

Message = dict[str, str]


class LLM:
    """Loads a model and generates for batches of prompts.

    >>> llm = LLM(model="default")
    >>> out = llm.generate(["The capital of France is"], SamplingParams(temperature=0, max_tokens=8))
    >>> out[0].outputs[0].text
    """

    def __init__(self, model: str = "default", **engine_args: Any) -> None:
        self.llm_engine = LLMEngine(EngineConfig(model=model, **engine_args))

    def get_tokenizer(self) -> Tokenizer:
        if self.llm_engine.tokenizer is None:
            raise ValueError("the engine was created with skip_tokenizer_init=True")
        return self.llm_engine.tokenizer

    def generate(
        self,
        prompts: PromptType | Seq[PromptType],
        sampling_params: SamplingParams | Seq[SamplingParams] | None = None,
        use_tqdm: bool = True,
    ) -> list[RequestOutput]:
        return self.llm_engine.generate(prompts, sampling_params, use_tqdm=use_tqdm)

    def chat(
        self,
        messages: list[Message] | list[list[Message]],
        sampling_params: SamplingParams | Seq[SamplingParams] | None = None,
        use_tqdm: bool = True,
        add_generation_prompt: bool = True,
    ) -> list[RequestOutput]:
        conversations = [messages] if messages and isinstance(messages[0], dict) else messages
        tokenizer = self.get_tokenizer()
        prompts: list[PromptType] = []
        for conversation in conversations:
            text = tokenizer.apply_chat_template(
                conversation, add_generation_prompt=add_generation_prompt, tokenize=False
            )
            # The template already writes the BOS token where the model wants one.
            prompts.append({"prompt": text,
                            "prompt_token_ids": tokenizer.encode(text, add_special_tokens=False)})
        return self.generate(prompts, sampling_params, use_tqdm=use_tqdm)
