"""Our own routes: POST /ask (the RAG answer, JSON or a token stream) and POST /search."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import StreamingResponse

from pipeline.rag import AskOptions, RAGPipeline, TokenEvent, source_dict
from pipeline.server.api_models import (
    ASK_STREAM,
    AskAnswer,
    AskObject,
    AskRequest,
    SearchAnswer,
    SearchRequest,
)
from pipeline.server.ask_format import check_schema, shaped
from pipeline.server.errors import OUR_ERRORS, request_id
from pipeline.server.guards.access import caller_collections
from pipeline.server.guards.admission import admit
from pipeline.server.guards.connection import draining
from pipeline.server.guards.disconnect import cancel_on_disconnect
from pipeline.server.guards.request_limits import RequestLimits, ask_tokens
from pipeline.server.guards.shutdown import SHUTTING_DOWN
from pipeline.server.observability.access_log import record_usage
from pipeline.server.observability.audit_trail import answer_fields, audit
from pipeline.server.streaming import sse, stream_error

router = APIRouter()


def pipe_of(request: Request) -> RAGPipeline:
    return request.app.state.pipeline


@router.post("/ask", responses={200: {
    "model": AskAnswer | AskObject | Any, "content": ASK_STREAM,
    "description": "the answer (AskAnswer); with response_format json_object, the typed answer "
                   "object (AskObject); with json_schema, the document the schema describes"},
    **OUR_ERRORS})
async def ask(body: AskRequest, request: Request) -> Any:
    pipe = pipe_of(request)
    RequestLimits.of(request.app).check(body)
    structured = body.structured_outputs()
    if structured is not None:  # a bad schema is refused before any stage runs
        await check_schema(pipe.engine, structured)
    admit(request, ask_tokens(pipe, body.question, body.top_k, body.max_tokens))
    rid = request_id(request.headers)
    opts = AskOptions(body.top_k, body.max_tokens, body.temperature, structured,
                      body.metadata_filter(caller_collections(request)), rid)
    kind, max_tokens = body.format_kind, body.max_tokens or pipe.settings.max_tokens
    if not pipe.engine.is_running:  # 503 now, rather than a 200 stream that fails
        raise pipe.engine.dead_error()
    if request.app.state.mirror is not None:
        request.app.state.mirror.submit(body.model_dump_json(by_alias=True).encode(), rid)
    if not body.stream:
        answer = (await cancel_on_disconnect(request, pipe.ask(body.question, opts))).to_dict()
        await _account(request, body.question, answer)
        return answer if kind == "text" else shaped(kind, answer, max_tokens)

    async def events():
        try:
            async for event in pipe.stream(body.question, opts):
                if isinstance(event, TokenEvent):
                    yield sse({"type": "token", "text": event.text})
                else:
                    final = event.answer.to_dict()
                    await _account(request, body.question, final)
                    if kind != "text":
                        yield sse({"type": "final", "object": shaped(kind, final, max_tokens)})
                        continue
                    final.pop("answer")
                    yield sse({"type": "final", **final})
        except asyncio.CancelledError:
            if not draining(request.scope):
                raise
            yield sse({"type": "error", "message": SHUTTING_DOWN})  # cut by a shutdown
        except Exception as exc:  # the status line is gone: the error is the last event
            yield sse({"type": "error", "message": stream_error(exc, rid)})

    return StreamingResponse(events(), media_type="text/event-stream")


async def _account(request: Request, question: str, answer: dict[str, Any]) -> None:
    """Tokens and timings for the access log and trace; the audit record."""
    usage = answer.get("usage", {})
    record_usage(request.scope, usage.get("prompt_tokens", 0),
                 usage.get("completion_tokens", 0), answer.get("timings"))
    await audit(request, answer_fields(question, answer))


@router.post("/search", responses={200: {"model": SearchAnswer}, **OUR_ERRORS})
async def search(body: SearchRequest, request: Request) -> Any:
    pipe = pipe_of(request)
    admit(request, 0)
    t0 = time.perf_counter()
    passages = await pipe.search(body.query, body.top_k,
                                 body.metadata_filter(caller_collections(request)))
    return {"sources": [source_dict(p) for p in passages],
            "timings": {"retrieve_ms": round((time.perf_counter() - t0) * 1000, 3)}}
