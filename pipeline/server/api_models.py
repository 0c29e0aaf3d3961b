"""Request and answer models of /ask and /search, with their documented ranges.

Unknown fields are refused (a misspelt option must not be ignored), and so is any value
out of range: nothing is clamped. `max_tokens` is bounded by the served model (see
request_limits); the schema at /openapi.json shows the bound of the running server.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from pipeline.server.guards.request_limits import NOT_BLANK, Temperature, bounded, temperature

MAX_QUESTION_CHARS = 4000


def require_text(value: str, what: str) -> str:
    if not value.strip():
        raise ValueError(f"must contain a {what}, not only whitespace")
    return value


class AskRequest(BaseModel):
    """POST /ask."""

    model_config = ConfigDict(extra="forbid", strict=True)
    question: str = Field(
        min_length=1, max_length=MAX_QUESTION_CHARS, json_schema_extra={"pattern": NOT_BLANK},
        description=f"the question: 1 to {MAX_QUESTION_CHARS} characters, not only "
                    "whitespace, and short enough in tokens to leave max_tokens in the "
                    "model's context (the 4xx message gives the limit)")
    top_k: int | None = Field(None, ge=1, le=20,
                              description="passages to retrieve, 1 to 20 (default: the "
                                          "top_k setting)")
    max_tokens: int | None = bounded(
        "max_tokens", ge=1, description="answer length in tokens, at least 1 and at most the "
                                        "schema's maximum (default: the max_tokens setting)")
    temperature: Temperature | None = temperature(None)
    stream: bool = Field(False, description="answer as server-sent events: token deltas, "
                                            "then one final event")

    _not_blank = field_validator("question")(lambda value: require_text(value, "question"))


class SearchRequest(BaseModel):
    """POST /search."""

    model_config = ConfigDict(extra="forbid", strict=True)
    query: str = Field(min_length=1, max_length=MAX_QUESTION_CHARS,
                       json_schema_extra={"pattern": NOT_BLANK},
                       description=f"1 to {MAX_QUESTION_CHARS} characters, not only whitespace")
    top_k: int | None = Field(None, ge=1, le=100, description="passages, 1 to 100")

    _not_blank = field_validator("query")(lambda value: require_text(value, "query"))


# -- answers (documentation; the routes build plain dicts) --------------------------------
class Source(BaseModel):
    id: str
    doc_id: str
    title: str
    text: str
    score: float


class AskAnswer(BaseModel):
    answer: str
    intent: str
    sources: list[Source]
    usage: dict[str, int]
    timings: dict[str, float | None]
    intent_scores: dict[str, float]
    finish_reason: str | None


class SearchAnswer(BaseModel):
    sources: list[Source]
    timings: dict[str, float]


def event_stream(data: dict[str, Any], what: str) -> dict[str, Any]:
    """A text/event-stream answer whose every event's `data` is described by `data`."""
    return {"text/event-stream": {"schema": {
        "type": "object", "required": ["data"], "description": what,
        "properties": {"data": data, "event": {"type": "string"}}}}}


ASK_STREAM = event_stream(
    {"type": "string", "contentMediaType": "application/json", "contentSchema": {
        "type": "object", "required": ["type"], "properties": {"type": {"type": "string"}}}},
    "with stream: true: {type: token, text} events, then one {type: final, ...} event with "
    "the answer's sources, usage and timings")
OPENAI_STREAM = event_stream(
    {"type": "string"}, "with stream: true: OpenAI's chunks as JSON, then `[DONE]`")
