"""`RAGPipeline`: intent → retrieve → generate over one LLM engine and one retriever."""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, replace
from functools import partial
from typing import Any, TypeVar

from llm_engine import AsyncLLMEngine, LLMEngine
from llm_engine.structured_output import StructuredOutputsParams
from pipeline.rag.answers.compose import compose
from pipeline.rag.answers.filings.filing_answer import FilingAnswerer, Scope
from pipeline.rag.answers.query import Query
from pipeline.rag.answers.short_answer import (
    ShortAnswer,
    TableSource,
)
from pipeline.rag.batcher import MicroBatcher
from pipeline.rag.clock import Clock
from pipeline.rag.host_buffers import HostBufferPool, HostMemory, StagingEmbedder
from pipeline.rag.index_loading import load_retriever, open_documents
from pipeline.rag.stages import GenerateStage, IntentStage
from pipeline.settings import Settings
from retriever_trt.search.filters import MetadataFilter

_ids = itertools.count()
logger = logging.getLogger(__name__)
T = TypeVar("T")


@dataclass
class AskOptions:
    top_k: int | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    # The caller's grammar (a JSON schema): the answer is always generated under it, so the
    # intent stage's fixed replies and the computed-answer prose, which follow no schema,
    # are skipped; the computed fields are still filled.
    structured_outputs: StructuredOutputsParams | None = None
    # The caller's metadata filter (`filters` of /ask): only these documents are searched.
    filters: MetadataFilter | None = None
    # The HTTP request's id (X-Request-Id), for the logs; None: the pipeline's own.
    request_id: str | None = None


@dataclass
class Answer:
    answer: str
    intent: str
    sources: list[dict[str, Any]]
    usage: dict[str, int]
    timings: dict[str, float | None]
    intent_scores: dict[str, float] = field(default_factory=dict)
    finish_reason: str | None = None
    # The short answer and how it was found (the /ask contract, documented on AskResult in
    # pipeline/server/api_models.py); empty when nothing was found: the prose still answers.
    short_answer: str | list[str] | None = None
    scale: str = ""
    answer_type: str | None = None
    derivation: str | None = None
    citations: list[dict[str, Any]] = field(default_factory=list)
    # The filing (or document) the answer used: doc_id, title, company, form, fiscal year.
    filing: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class TokenEvent:
    """New answer text, as the engine produced it."""

    text: str


@dataclass(frozen=True)
class FinalEvent:
    """The last event of a stream: the whole answer with sources, usage and timings."""

    answer: Answer


StreamEvent = TokenEvent | FinalEvent


def source_dict(p: Any, table: list[list[str]] | None = None) -> dict[str, Any]:
    """A passage as /ask and /search show it; `table` (rows) when it is part of a table."""
    out = {"id": p.chunk_id, "doc_id": p.doc_id, "title": p.title, "text": p.text,
           "score": float(p.score)}
    if table is not None:
        out["table"] = {"rows": table}
    return out


def answer_sources(passages: list[Any], short: ShortAnswer,
                   tables: TableSource | None) -> list[dict[str, Any]]:
    """The passages, a table's pieces with their table's rows, and the cited table's chunk
    when it is not among them (found deeper, or a paragraph of its document was shown)."""
    sources = []
    for p in passages:
        found = tables.table_of(p.doc_id, p.chunk_id) if tables else None
        rows = found[1].rows if found and tables.is_table_chunk(p.doc_id, p.chunk_id) else None
        sources.append(source_dict(p, rows))
    cited = short.cited
    if cited is not None and all(s["id"] != cited.chunk_id for s in sources):
        source = {"id": cited.chunk_id, "doc_id": cited.doc_id, "title": cited.title,
                  "text": cited.text, "score": short.cited_score}
        if short.cited_rows is not None:
            source["table"] = {"rows": short.cited_rows}
        sources.append(source)
    return sources


def queue_ms(out: Any) -> float | None:
    """How long the engine kept a request waiting before it first ran (ms)."""
    m = out.metrics
    if "first_scheduled_time" not in m:
        return None
    return round((m["first_scheduled_time"] - m["arrival_time"]) * 1000, 3)


class RAGPipeline:
    def __init__(self, engine: AsyncLLMEngine, retriever: Any, settings: Settings,
                 host_memory: HostMemory | None = None, documents: Any = None) -> None:
        self.engine, self.retriever, self.settings = engine, retriever, settings
        # With max_model_len from the model (None in the settings), the request bounds are
        # checked here, once the engine knows it.
        settings.check_context(engine.max_model_len)
        self.tokenizer = engine.tokenizer
        inner = retriever.embedder
        self.embedder = inner
        self.host_memory = host_memory or HostMemory()
        self.pool = HostBufferPool(settings.host_buffers, settings.max_batch, inner.dim,
                                   memory=self.host_memory)
        self.staging = StagingEmbedder(inner, self.pool)
        retriever.embedder = self.staging
        self.batcher = MicroBatcher(self._retrieve_batch, settings.batch_window_ms,
                                    settings.max_batch, after_batch=self.staging.release_all)
        self.rules_executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="answer-rules")
        self.intent = IntentStage(engine, self.tokenizer, settings.intent_labels,
                                  settings.system_prompt, settings.intent_margin,
                                  settings.intent_finance_cues)
        self.generator = GenerateStage(engine, self.tokenizer, self.intent.system,
                                       settings.answer_instruction, settings.max_passage_chars,
                                       engine.max_model_len, settings.answer_stop,
                                       settings.repeat_ngram)
        store = getattr(retriever, "store", None)
        self.tables = TableSource(store) if hasattr(store, "document") else None
        self.filings = FilingAnswerer(store)
        self.model_name = settings.served_model_name or settings.model
        self.embedder_name = getattr(inner, "model_id", "embedder")
        # The documents API's uploads (LiveDocuments); None: this pipeline takes none.
        self.documents = documents
        self.metrics = None  # set by the app

    @classmethod
    def from_settings(cls, settings: Settings, progress: bool = True) -> RAGPipeline:
        from retriever_trt.embedders.loader import load_embedder

        embedder = load_embedder(settings.embedder, settings.engines_path)
        retriever = load_retriever(settings, embedder, progress)
        # The KV swap space and the embedding staging buffers share one host-memory account.
        host_memory = HostMemory()
        engine = AsyncLLMEngine(LLMEngine(settings.engine, host_memory.allocator("kv swap")))
        return cls(engine, retriever, settings, host_memory,
                   open_documents(settings, retriever, embedder, engine))

    def _retrieve_batch(self, queries: list[tuple[str, MetadataFilter | None]],
                        k: int) -> list[list[Any]]:
        return self.retriever.retrieve([q for q, _ in queries], k,
                                       filters=[f for _, f in queries])

    # -- public API ---------------------------------------------------------------------
    async def search(self, query: str, k: int | None = None,
                     filters: MetadataFilter | None = None) -> list[Any]:
        return await self.batcher.submit((query, filters), k or self.settings.top_k)

    async def embed(self, texts: list[str]) -> Any:
        return await self.batcher.run(self.embedder.encode, texts)

    async def warmup(self) -> None:
        """Calibrate the intent scores and send one request through every stage."""
        if self.settings.intent_calibrate:
            await self.intent.calibrate()
        async for _ in self.stream("What was the total revenue?", AskOptions(max_tokens=2)):
            pass
        await self.embed(["warm-up"])

    async def ask(self, question: str, options: AskOptions | None = None) -> Answer:
        final = None
        async for event in self.stream(question, options):
            if isinstance(event, FinalEvent):
                final = event.answer
        assert final is not None
        return final

    async def stream(self, question: str,
                     options: AskOptions | None = None) -> AsyncIterator[StreamEvent]:
        """`TokenEvent`s, then one `FinalEvent`."""
        opts = options or AskOptions()
        s = self.settings
        rid = f"ask-{next(_ids)}"
        clock = Clock(time.perf_counter())
        intent = await self.intent.classify(question, f"{rid}-intent")
        clock.intent = time.perf_counter()
        label = self.intent.label(intent.label)
        query, about_filings, scope = await self._on_rules_thread(self._read_question, question,
                                                                  opts.filters)
        if label.reply is not None and about_filings:
            # A question naming an indexed company, or a statement measure and a period, is
            # about the filings whatever the small model guessed ("Coca-Cola's revenue" read
            # as out of scope): it goes on to retrieval.
            label = self.intent.retrieval_label()
        usage = {"prompt_tokens": intent.prompt_tokens, "completion_tokens": 0,
                 "intent_prompt_tokens": intent.prompt_tokens,
                 "intent_cached_tokens": intent.cached_tokens,
                 "generate_prompt_tokens": 0, "generate_cached_tokens": 0}
        done = partial(self._final, label.name, intent.scores, usage, clock)
        if label.reply is not None and opts.structured_outputs is None:
            yield TokenEvent(label.reply)
            yield FinalEvent(done(label.reply, "stop"))
            return

        top_k = opts.top_k or s.top_k
        retrieved = await self.batcher.submit((question, scope.filter),
                                              max(top_k, s.table_top_k))
        passages = retrieved[:top_k]
        clock.retrieved = time.perf_counter()
        short, filing = await self._on_rules_thread(self._computed, query, scope, retrieved,
                                                    passages, opts.request_id or rid)
        done = partial(done, computed={
            "short_answer": short.short_answer, "scale": short.scale,
            "answer_type": short.answer_type, "derivation": short.derivation,
            "citations": short.citations, "filing": filing})
        stated = short.prose() if opts.structured_outputs is None else ""
        if stated and filing:
            stated = f"{stated} (Source: {filing['title']}.)"
        if stated:  # the number is computed, not generated: the prose states it
            yield TokenEvent(stated)
            sources = await self._on_rules_thread(answer_sources, passages, short, self.tables)
            yield FinalEvent(done(stated, "stop", sources))
            return
        async for event in self._generated(question, passages, opts, rid, clock, usage,
                                           short, done):
            yield event

    async def _generated(self, question: str, passages: list[Any], opts: AskOptions, rid: str,
                         clock: Clock, usage: dict[str, int], short: ShortAnswer,
                         done: Callable[..., Answer]) -> AsyncIterator[StreamEvent]:
        """The LLM's answer from the passages, streamed, then the final event."""
        s = self.settings
        max_tokens = opts.max_tokens or s.max_tokens
        temperature = s.temperature if opts.temperature is None else opts.temperature
        ids, n_used = self.generator.prompt_ids(question, passages, max_tokens)
        passages = passages[:n_used]
        params = self.generator.sampling_params(max_tokens, temperature)
        if opts.structured_outputs is not None:  # the grammar ends the answer, not stop strings
            params = replace(params, stop=None, structured_outputs=opts.structured_outputs)
        step = None
        async for step in self.generator.stream(ids, params, f"{rid}-gen"):
            if clock.first_token is None:
                clock.first_token = time.perf_counter()
            if step.delta:
                yield TokenEvent(step.delta)
        assert step is not None
        out = step.output
        usage.update(prompt_tokens=usage["intent_prompt_tokens"] + len(ids),
                     completion_tokens=len(out.outputs[0].token_ids),
                     generate_prompt_tokens=len(ids), generate_cached_tokens=out.num_cached_tokens)
        sources = await self._on_rules_thread(answer_sources, passages, short, self.tables)
        yield FinalEvent(done(step.text.strip(), step.finish_reason, sources,
                              {"queue_ms": queue_ms(out)}))

    def _final(self, intent: str, intent_scores: dict[str, float], usage: dict[str, int],
               clock: Clock, text: str, finish_reason: str | None,
               sources: list[dict[str, Any]] | None = None,
               more_timings: dict[str, float | None] | None = None,
               computed: dict[str, Any] | None = None) -> Answer:
        """The answer of every path (the intent's reply, the stated computed answer, the
        generated one), observed by the metrics; the stages a path skipped time as None."""
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        answer = Answer(text, intent, sources or [], usage,
                        {**clock.timings(time.perf_counter()), **(more_timings or {})},
                        intent_scores, finish_reason, **(computed or {}))
        self._observe(answer)
        return answer

    async def _on_rules_thread(self, fn: Callable[..., T], *args: Any) -> T:
        """`fn` on the answer rules' worker thread: their CPU work leaves the event loop
        free (for /health and the other requests' tokens), and one thread runs them all in
        turn since the rules' caches (parsed tables, the store's facts) are not locked."""
        return await asyncio.get_running_loop().run_in_executor(self.rules_executor, fn, *args)

    def _read_question(self, question: str,
                       filters: MetadataFilter | None) -> tuple[Query, bool, Scope]:
        """The parsed question, whether it names the filings, and what retrieval searches."""
        query = self.filings.parse(question, filters)
        return query, self.filings.names_a_filing(query), self.filings.scope(query, filters)

    def _computed(self, query: Query, scope: Scope, retrieved: list[Any], passages: list[Any],
                  question_id: str) -> tuple[ShortAnswer, dict[str, Any] | None]:
        """The short answer and the filing it is from. The answer rules' one safety net: a
        rule's bug is logged, counted (finrag:answer_rule_errors_total) and answered with
        no number, the prose then generated; under `strict_rules` (the tests) it raises."""
        try:
            short = self._short_answer(query, scope, retrieved, passages)
        except Exception:  # noqa: BLE001 - any rule's bug, by design (the docstring)
            if self.settings.strict_rules:
                raise
            logger.exception("answer rules failed on question %s: %r", question_id,
                             query.question)
            if self.metrics is not None:
                self.metrics.rule_errors.inc()
            short = ShortAnswer()
        return short, self.filings.filing_of(short, passages, scope)

    def _short_answer(self, query: Query, scope: Scope, retrieved: list[Any],
                      passages: list[Any]) -> ShortAnswer:
        return compose(query, scope, self.filings, self.tables, retrieved, passages,
                       self.settings.table_top_k)

    def _observe(self, answer: Answer) -> None:
        if self.metrics is not None:
            self.metrics.observe_answer(answer)

    def shutdown(self) -> None:
        if self.documents is not None:
            self.documents.stop()
        self.batcher.shutdown()
        self.rules_executor.shutdown(wait=False, cancel_futures=True)
        self.engine.shutdown()

