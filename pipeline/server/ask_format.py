"""`response_format` on /ask: the answer as a typed object instead of the full envelope.

`json_object` builds finrag's answer object from the fields the pipeline computed (nothing
extra is generated); `json_schema` has the generation stage write the answer under the
schema's grammar, and the object is that document. Either way, the body of a non-streamed
answer is the object itself, and a stream's final event carries it as `object` (a schema of
the caller's may have a `type` property of its own).
"""

from __future__ import annotations

import json
import re
from typing import Any

from llm_engine import InvalidRequestError
from llm_engine.structured_output import StructuredOutputsParams

_INTEGER = re.compile(r"-?\d+")


def typed_value(short_answer: str | list[str] | None, answer_type: str | None) -> Any:
    """The short answer as JSON types: a number when it was computed (arithmetic, count),
    the text of a span, a list of texts for several spans, None when there is none."""
    if isinstance(short_answer, str) and answer_type in ("arithmetic", "count"):
        try:
            number = float(short_answer)
        except ValueError:
            return short_answer
        return int(short_answer) if _INTEGER.fullmatch(short_answer) else number
    return short_answer


def answer_object(answer: dict[str, Any]) -> dict[str, Any]:
    """`{"type": "json_object"}`: value, scale, answer_type, derivation, citations, answer."""
    return {"value": typed_value(answer.get("short_answer"), answer.get("answer_type")),
            "scale": answer.get("scale", ""), "answer_type": answer.get("answer_type"),
            "derivation": answer.get("derivation"), "citations": answer.get("citations", []),
            "answer": answer["answer"]}


def schema_object(answer: dict[str, Any], max_tokens: int) -> Any:
    """`{"type": "json_schema"}`: the generated document, parsed. The grammar makes every
    finished answer parse; one cut at max_tokens does not, and is refused saying so."""
    try:
        return json.loads(answer["answer"])
    except ValueError:
        reason = answer.get("finish_reason")
        cause = (f"reached max_tokens ({max_tokens}) before its JSON document was complete: "
                 "raise max_tokens or ask for a smaller object" if reason == "length" else
                 f"ended ({reason}) before its JSON document was complete")
        raise InvalidRequestError(f"response_format: the answer {cause}") from None


async def check_schema(engine: Any, params: StructuredOutputsParams) -> None:
    """Compile the schema before any stage runs: a 400 naming the request's field and what
    the grammar compiler found wrong (the engine's message names its own field)."""
    try:
        await engine.check_structured_outputs(params)
    except InvalidRequestError as exc:
        detail = str(exc).removeprefix("structured_outputs.json: ")
        raise InvalidRequestError(f"response_format.json_schema.schema: {detail}") from None


def shaped(kind: str, answer: dict[str, Any], max_tokens: int) -> Any:
    """The object `response_format` of type `kind` asks for, from the full answer."""
    return answer_object(answer) if kind == "json_object" else schema_object(answer, max_tokens)
