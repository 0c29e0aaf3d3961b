"""Request and answer models of the OpenAI-compatible routes, with OpenAI's and vLLM's names.

Every option has a documented range and values outside it are refused (400, naming the
field), never clamped. Unknown fields are refused too: a client that sends an option this
server does not implement (`tools`, `logit_bias`, ...) learns so instead of getting an
answer that silently ignored it. OpenAI fields that are accepted only at their default
(`echo`, `suffix`, `logit_bias`, ...) say so in their description and in the refusal.
`max_tokens` and `top_k` are bounded by the served model (request_limits).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import jinja2
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from llm_engine import SamplingParams
from llm_engine.structured_output import StructuredOutputsParams
from pipeline.rag.prompts import chat_ids
from pipeline.server.errors import RequestRejected
from pipeline.server.guards.request_limits import Temperature, bounded, temperature

MAX_STOPS = 16
MAX_N = 16  # n and best_of
MAX_PROMPTS = 64  # prompts in one /v1/completions call
MAX_LOGPROBS = 20  # vLLM's default max_logprobs
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
    continuous_usage_stats: bool = Field(False, description="vLLM's: usage in every chunk")


class StructuredOutputs(BaseModel):
    """vLLM's `structured_outputs`: exactly one constraint on what is generated."""

    model_config = ConfigDict(extra="forbid", strict=True)
    json_: dict[str, Any] | str | None = Field(None, alias="json",
                                               description="a JSON schema the output follows")
    regex: str | None = Field(None, max_length=4096, description="a regular expression")
    choice: list[Annotated[str, Field(min_length=1)]] | None = Field(
        None, min_length=1, max_length=256, description="one of these strings")
    grammar: str | None = Field(None, max_length=65536, description="an EBNF grammar")
    json_object: bool | None = Field(None, description="any JSON object")

    def params(self) -> StructuredOutputsParams:
        return StructuredOutputsParams(json=self.json_, regex=self.regex, choice=self.choice,
                                       grammar=self.grammar, json_object=self.json_object)


class JsonSchemaFormat(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    name: str = Field(max_length=64)
    description: str | None = None
    schema_: dict[str, Any] = Field(alias="schema", description="the JSON schema")
    strict: bool | None = None


class ResponseFormat(BaseModel):
    """OpenAI's `response_format`: text, any JSON object, or JSON following a schema."""

    model_config = ConfigDict(extra="forbid", strict=True)
    type: Literal["text", "json_object", "json_schema"]
    json_schema: JsonSchemaFormat | None = Field(None, description="with type json_schema")

    def params(self) -> StructuredOutputsParams | None:
        if self.type == "text":
            return None
        if self.type == "json_object":
            return StructuredOutputsParams(json_object=True)
        if self.json_schema is None:
            raise ValueError("response_format.json_schema: required with type json_schema")
        return StructuredOutputsParams(json=self.json_schema.schema_)


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
    n: int = Field(1, ge=1, le=MAX_N, description=f"choices to generate, 1 to {MAX_N}; they "
                   "share the prompt's KV blocks")
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
    response_format: ResponseFormat | None = Field(None, description="text, json_object or "
                                                   "json_schema (OpenAI's)")
    structured_outputs: StructuredOutputs | None = Field(None, description="vLLM's: json, "
                                                         "regex, choice, grammar or json_object")
    prompt_logprobs: int | None = Field(
        None, ge=0, le=MAX_LOGPROBS, description="vLLM's: report each prompt token's "
        f"log-probability and rank with the top 0 to {MAX_LOGPROBS} at its position; not with "
        "stream: true; such a request takes no prefix-cache hit (it needs every position's "
        "logits)")

    @model_validator(mode="after")
    def _check_options(self) -> SamplingFields:
        self.structured()  # refused here, as a 400 naming the field, not in the engine
        self.top_logprobs_wanted()
        best_of = getattr(self, "best_of", None)
        if best_of is not None and best_of < self.n:
            raise ValueError(f"best_of: must be at least n ({self.n}), got {best_of}")
        if best_of is not None and best_of > 1 and self.stream:
            raise ValueError("best_of: not with stream: true (the best are known at the end)")
        if self.prompt_logprobs is not None and self.stream:
            raise ValueError("prompt_logprobs: not available with stream: true (as vLLM)")
        return self

    def structured(self) -> StructuredOutputsParams | None:
        if self.response_format is not None and self.structured_outputs is not None:
            raise ValueError("give response_format or structured_outputs, not both")
        if self.structured_outputs is not None:
            return self.structured_outputs.params()
        return self.response_format.params() if self.response_format is not None else None

    def top_logprobs_wanted(self) -> int | None:
        """How many top log-probabilities each token reports (None: no logprobs)."""
        return None

    def sampling_params(self, max_tokens: int, seed: int | None = None,
                        logprobs: int | None = None, prompt_logprobs: bool = True
                        ) -> SamplingParams:
        return SamplingParams(
            temperature=self.temperature, top_p=self.top_p, top_k=self.top_k, min_p=self.min_p,
            presence_penalty=self.presence_penalty, frequency_penalty=self.frequency_penalty,
            repetition_penalty=self.repetition_penalty,
            seed=self.seed if seed is None else seed, stop=self.stop,
            stop_token_ids=self.stop_token_ids, max_tokens=max_tokens,
            min_tokens=self.min_tokens, ignore_eos=self.ignore_eos,
            skip_special_tokens=self.skip_special_tokens,
            include_stop_str_in_output=self.include_stop_str_in_output,
            logprobs=self.top_logprobs_wanted() if logprobs is None else logprobs,
            prompt_logprobs=self.prompt_logprobs if prompt_logprobs else None,
            structured_outputs=self.structured())

    @property
    def include_usage(self) -> bool:
        return self.stream_options is not None and self.stream_options.include_usage


TokenIds = Annotated[list[Annotated[int, Field(ge=0)]], Field(min_length=1)]


class CompletionRequest(SamplingFields):
    prompt: (Annotated[str, Field(min_length=1)]
             | Annotated[list[Annotated[str, Field(min_length=1)]],
                         Field(min_length=1, max_length=MAX_PROMPTS)]
             | TokenIds
             | Annotated[list[TokenIds], Field(min_length=1, max_length=MAX_PROMPTS)]) = bounded(
        "max_token_id", ..., description=f"a string, up to {MAX_PROMPTS} strings, token ids, "
        f"or up to {MAX_PROMPTS} lists of token ids; each prompt's tokens must leave room for "
        "max_tokens in max_model_len")
    echo: Annotated[Literal[False], only(False, "echo: false")] = Field(
        False, description="only false")
    logprobs: int | None = Field(None, ge=0, le=MAX_LOGPROBS, description="report the "
                                 f"top 0 to {MAX_LOGPROBS} log-probabilities of each token")
    best_of: int | None = Field(None, ge=1, le=MAX_N, description="generate best_of choices "
                                "and return the n with the highest log-probability; >= n")
    suffix: Annotated[None, only(None, "suffix: null")] = Field(
        None, description="not supported: null only")

    def top_logprobs_wanted(self) -> int | None:
        return self.logprobs

    def prompts(self) -> list[str | list[int]]:
        """The prompts, one or several."""
        p = self.prompt
        if isinstance(p, str):
            return [p]
        if p and isinstance(p[0], int):
            return [p]  # type: ignore[list-item]
        return list(p)  # type: ignore[arg-type]


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


def check_model(model: str | None, allowed: list[str]) -> None:
    """Refuse (404) a model that is not served. The name is only ever compared with the
    served names, never opened as a path."""
    if model is not None and model not in allowed:
        raise RequestRejected(f"The model `{model}` does not exist; use one of {allowed}", 404)


def chat_prompt_ids(tokenizer: Any, messages: list[ChatMessage]) -> list[int]:
    """The messages' token ids under the model's chat template (developer as system)."""
    roles = [("system" if m.role == "developer" else m.role, [m.text]) for m in messages]
    try:
        return chat_ids(tokenizer, roles)
    except jinja2.TemplateError as exc:
        raise RequestRejected(f"messages: the model's chat template refused them: {exc}") \
            from None


class ChatRequest(SamplingFields):
    messages: list[ChatMessage] = Field(min_length=1, description="the conversation, 1 "
                                        "message or more; its tokens must leave room for "
                                        "max_tokens in max_model_len")
    max_completion_tokens: int | None = bounded("max_tokens", ge=1,
                                                description="OpenAI's newer max_tokens; wins "
                                                            "over it")
    logprobs: bool = Field(False, description="report the chosen tokens' log-probabilities")
    top_logprobs: int | None = Field(None, ge=0, le=MAX_LOGPROBS, description="with logprobs: "
                                     f"also the 0 to {MAX_LOGPROBS} most likely tokens")

    def top_logprobs_wanted(self) -> int | None:
        if self.top_logprobs is not None and not self.logprobs:
            raise ValueError("top_logprobs: needs logprobs: true")
        return (self.top_logprobs or 0) if self.logprobs else None


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


class CompletionLogprobs(BaseModel):
    text_offset: list[int]
    token_logprobs: list[float | None]
    tokens: list[str]
    top_logprobs: list[dict[str, float] | None]


class PromptLogprob(BaseModel):
    logprob: float
    rank: int | None
    decoded_token: str | None


PromptLogprobs = list[dict[str, PromptLogprob] | None] | None


class CompletionChoice(BaseModel):
    index: int
    text: str
    finish_reason: str | None
    logprobs: CompletionLogprobs | None
    prompt_logprobs: PromptLogprobs = Field(
        description="with prompt_logprobs: per prompt token (null for the first), "
                    "{token id: {logprob, rank, decoded_token}}")


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


class TopLogprob(BaseModel):
    token: str
    logprob: float
    bytes: list[int] | None


class TokenLogprob(TopLogprob):
    top_logprobs: list[TopLogprob]


class ChatLogprobs(BaseModel):
    content: list[TokenLogprob] | None


class ChatChoice(BaseModel):
    index: int
    message: AssistantMessage
    finish_reason: str | None
    logprobs: ChatLogprobs | None


class ChatCompletion(BaseModel):
    id: str
    object: Literal["chat.completion"]
    created: int
    model: str
    choices: list[ChatChoice]
    usage: Usage
    prompt_logprobs: PromptLogprobs = Field(description="with prompt_logprobs, as on "
                                                       "completions' choices (vLLM's)")


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
