"""OpenAI-compatible routes, as vLLM serves them: models, completions, chat, embeddings."""

from __future__ import annotations

import base64
import itertools
import time
from collections.abc import AsyncIterator
from typing import Any

import jinja2
import numpy as np
from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, StreamingResponse

from llm_engine import RequestOutput
from pipeline.rag.prompts import chat_ids
from pipeline.server.access_log import record_usage
from pipeline.server.api_models import OPENAI_STREAM
from pipeline.server.audit_trail import audit
from pipeline.server.errors import (
    OPENAI_ERRORS,
    OPENAI_GET_ERRORS,
    RequestRejected,
    error_response,
    request_id,
)
from pipeline.server.guards.admission import admit
from pipeline.server.guards.disconnect import cancel_on_disconnect
from pipeline.server.guards.request_limits import RequestLimits
from pipeline.server.openai_models import (
    MAX_EMBED_INPUTS,
    ChatCompletion,
    ChatRequest,
    Completion,
    CompletionRequest,
    EmbeddingList,
    EmbeddingRequest,
    ModelList,
    SamplingFields,
)
from pipeline.server.streaming import sse, stream_error

router = APIRouter(prefix="/v1")
_ids = itertools.count()


def _check_model(request: Request, model: str | None, allowed: list[str]) -> JSONResponse | None:
    # The model name is only ever compared with the served names, never opened as a path.
    if model is not None and model not in allowed:
        return error_response(request.scope, 404,
                              f"The model `{model}` does not exist; use one of {allowed}")
    return None


@router.get("/models", responses={200: {"model": ModelList}, **OPENAI_GET_ERRORS})
async def models(request: Request) -> Any:
    pipe = request.app.state.pipeline
    now = int(time.time())
    return {"object": "list", "data": [
        {"id": pipe.model_name, "object": "model", "created": now, "owned_by": "finrag",
         "root": pipe.settings.model, "max_model_len": pipe.engine.max_model_len},
        {"id": pipe.embedder_name, "object": "model", "created": now, "owned_by": "finrag",
         "root": pipe.embedder_name},
    ]}


async def _first_and_rest(gen: AsyncIterator[RequestOutput]) -> tuple[RequestOutput,
                                                                       AsyncIterator]:
    """Await the first output before answering, so a bad prompt still gets a 400."""
    first = await gen.__anext__()
    return first, gen


async def _serve(request: Request, body: SamplingFields, prompt: dict[str, Any],
                 kind: str) -> Any:
    """Check the prompt's tokens against the model, admit, then answer or stream."""
    pipe = request.app.state.pipeline
    limits = RequestLimits.of(request.app)
    limits.check(body)
    n_prompt = len(prompt["prompt_token_ids"])
    asked = getattr(body, "max_completion_tokens", None) or body.max_tokens
    limits.check_prompt(n_prompt, asked)
    max_tokens = asked or min(pipe.settings.max_tokens, limits.max_model_len - n_prompt)
    if body.stream_options is not None and not body.stream:
        raise RequestRejected("stream_options: only with stream: true")
    params = body.sampling_params(max_tokens)
    admit(request, n_prompt + max_tokens)
    rid = f"{'chatcmpl' if kind == 'chat' else 'cmpl'}-{next(_ids)}"
    created, t0 = int(time.time()), time.perf_counter()
    gen = pipe.engine.generate(prompt, params, rid)
    first, gen = await cancel_on_disconnect(request, _first_and_rest(gen))
    obj = "chat.completion" if kind == "chat" else "text_completion"

    def usage(out: RequestOutput) -> dict[str, int]:
        p, c = len(out.prompt_token_ids), len(out.outputs[0].token_ids)
        return {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}

    async def observe(out: RequestOutput, t_first: float | None) -> None:
        u = usage(out)
        pipe.metrics.observe_completion(t_first, time.perf_counter() - t0, u["prompt_tokens"],
                                        u["completion_tokens"])
        record_usage(request.scope, u["prompt_tokens"], u["completion_tokens"])
        await audit(request, {"id": rid, "prompt": _asked(body), "answer": out.outputs[0].text,
                              "finish_reason": out.outputs[0].finish_reason, "usage": u})

    def choice(text: str, finish: str | None, delta: bool) -> dict[str, Any]:
        if kind == "chat":
            key = "delta" if delta else "message"
            msg = {"content": text} if delta else {"role": "assistant", "content": text}
            return {"index": 0, key: msg, "finish_reason": finish, "logprobs": None}
        return {"index": 0, "text": text, "finish_reason": finish, "logprobs": None}

    if not body.stream:
        async def rest() -> tuple[RequestOutput, float | None]:
            out = first
            t_first = time.perf_counter() - t0 if out.outputs[0].token_ids else None
            async for out in gen:
                if t_first is None and out.outputs[0].token_ids:
                    t_first = time.perf_counter() - t0
            return out, t_first

        out, t_first = await cancel_on_disconnect(request, rest())
        await observe(out, t_first)
        return {"id": rid, "object": obj, "created": created, "model": pipe.model_name,
                "choices": [choice(out.outputs[0].text, out.outputs[0].finish_reason, False)],
                "usage": usage(out)}

    chunk_obj = "chat.completion.chunk" if kind == "chat" else "text_completion"

    def chunk(choices: list[dict[str, Any]], extra: dict | None = None) -> bytes:
        return sse({"id": rid, "object": chunk_obj, "created": created,
                    "model": pipe.model_name, "choices": choices, **(extra or {})})

    stream_id = request_id(request.headers)

    async def events():
        if kind == "chat":
            yield chunk([{"index": 0, "delta": {"role": "assistant", "content": ""},
                          "finish_reason": None, "logprobs": None}])
        sent, out, t_first = 0, first, None

        async def outputs():
            yield first
            async for o in gen:
                yield o

        try:
            async for out in outputs():
                text = out.outputs[0].text
                if t_first is None and out.outputs[0].token_ids:
                    t_first = time.perf_counter() - t0
                if len(text) > sent:
                    yield chunk([choice(text[sent:], None, True)])
                    sent = len(text)
                if out.finished:
                    yield chunk([choice("", out.outputs[0].finish_reason, True)])
        except Exception as exc:  # as vLLM: an error object as the last chunk, then [DONE]
            yield sse({"error": {"message": stream_error(exc, stream_id), "type": "InternalServerError",
                                 "code": 500}})
            yield b"data: [DONE]\n\n"
            return
        await observe(out, t_first)
        if body.include_usage:
            yield chunk([], {"usage": usage(out)})
        yield b"data: [DONE]\n\n"

    return StreamingResponse(events(), media_type="text/event-stream")


def _asked(body: SamplingFields) -> Any:
    """What the caller sent as the prompt, for the audit record."""
    messages = getattr(body, "messages", None)
    if messages is not None:
        return [{"role": m.role, "content": m.text} for m in messages]
    return getattr(body, "prompt", None)


@router.post("/completions",
             responses={200: {"model": Completion, "content": OPENAI_STREAM}, **OPENAI_ERRORS})
async def completions(body: CompletionRequest, request: Request) -> Any:
    pipe = request.app.state.pipeline
    bad = _check_model(request, body.model, [pipe.model_name])
    if bad is not None:
        return bad
    prompt = body.prompt[0] if isinstance(body.prompt, list) and isinstance(body.prompt[0], str) \
        else body.prompt
    if isinstance(prompt, str):
        ids = pipe.tokenizer.encode(prompt)  # as the engine would, BOS included if the model asks
        return await _serve(request, body, {"prompt": prompt, "prompt_token_ids": ids},
                            "completion")
    return await _serve(request, body, {"prompt_token_ids": prompt}, "completion")


@router.post("/chat/completions",
             responses={200: {"model": ChatCompletion, "content": OPENAI_STREAM}, **OPENAI_ERRORS})
async def chat_completions(body: ChatRequest, request: Request) -> Any:
    pipe = request.app.state.pipeline
    bad = _check_model(request, body.model, [pipe.model_name])
    if bad is not None:
        return bad
    messages = [("system" if m.role == "developer" else m.role, [m.text]) for m in body.messages]
    try:
        ids = chat_ids(pipe.tokenizer, messages)
    except jinja2.TemplateError as exc:
        raise RequestRejected(f"messages: the model's chat template refused them: {exc}") \
            from None
    return await _serve(request, body, {"prompt_token_ids": ids}, "chat")


@router.post("/embeddings", responses={200: {"model": EmbeddingList}, **OPENAI_ERRORS})
async def embeddings(body: EmbeddingRequest, request: Request) -> Any:
    pipe = request.app.state.pipeline
    bad = _check_model(request, body.model, [pipe.embedder_name])
    if bad is not None:
        return bad
    texts = [body.input] if isinstance(body.input, str) else list(body.input)
    if not 1 <= len(texts) <= MAX_EMBED_INPUTS:
        raise RequestRejected(f"input: give 1 to {MAX_EMBED_INPUTS} texts, got {len(texts)}")
    if body.dimensions is not None and body.dimensions != pipe.embedder.dim:
        raise RequestRejected(f"dimensions: this embedder gives {pipe.embedder.dim}, not "
                              f"{body.dimensions}")
    n_tokens = _embedding_tokens(pipe.embedder, texts)
    admit(request, 0)
    vectors = np.asarray(await pipe.embed(texts), dtype=np.float32)
    data = []
    for i, v in enumerate(vectors):
        emb: Any = (base64.b64encode(v.tobytes()).decode() if body.encoding_format == "base64"
                    else v.tolist())
        data.append({"object": "embedding", "index": i, "embedding": emb})
    return {"object": "list", "data": data, "model": pipe.embedder_name,
            "usage": {"prompt_tokens": n_tokens, "total_tokens": n_tokens}}


def _embedding_tokens(embedder: Any, texts: list[str]) -> int:
    """Tokens of `texts`; a text longer than the embedder takes is refused, not truncated."""
    tok = getattr(embedder, "tokenizer", None)
    if not hasattr(tok, "encode_batch"):
        return sum(len(t.split()) for t in texts)
    encodings = tok.encode_batch(texts)
    limit = (tok.truncation or {}).get("max_length")
    for i, enc in enumerate(encodings):
        if enc.overflowing:
            raise RequestRejected(f"input[{i}]: more than {limit} tokens; the embedder takes "
                                  f"at most {limit} tokens per text: split it")
    return sum(len(e.ids) for e in encodings)
