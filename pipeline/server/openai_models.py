"""Request and answer models of the OpenAI-compatible routes, with OpenAI's and vLLM's names.

Every option has a documented range and values outside it are refused (400, naming the
field), never clamped. Unknown fields are refused too: a client that sends an option this
server does not implement (`tools`, `response_format`, ...) learns so instead of getting an
answer that silently ignored it. OpenAI fields that are accepted only at their default
(`n`, `echo`, `logprobs`, ...) say so in their description and in the refusal.
`max_tokens` and `top_k` are bounded by the served model (request_limits).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from llm_engine import SamplingParams
from pipeline.server.guards.request_limits import Temperature, bounded, temperature

MAX_STOPS = 16
MAX_EMBED_INPUTS = 2048
ModelName = Field(None, max_length=256, description="the id of a served model (GET "
                                                     "/v1/models); default: the served one")
StopString = Annotated[str, Field(min_length=1, max_length=256)]


def only(default: Any, what: str) -> BeforeValidator:
    """Accept an OpenAI field only at its default value, with a message that says so."""

    def check(value: Any) -> Any:
        if value is not None and (value != default or type(value) is not type(default)):
            raise ValueError(f"not supported by this server; send {what} or leave it out")
        return value

    return BeforeValidator(check)


class StreamOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    include_usage: bool = Field(False, description="end the stream with a usage chunk")


class SamplingFields(BaseModel):
    """OpenAI's sampling fields plus vLLM's extras (top_k, min_p, repetition_penalty, ...)."""

    model_config = ConfigDict(extra="forbid", strict=True)
    model: str | None = ModelName
    max_tokens: int | None = bounded(
        "max_tokens", ge=1, description="tokens to generate, at least 1 and at most the "
        "schema's maximum; prompt + max_tokens must fit max_model_len (default: the "
        "max_tokens setting, or what the context leaves)")
    temperature: Temperature = temperature(1.0)
    # Below 1e-6 the sampler's float32 comparison would keep no token at all.
    top_p: float = Field(1.0, ge=1e-6, le=1.0, description="nucleus mass, 1e-6 to 1")
    top_k: int = bounded("vocab_size", 0, ge=-1, description="keep the k most likely tokens; "
                         "0 or -1: all; at most the vocabulary size")
    min_p: float = Field(0.0, ge=0.0, le=1.0, description="in [0, 1]")
    n: Annotated[Literal[1], only(1, "n: 1")] = Field(1, description="only 1")
    stream: bool = False
    stream_options: StreamOptions | None = Field(None, description="with stream: true only")
    stop: StopString | Annotated[list[StopString], Field(max_length=MAX_STOPS)] | None = Field(
        None, description=f"a string, or up to {MAX_STOPS}, of 1 to 256 characters that end "
                          "the answer")
    stop_token_ids: list[Annotated[int, Field(ge=0)]] | None = bounded(
        "max_token_id", max_length=64, description="up to 64 token ids of the model's "
                                                    "vocabulary that end the answer")
    seed: int | None = Field(None, ge=0, lt=2**63, description="in [0, 2^63)")
    presence_penalty: float = Field(0.0, ge=-2.0, le=2.0, description="in [-2, 2]")
    frequency_penalty: float = Field(0.0, ge=-2.0, le=2.0, description="in [-2, 2]")
    # Below 0.01, dividing the logits of seen tokens overflows.
    repetition_penalty: float = Field(1.0, ge=0.01, le=2.0, description="0.01 to 2")
    min_tokens: int = bounded("max_tokens", 0, ge=0, description="at least this many tokens "
                              "before a stop; at most max_tokens")
    ignore_eos: bool = False
    skip_special_tokens: bool = True
    include_stop_str_in_output: bool = False
    logit_bias: Annotated[dict[str, float] | None, only({}, "logit_bias: null or {}")] = Field(
        None, max_length=0, description="not supported: null or {} only")
    user: str | None = Field(None, max_length=256, description="OpenAI's end-user id; "
                                                               "accepted and not used")

    def sampling_params(self, max_tokens: int) -> SamplingParams:
        return SamplingParams(
            temperature=self.temperature, top_p=self.top_p, top_k=self.top_k, min_p=self.min_p,
            presence_penalty=self.presence_penalty, frequency_penalty=self.frequency_penalty,
            repetition_penalty=self.repetition_penalty, seed=self.seed, stop=self.stop,
            stop_token_ids=self.stop_token_ids, max_tokens=max_tokens,
            min_tokens=self.min_tokens, ignore_eos=self.ignore_eos,
            skip_special_tokens=self.skip_special_tokens,
            include_stop_str_in_output=self.include_stop_str_in_output)

    @property
    def include_usage(self) -> bool:
        return self.stream_options is not None and self.stream_options.include_usage


class CompletionRequest(SamplingFields):
    prompt: (Annotated[str, Field(min_length=1)]
             | Annotated[list[Annotated[str, Field(min_length=1)]], Field(min_length=1, max_length=1)]
             | Annotated[list[Annotated[int, Field(ge=0)]], Field(min_length=1)]) = bounded(
        "max_token_id", ..., description="one prompt: a string, a list of one string, or token "
                                         "ids; its tokens must leave room for max_tokens in "
                                         "max_model_len")
    echo: Annotated[Literal[False], only(False, "echo: false")] = Field(
        False, description="only false")
    logprobs: Annotated[None, only(None, "logprobs: null")] = Field(
        None, description="not supported: null only")
    best_of: Annotated[Literal[1] | None, only(1, "best_of: 1")] = Field(
        None, description="only 1")
    suffix: Annotated[None, only(None, "suffix: null")] = Field(
        None, description="not supported: null only")


class TextPart(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    type: Literal["text"] = Field(description="only text parts are supported")
    text: str


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    role: Literal["system", "user", "assistant", "tool", "developer"]
    content: str | list[TextPart] | None = None
    name: str | None = Field(None, max_length=64, description="accepted and not used")

    @property
    def text(self) -> str:
        if self.content is None or isinstance(self.content, str):
            return self.content or ""
        return "".join(part.text for part in self.content)


class ChatRequest(SamplingFields):
    messages: list[ChatMessage] = Field(min_length=1, description="the conversation, 1 "
                                        "message or more; its tokens must leave room for "
                                        "max_tokens in max_model_len")
    max_completion_tokens: int | None = bounded("max_tokens", ge=1,
                                                description="OpenAI's newer max_tokens; wins "
                                                            "over it")
    logprobs: Annotated[Literal[False], only(False, "logprobs: false")] = Field(
        False, description="only false")
    top_logprobs: Annotated[None, only(None, "top_logprobs: null")] = Field(
        None, description="not supported: null only")


class EmbeddingRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    input: str | list[str] = Field(description=f"a text or a list of 1 to {MAX_EMBED_INPUTS} "
                                               "texts, each within the embedder's length in "
                                               "tokens")
    model: str | None = ModelName
    encoding_format: Literal["float", "base64"] = "float"
    dimensions: int | None = Field(None, ge=1, description="the embedder's dimension only "
                                                           "(384 for MiniLM)")
    user: str | None = Field(None, max_length=256, description="accepted and not used")


# -- answers (documentation; the routes build plain dicts) --------------------------------
class Usage(BaseModel):
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int


class CompletionChoice(BaseModel):
    index: int
    text: str
    finish_reason: str | None
    logprobs: None


class Completion(BaseModel):
    id: str
    object: Literal["text_completion"]
    created: int
    model: str
    choices: list[CompletionChoice]
    usage: Usage


class AssistantMessage(BaseModel):
    role: Literal["assistant"]
    content: str


class ChatChoice(BaseModel):
    index: int
    message: AssistantMessage
    finish_reason: str | None
    logprobs: None


class ChatCompletion(BaseModel):
    id: str
    object: Literal["chat.completion"]
    created: int
    model: str
    choices: list[ChatChoice]
    usage: Usage


class Embedding(BaseModel):
    object: Literal["embedding"]
    index: int
    embedding: list[float] | str


class EmbeddingUsage(BaseModel):
    prompt_tokens: int
    total_tokens: int


class EmbeddingList(BaseModel):
    object: Literal["list"]
    data: list[Embedding]
    model: str
    usage: EmbeddingUsage


class ModelCard(BaseModel):
    id: str
    object: Literal["model"]
    created: int
    owned_by: str
    root: str
    max_model_len: int | None = None


class ModelList(BaseModel):
    object: Literal["list"]
    data: list[ModelCard]
