"""OpenAI-compatible routes, as vLLM serves them: models, completions, chat, embeddings."""

from __future__ import annotations

import base64
import itertools
import time
from collections.abc import AsyncIterator
from typing import Any, Literal

import numpy as np
from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from llm_engine import RequestOutput, SamplingParams
from pipeline.app import sse, stream_error
from pipeline.disconnect import cancel_on_disconnect

router = APIRouter(prefix="/v1")
_ids = itertools.count()


class SamplingFields(BaseModel):
    """OpenAI's sampling fields plus vLLM's extras (top_k, min_p, repetition_penalty, ...)."""

    model_config = ConfigDict(extra="forbid")
    model: str | None = None
    max_tokens: int | None = Field(None, ge=1)
    temperature: float = Field(1.0, ge=0.0, le=2.0)
    top_p: float = Field(1.0, gt=0.0, le=1.0)
    top_k: int = Field(0, ge=-1)
    min_p: float = Field(0.0, ge=0.0, le=1.0)
    n: int = Field(1, ge=1, le=1, description="only 1 is supported")
    stream: bool = False
    stream_options: dict[str, Any] | None = None
    stop: str | list[str] | None = None
    stop_token_ids: list[int] | None = None
    seed: int | None = None
    presence_penalty: float = Field(0.0, ge=-2.0, le=2.0)
    frequency_penalty: float = Field(0.0, ge=-2.0, le=2.0)
    repetition_penalty: float = Field(1.0, gt=0.0, le=2.0)
    min_tokens: int = Field(0, ge=0)
    ignore_eos: bool = False
    skip_special_tokens: bool = True
    include_stop_str_in_output: bool = False
    logit_bias: dict[str, float] | None = None  # accepted, ignored
    user: str | None = None

    def sampling_params(self, default_max: int) -> SamplingParams:
        return SamplingParams(
            temperature=self.temperature, top_p=self.top_p, top_k=self.top_k, min_p=self.min_p,
            presence_penalty=self.presence_penalty, frequency_penalty=self.frequency_penalty,
            repetition_penalty=self.repetition_penalty, seed=self.seed, stop=self.stop,
            stop_token_ids=self.stop_token_ids, max_tokens=self.max_tokens or default_max,
            min_tokens=self.min_tokens, ignore_eos=self.ignore_eos,
            skip_special_tokens=self.skip_special_tokens,
            include_stop_str_in_output=self.include_stop_str_in_output)

    @property
    def include_usage(self) -> bool:
        return bool((self.stream_options or {}).get("include_usage"))


class CompletionRequest(SamplingFields):
    prompt: str | list[str] | list[int] = Field(description="one prompt: text or token ids")
    echo: bool = False
    logprobs: int | None = Field(None, ge=0, le=20)
    best_of: int | None = Field(None, ge=1, le=1)
    suffix: str | None = None


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: Literal["system", "user", "assistant", "tool", "developer"]
    content: str | list[dict[str, Any]] | None = None


class ChatRequest(SamplingFields):
    messages: list[ChatMessage] = Field(min_length=1)
    max_completion_tokens: int | None = Field(None, ge=1)
    logprobs: bool = False
    top_logprobs: int | None = Field(None, ge=0, le=20)


class EmbeddingRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    input: str | list[str] = Field(description="a text or a list of 1 to 2048 texts")
    model: str | None = None
    encoding_format: Literal["float", "base64"] = "float"
    dimensions: int | None = None
    user: str | None = None


def _error(message: str, status: int = 400, kind: str = "BadRequestError") -> JSONResponse:
    return JSONResponse({"error": {"message": message, "type": kind, "code": status}},
                        status_code=status)


def _check_model(pipe: Any, model: str | None, allowed: list[str]) -> JSONResponse | None:
    if model is not None and model not in allowed:
        return _error(f"The model `{model}` does not exist; use one of {allowed}", 404,
                      "NotFoundError")
    return None


@router.get("/models")
async def models(request: Request) -> Any:
    pipe = request.app.state.pipeline
    now = int(time.time())
    return {"object": "list", "data": [
        {"id": pipe.model_name, "object": "model", "created": now, "owned_by": "finrag",
         "root": pipe.settings.model, "max_model_len": pipe.engine.engine.max_model_len},
        {"id": pipe.embedder_name, "object": "model", "created": now, "owned_by": "finrag",
         "root": pipe.embedder_name},
    ]}


async def _first_and_rest(gen: AsyncIterator[RequestOutput]) -> tuple[RequestOutput,
                                                                       AsyncIterator]:
    """Await the first output before answering, so a bad prompt still gets a 400."""
    first = await gen.__anext__()
    return first, gen


async def _serve(request: Request, body: SamplingFields, prompt: Any, kind: str) -> Any:
    pipe = request.app.state.pipeline
    bad = _check_model(pipe, body.model, [pipe.model_name])
    if bad is not None:
        return bad
    max_tokens = getattr(body, "max_completion_tokens", None) or body.max_tokens
    body.max_tokens = max_tokens
    params = body.sampling_params(pipe.settings.max_tokens)
    rid = f"{'chatcmpl' if kind == 'chat' else 'cmpl'}-{next(_ids)}"
    created, t0 = int(time.time()), time.perf_counter()
    gen = pipe.engine.generate(prompt, params, rid)
    first, gen = await cancel_on_disconnect(request, _first_and_rest(gen))
    obj = "chat.completion" if kind == "chat" else "text_completion"

    def usage(out: RequestOutput) -> dict[str, int]:
        p, c = len(out.prompt_token_ids), len(out.outputs[0].token_ids)
        return {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}

    def observe(out: RequestOutput, t_first: float | None) -> None:
        u = usage(out)
        pipe.metrics.observe_completion(t_first, time.perf_counter() - t0, u["prompt_tokens"],
                                        u["completion_tokens"])

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
        observe(out, t_first)
        return {"id": rid, "object": obj, "created": created, "model": pipe.model_name,
                "choices": [choice(out.outputs[0].text, out.outputs[0].finish_reason, False)],
                "usage": usage(out)}

    chunk_obj = "chat.completion.chunk" if kind == "chat" else "text_completion"

    def chunk(choices: list[dict[str, Any]], extra: dict | None = None) -> bytes:
        return sse({"id": rid, "object": chunk_obj, "created": created,
                    "model": pipe.model_name, "choices": choices, **(extra or {})})

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
            yield sse({"error": {"message": stream_error(exc), "type": "InternalServerError",
                                 "code": 500}})
            yield b"data: [DONE]\n\n"
            return
        observe(out, t_first)
        if body.include_usage:
            yield chunk([], {"usage": usage(out)})
        yield b"data: [DONE]\n\n"

    return StreamingResponse(events(), media_type="text/event-stream")


@router.post("/completions")
async def completions(body: CompletionRequest, request: Request) -> Any:
    if body.echo or body.suffix or body.logprobs:
        return _error("echo, suffix and logprobs are not supported by this server")
    prompt = body.prompt
    if isinstance(prompt, list) and prompt and isinstance(prompt[0], str):
        if len(prompt) != 1:
            return _error("prompt: give one prompt per request (a string or token ids)")
        prompt = prompt[0]
    if isinstance(prompt, list):
        prompt = {"prompt_token_ids": prompt}
    return await _serve(request, body, prompt, "completion")


def _text_of(content: str | list[dict[str, Any]] | None) -> str:
    if content is None or isinstance(content, str):
        return content or ""
    parts = []
    for part in content:
        if part.get("type") != "text":
            raise ValueError(f"messages: content part type {part.get('type')!r} is not "
                             "supported; send text")
        parts.append(str(part.get("text", "")))
    return "".join(parts)


@router.post("/chat/completions")
async def chat_completions(body: ChatRequest, request: Request) -> Any:
    if body.logprobs:
        return _error("logprobs are not supported by this server's chat route")
    pipe = request.app.state.pipeline
    messages = [{"role": "system" if m.role == "developer" else m.role,
                 "content": _text_of(m.content)} for m in body.messages]
    ids = pipe.tokenizer.apply_chat_template(messages, add_generation_prompt=True,
                                             tokenize=True)
    return await _serve(request, body, {"prompt_token_ids": ids}, "chat")


@router.post("/embeddings")
async def embeddings(body: EmbeddingRequest, request: Request) -> Any:
    pipe = request.app.state.pipeline
    bad = _check_model(pipe, body.model, [pipe.embedder_name])
    if bad is not None:
        return bad
    texts = [body.input] if isinstance(body.input, str) else list(body.input)
    if not 1 <= len(texts) <= 2048:
        return _error("input: give 1 to 2048 texts")
    if body.dimensions is not None and body.dimensions != pipe.embedder.dim:
        return _error(f"dimensions: this embedder gives {pipe.embedder.dim}, not "
                      f"{body.dimensions}")
    vectors = np.asarray(await pipe.embed(texts), dtype=np.float32)
    tok = getattr(pipe.embedder, "tokenizer", None)
    if hasattr(tok, "encode_batch"):
        n_tokens = sum(len(e.ids) for e in tok.encode_batch(texts))
    else:
        n_tokens = sum(len(t.split()) for t in texts)
    data = []
    for i, v in enumerate(vectors):
        emb: Any = (base64.b64encode(v.tobytes()).decode() if body.encoding_format == "base64"
                    else v.tolist())
        data.append({"object": "embedding", "index": i, "embedding": emb})
    return {"object": "list", "data": data, "model": pipe.embedder_name,
            "usage": {"prompt_tokens": n_tokens, "total_tokens": n_tokens}}
