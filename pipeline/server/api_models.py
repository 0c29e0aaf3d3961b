"""Request and answer models of /ask and /search, with their documented ranges.

Unknown fields are refused (a misspelt option must not be ignored), and so is any value
out of range: nothing is clamped. `max_tokens` is bounded by the served model (see
request_limits); the schema at /openapi.json shows the bound of the running server.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from llm_engine.structured_output import StructuredOutputsParams
from pipeline.server.guards.request_limits import NOT_BLANK, Temperature, bounded, temperature
from pipeline.server.openai.openai_models import ResponseFormat
from retriever_trt.search.filters import FILTER_FIELDS, MetadataFilter, within_tenant

FILTERS_DESCRIPTION = (
    f"a metadata filter, as a vector database has: {{{', '.join(FILTER_FIELDS)}}}, each a "
    "value or a list (fiscal_year an integer; form e.g. \"10-K\"); only documents matching "
    "every field given are searched and cited, and only in the collections the caller's "
    "API key may read. A question that names a company and period "
    "is further scoped to that filing, never outside this filter")


def _check_filters(value: dict[str, Any] | None) -> dict[str, Any] | None:
    MetadataFilter.from_dict(value)  # a ValueError names the field to fix
    return value

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
    filters: dict[str, Any] | None = Field(None, description=FILTERS_DESCRIPTION)
    response_format: ResponseFormat | None = Field(
        None, description="OpenAI's shape. text (default): the answer below. json_object: the "
        "body is the typed answer object (AskObject: value, scale, answer_type, derivation, "
        "citations, answer) built from the computed fields. json_schema: the answer is "
        "generated under the schema's grammar (always generated: fixed replies and computed "
        "prose are skipped) and the body is that JSON document; a schema that cannot be "
        "compiled is a 400 naming what is wrong. With stream: the token events carry the text "
        "as generated (the JSON itself with json_schema, as vLLM streams structured output) "
        "and the final event is {type: final, object}")

    _not_blank = field_validator("question")(lambda value: require_text(value, "question"))
    _filters = field_validator("filters")(_check_filters)

    def metadata_filter(self, tenant: frozenset[str] | None = None) -> MetadataFilter | None:
        """The request's filter within the collections the caller's key may read."""
        return within_tenant(MetadataFilter.from_dict(self.filters), tenant)

    @model_validator(mode="after")
    def _check_format(self) -> AskRequest:
        self.structured_outputs()  # a json_schema without its schema is refused here
        return self

    def structured_outputs(self) -> StructuredOutputsParams | None:
        """The grammar the generation stage writes under (json_schema only: json_object is
        built from the computed fields, not generated)."""
        fmt = self.response_format
        return fmt.params() if fmt is not None and fmt.type == "json_schema" else None

    @property
    def format_kind(self) -> str:
        return "text" if self.response_format is None else self.response_format.type


class SearchRequest(BaseModel):
    """POST /search."""

    model_config = ConfigDict(extra="forbid", strict=True)
    query: str = Field(min_length=1, max_length=MAX_QUESTION_CHARS,
                       json_schema_extra={"pattern": NOT_BLANK},
                       description=f"1 to {MAX_QUESTION_CHARS} characters, not only whitespace")
    top_k: int | None = Field(None, ge=1, le=100, description="passages, 1 to 100")
    filters: dict[str, Any] | None = Field(None, description=FILTERS_DESCRIPTION)

    _not_blank = field_validator("query")(lambda value: require_text(value, "query"))
    _filters = field_validator("filters")(_check_filters)

    def metadata_filter(self, tenant: frozenset[str] | None = None) -> MetadataFilter | None:
        """The request's filter within the collections the caller's key may read."""
        return within_tenant(MetadataFilter.from_dict(self.filters), tenant)


# -- answers (documentation; the routes build plain dicts) --------------------------------
class SourceTable(BaseModel):
    rows: list[list[str]] = Field(description="the parsed table as it appears in the source, "
                                              "header rows included; citations index into it")


class Source(BaseModel):
    id: str
    doc_id: str
    title: str
    text: str
    score: float
    table: SourceTable | None = Field(None, description="present when the passage is (part "
                                                        "of) a table")


class FactCitation(BaseModel):
    """A tagged (inline XBRL) fact an answer is computed from."""

    id: str = Field(description="the fact's id in the filing")
    concept: str = Field(description="its XBRL concept, e.g. us-gaap:Revenues")
    value: str = Field(description="its value in its unit (dollars, not millions)")
    unit: str
    start: str | None = Field(None, description="the period's first day; null for a balance")
    end: str = Field(description="the period's last day, or the balance's date")


class CoverFact(BaseModel):
    """A field of a filing's cover, as the cover shows it."""

    value: str = Field(description='e.g. "Delaware"')
    facts: list[dict[str, str]] = Field(description="the dei facts tagging it: id, text "
                                                    "(inline XBRL); empty for a PDF")
    page: int | None = Field(description="the page it was read from (a PDF); null when tagged")


class Filing(BaseModel):
    """The document an answer used, with its metadata."""

    doc_id: str
    title: str = Field(description='e.g. "Apple Inc. 10-K FY2024"')
    company: str
    ticker: str
    form: str
    fiscal_year: int | None
    fiscal_period: str
    period_end: str | None
    pages: int | None
    cover: dict[str, CoverFact] = Field(
        default_factory=dict, description="the other fields its cover states, by name "
        "(incorporation, tax_id, city, state, exchange, file_number, phone)")


class Citation(BaseModel):
    """A table cell the short answer uses, a tagged fact (with the cell showing it), or
    (`quote`) the sentence it was cut from."""

    source_id: str | None = Field(None, description="the `id` of the entry of `sources` "
                                  "holding the cell or the sentence; null for a fact no "
                                  "table shows")
    doc_id: str | None = Field(None, description="the document of a fact")
    fact: FactCitation | None = Field(None, description="the tagged fact, for an answer "
                                                        "computed from a filing's facts")
    row: str | None = Field(None, description="the cell's row header")
    column: str | None = Field(None, description="the cell's column header")
    value: str | None = Field(None, description="the cell as written in the table")
    row_index: int | None = Field(None, ge=0, description="index into that source's table.rows")
    column_index: int | None = Field(None, ge=0, description="index into that row")
    quote: str | None = Field(None, description="for an answer from the text: the sentence of "
                                                "that source it is cut from (no cell fields)")
    page: int | None = Field(None, ge=1, description="the page of a PDF filing showing the "
                                                     "cell, fact or cover field; absent for HTML")


class AskResult(BaseModel):
    """Everything of an answer but its prose: the final event of a stream."""

    intent: str
    short_answer: str | list[str] | None = Field(
        None, description="the bare value: a number as a plain decimal string (no thousands "
                          "separators, unit or % sign; sign as '-', e.g. \"51.37\", \"-1200\"), "
                          "a span's text, or a list of spans; null when nothing was found "
                          "(the prose then says so)")
    scale: Literal["", "thousand", "million", "billion", "percent"] = Field(
        "", description="the short answer's scale in TAT-QA's vocabulary; '' for spans and "
                        "plain numbers")
    answer_type: Literal["arithmetic", "span", "multi-span", "count"] | None = Field(
        None, description="how the short answer was found; null when there is none")
    derivation: str | None = Field(
        None, description="how a computed number was obtained from the cited cells, e.g. "
                          "\"(149,843 - 98,993) / 98,993 = 51.37%\"; null when not computed")
    citations: list[Citation] = Field(
        default_factory=list, description="the table cells the short answer uses, or the "
                                          "sentence it is cut from")
    sources: list[Source]
    filing: Filing | None = Field(None, description="the filing the answer used; null for "
                                                    "documents without metadata")
    usage: dict[str, int]
    timings: dict[str, float | None]
    intent_scores: dict[str, float]
    finish_reason: str | None = Field(
        description="'stop' when the answer ended by itself, 'length' at max_tokens")


class AskAnswer(AskResult):
    answer: str = Field(description="the answer in prose, one or two sentences")


class AskObject(BaseModel):
    """The body of /ask with response_format {"type": "json_object"}."""

    value: int | float | str | list[str] | None = Field(
        description="the short answer typed: a number when computed (answer_type arithmetic "
                    "or count), a span's text, a list of spans' texts; null when none")
    scale: Literal["", "thousand", "million", "billion", "percent"]
    answer_type: Literal["arithmetic", "span", "multi-span", "count"] | None
    derivation: str | None
    citations: list[Citation]
    answer: str = Field(description="the answer in prose")


class SearchAnswer(BaseModel):
    sources: list[Source]
    timings: dict[str, float]


def event_stream(data: dict[str, Any], what: str) -> dict[str, Any]:
    """A text/event-stream answer whose every event's `data` is described by `data`."""
    return {"text/event-stream": {"schema": {
        "type": "object", "required": ["data"], "description": what,
        "properties": {"data": data, "event": {"type": "string"}}}}}


def final_event_schema() -> dict[str, Any]:
    """AskResult with `type: final`, inline: its models are components through AskAnswer."""
    schema = AskResult.model_json_schema(ref_template="#/components/schemas/{model}")
    schema.pop("$defs", None)
    schema["properties"] = {"type": {"const": "final"}, **schema["properties"]}
    schema["required"] = ["type", *schema["required"]]
    return schema


ASK_STREAM = event_stream(
    {"type": "string", "contentMediaType": "application/json", "contentSchema": {"oneOf": [
        {"type": "object", "required": ["type", "text"], "properties": {
            "type": {"const": "token"}, "text": {"type": "string"}}},
        final_event_schema(),
        {"type": "object", "required": ["type", "object"], "properties": {
            "type": {"const": "final"}, "object": {"description": "with response_format: "
                                                   "what the non-streamed call returns"}}},
        {"type": "object", "required": ["type", "message"], "properties": {
            "type": {"const": "error"}, "message": {"type": "string"}}}]}},
    "with stream: true: {type: token, text} events, then one {type: final, ...} event with "
    "everything of the JSON answer but its prose `answer` (short_answer, scale, answer_type, "
    "derivation, citations, sources, usage, timings) or, with response_format, {type: final, "
    "object}, or {type: error, message}")
OPENAI_STREAM = event_stream(
    {"type": "string"}, "with stream: true: OpenAI's chunks as JSON, then `[DONE]`")
