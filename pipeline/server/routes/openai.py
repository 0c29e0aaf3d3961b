"""OpenAI-compatible routes, as vLLM serves them: models, completions, chat, embeddings."""

from __future__ import annotations

import asyncio
import base64
import itertools
import time
from collections.abc import AsyncIterator
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from fastapi import APIRouter, Request
from fastapi.responses import StreamingResponse

from llm_engine import RequestOutput
from pipeline.server.api_models import OPENAI_STREAM
from pipeline.server.errors import (
    OPENAI_ERRORS,
    OPENAI_GET_ERRORS,
    RequestRejected,
    request_id,
)
from pipeline.server.guards.admission import admit
from pipeline.server.guards.connection import draining
from pipeline.server.guards.disconnect import cancel_on_disconnect
from pipeline.server.guards.request_limits import RequestLimits
from pipeline.server.guards.shutdown import SHUTTING_DOWN
from pipeline.server.observability.access_log import record_usage
from pipeline.server.observability.audit_trail import audit
from pipeline.server.openai.openai_formats import CHAT, COMPLETION, CompletionFormat
from pipeline.server.openai.openai_models import (
    MAX_EMBED_INPUTS,
    ChatCompletion,
    ChatRequest,
    Completion,
    CompletionRequest,
    EmbeddingList,
    EmbeddingRequest,
    ModelList,
    SamplingFields,
    chat_prompt_ids,
    check_model,
)
from pipeline.server.openai.openai_outputs import prompt_logprobs, usage
from pipeline.server.streaming import sse, stream_error

router = APIRouter(prefix="/v1")
# Engine request ids stay unique when a client reuses its X-Request-Id.
_engine_ids = itertools.count()


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


@dataclass
class Child:
    """One engine request of an OpenAI request: choice `index` of prompt `prompt_index`."""

    index: int
    prompt_index: int
    first: RequestOutput
    rest: AsyncIterator[RequestOutput]
    last: RequestOutput | None = None
    t_first: float | None = None

    async def outputs(self) -> AsyncIterator[RequestOutput]:
        yield self.first
        async for out in self.rest:
            yield out


@dataclass
class _Call:
    """One OpenAI request being served: what every step of `_serve` shares."""

    request: Request
    body: SamplingFields
    fmt: CompletionFormat
    wanted: list[tuple[dict[str, Any], int]]  # each prompt and its max_tokens
    rid: str
    best_of: int
    top: int | None
    created: int = field(default_factory=lambda: int(time.time()))
    t0: float = field(default_factory=time.perf_counter)

    @property
    def pipe(self) -> Any:
        return self.request.app.state.pipeline

    @property
    def n_prompt_tokens(self) -> int:
        return sum(len(p["prompt_token_ids"]) for p, _ in self.wanted)

    def logprobs_of(self, out: RequestOutput, start: int = 0, offset: int = 0) -> Any:
        return self.fmt.logprobs(self.pipe.tokenizer, out, self.top, start, offset)

    async def finish(self, outs: list[RequestOutput], t_first: float | None) -> dict[str, int]:
        """Usage, metrics, the access log's token counts and the audit record."""
        u = usage(self.n_prompt_tokens, sum(len(o.outputs[0].token_ids) for o in outs))
        self.pipe.metrics.observe_completion(t_first, time.perf_counter() - self.t0,
                                             u["prompt_tokens"], u["completion_tokens"])
        record_usage(self.request.scope, u["prompt_tokens"], u["completion_tokens"])
        texts = [o.outputs[0].text for o in outs]
        await audit(self.request, {"id": self.rid, "prompt": _asked(self.body),
                                   "answer": texts[0] if len(texts) == 1 else texts,
                                   "finish_reason": outs[0].outputs[0].finish_reason,
                                   "usage": u})
        return u


async def _serve(request: Request, body: SamplingFields, prompts: list[dict[str, Any]],
                 fmt: CompletionFormat) -> Any:
    """Check each prompt's tokens against the model, admit, start, then answer or stream.

    `n` choices per prompt (`best_of` generated, the most likely `n` kept) are separate
    engine requests with the same prompt: the prefix cache gives them the prompt's KV
    blocks once, as vLLM's parallel sampling does."""
    call = _admit(request, body, prompts, fmt)
    children = await _start(call)
    if not body.stream:
        return await _collect(call, children)
    return StreamingResponse(_events(call, children), media_type="text/event-stream")


def _admit(request: Request, body: SamplingFields, prompts: list[dict[str, Any]],
           fmt: CompletionFormat) -> _Call:
    """The request's limits checked and its tokens admitted (else a 4xx/503 raised)."""
    pipe = request.app.state.pipeline
    limits = RequestLimits.of(request.app)
    limits.check(body)
    asked = getattr(body, "max_completion_tokens", None) or body.max_tokens
    if body.stream_options is not None and not body.stream:
        raise RequestRejected("stream_options: only with stream: true")
    best_of = getattr(body, "best_of", None) or body.n
    wanted: list[tuple[dict[str, Any], int]] = []
    for prompt in prompts:
        n_prompt = len(prompt["prompt_token_ids"])
        limits.check_prompt(n_prompt, asked)
        wanted.append((prompt, asked or min(pipe.settings.max_tokens,
                                            limits.max_model_len - n_prompt)))
    admit(request, sum((len(p["prompt_token_ids"]) + m) * best_of for p, m in wanted))
    return _Call(request, body, fmt, wanted, f"{fmt.id_prefix}-{request_id(request.headers)}",
                 best_of, body.top_logprobs_wanted())


async def _start(call: _Call) -> list[Child]:
    """One engine request per choice; each one's first output awaited, so a bad prompt or
    grammar is still a 400."""
    body, n = call.body, call.body.n
    # best_of ranks by cumulative log-probability, which needs the chosen tokens' logprobs.
    logprobs = call.top if call.best_of == n else max(call.top or 0, 0)
    gens = []
    for p_i, (prompt, max_tokens) in enumerate(call.wanted):
        for j in range(call.best_of):
            seed = None if body.seed is None else (body.seed + j) % 2**63
            # The prompt's logprobs are the same for every choice: the first computes them,
            # the others keep their prefix-cache hits.
            params = body.sampling_params(max_tokens, seed=seed, logprobs=logprobs,
                                          prompt_logprobs=j == 0)
            gens.append((p_i * call.best_of + j, p_i, call.pipe.engine.generate(
                prompt, params, f"{call.rid}-{p_i}-{j}.{next(_engine_ids)}")))
    try:
        starts = await cancel_on_disconnect(call.request, asyncio.gather(
            *[_first_and_rest(g) for _, _, g in gens]))
    except BaseException:
        for _, _, g in gens:
            await g.aclose()
        raise
    return [Child(i, p_i, first, rest)
            for (i, p_i, _), (first, rest) in zip(gens, starts, strict=True)]


async def _collect(call: _Call, children: list[Child]) -> dict[str, Any]:
    """The whole answer: every child run to its end, the best `n` of each prompt kept."""
    async def run(child: Child) -> None:
        async for out in child.outputs():
            if child.t_first is None and out.outputs[0].token_ids:
                child.t_first = time.perf_counter() - call.t0
            child.last = out

    await cancel_on_disconnect(call.request, asyncio.gather(*[run(c) for c in children]))
    kept = []
    for p_i in range(len(call.wanted)):
        mine = [c for c in children if c.prompt_index == p_i]
        if call.best_of > call.body.n:
            mine.sort(key=lambda c: -(c.last.outputs[0].cumulative_logprob or 0.0))
        kept += mine[:call.body.n]
    firsts = [c.t_first for c in children if c.t_first is not None]
    u = await call.finish([c.last for c in children], min(firsts, default=None))
    prompt_lps = [prompt_logprobs(c.last.prompt_logprobs) for c in children
                  if c.index % call.best_of == 0]
    choices = [call.fmt.choice(k, c.last.outputs[0].text, c.last.outputs[0].finish_reason,
                               False, call.logprobs_of(c.last), prompt_lps[c.prompt_index])
               for k, c in enumerate(kept)]
    return {"id": call.rid, "object": call.fmt.object, "created": call.created,
            "model": call.pipe.model_name, "choices": choices, "usage": u,
            **call.fmt.answer_extras(prompt_lps)}


async def _merged(children: list[Child]) -> AsyncIterator[tuple[Child, RequestOutput]]:
    """Every child's outputs as they come, interleaved; a child's error is raised."""
    queue: asyncio.Queue[tuple[Child, RequestOutput | BaseException | None]] = asyncio.Queue()

    async def pump(child: Child) -> None:
        try:
            async for out in child.outputs():
                await queue.put((child, out))
        except Exception as exc:  # noqa: BLE001 - raised to the stream, its last event
            await queue.put((child, exc))
        await queue.put((child, None))

    tasks = [asyncio.create_task(pump(c)) for c in children]
    open_children = len(children)
    try:
        while open_children:
            child, item = await queue.get()
            if item is None:
                open_children -= 1
            elif isinstance(item, BaseException):
                raise item
            else:
                yield child, item
    finally:
        for task in tasks:
            task.cancel()
        # A pump may still be inside its child's `rest`; closing that generator before
        # the pump has unwound raises "already running" (a 500 for a client that left).
        await asyncio.gather(*tasks, return_exceptions=True)
        for c in children:
            await c.rest.aclose()


async def _events(call: _Call, children: list[Child]) -> AsyncIterator[bytes]:
    """The stream: a chunk per new text of any child, each child's finish, usage, [DONE];
    an error (or a shutdown that cuts the stream) is the last chunk, as vLLM sends it."""
    body = call.body
    continuous = body.stream_options is not None and body.stream_options.continuous_usage_stats

    def chunk(choices: list[dict[str, Any]], extra: dict | None = None) -> bytes:
        return sse({"id": call.rid, "object": call.fmt.chunk_object, "created": call.created,
                    "model": call.pipe.model_name, "choices": choices, **(extra or {})})

    sent = {c.index: (0, 0) for c in children}  # characters and tokens already sent
    opening = call.fmt.opening([c.index for c in children])
    if opening is not None:
        yield chunk(opening, {"usage": usage(call.n_prompt_tokens, 0)} if continuous else None)
    t_first = None
    try:
        async with aclosing(_merged(children)) as merged:
            async for child, out in merged:
                child.last = out
                o = out.outputs[0]
                if t_first is None and o.token_ids:
                    t_first = time.perf_counter() - call.t0
                chars, toks = sent[child.index]
                extra = None
                if continuous:
                    extra = {"usage": usage(call.n_prompt_tokens, sum(
                        len(c.last.outputs[0].token_ids) for c in children if c.last))}
                if len(o.text) > chars or len(o.token_ids) > toks:
                    yield chunk([call.fmt.choice(child.index, o.text[chars:], None, True,
                                                 call.logprobs_of(out, toks, chars))], extra)
                    sent[child.index] = (len(o.text), len(o.token_ids))
                if out.finished:
                    yield chunk([call.fmt.choice(child.index, "", o.finish_reason, True,
                                                 None)], extra)
    except asyncio.CancelledError:
        if not draining(call.request.scope):
            raise
        yield sse({"error": {"message": SHUTTING_DOWN, "type": "ServiceUnavailableError",
                             "code": 503}})
        yield b"data: [DONE]\n\n"
        return
    except Exception as exc:  # as vLLM: an error object as the last chunk, then [DONE]
        message = stream_error(exc, request_id(call.request.headers))
        yield sse({"error": {"message": message, "type": "InternalServerError", "code": 500}})
        yield b"data: [DONE]\n\n"
        return
    u = await call.finish([c.last for c in children if c.last is not None], t_first)
    if body.include_usage:
        yield chunk([], {"usage": u})
    yield b"data: [DONE]\n\n"


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
    check_model(body.model, [pipe.model_name])
    prompts = []
    for prompt in body.prompts():
        if isinstance(prompt, str):
            # As the engine would, BOS included if the model asks for it.
            prompts.append({"prompt": prompt, "prompt_token_ids": pipe.tokenizer.encode(prompt)})
        else:
            prompts.append({"prompt_token_ids": prompt})
    return await _serve(request, body, prompts, COMPLETION)


@router.post("/chat/completions",
             responses={200: {"model": ChatCompletion, "content": OPENAI_STREAM}, **OPENAI_ERRORS})
async def chat_completions(body: ChatRequest, request: Request) -> Any:
    pipe = request.app.state.pipeline
    check_model(body.model, [pipe.model_name])
    ids = chat_prompt_ids(pipe.tokenizer, body.messages)
    return await _serve(request, body, [{"prompt_token_ids": ids}], CHAT)


@router.post("/embeddings", responses={200: {"model": EmbeddingList}, **OPENAI_ERRORS})
async def embeddings(body: EmbeddingRequest, request: Request) -> Any:
    pipe = request.app.state.pipeline
    check_model(body.model, [pipe.embedder_name])
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
