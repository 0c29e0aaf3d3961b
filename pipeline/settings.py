"""Settings of the server and pipeline: the `Settings` model, every setting with its default,
range and checks (`settings_sources.py` reads them: defaults < YAML file < FINRAG_*
environment < flags).

The engine's arguments are not declared here: `Settings.engine` is `llm_engine.EngineConfig`
itself (names, types, defaults and checks live there), and every one of its fields is a
top-level setting (`max_num_seqs: 8` in YAML, `FINRAG_MAX_NUM_SEQS`, `--max-num-seqs`), as
in vLLM, where engine arguments are plain `vllm serve` options. A field added to
EngineConfig becomes a setting and a flag with no edit here (`engine_settings.py`).

Every setting is validated when loaded; `load_settings` raises `SettingsError` whose message
is one line naming the setting and what to change.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    field_validator,
    model_validator,
)

from llm_engine.config import EngineConfig, default_engines_dir
from pipeline.engine_settings import ENGINE_FIELDS, SERVER_ENGINE_DEFAULTS
from pipeline.intent_labels import DEFAULT_LABELS, IntentLabel
from retriever_trt.documents.limits import (
    DEFAULT_MAX_CHUNKS,
    DEFAULT_MAX_INFLATED_BYTES,
    DEFAULT_MAX_MEMORY_BYTES,
    DEFAULT_MAX_PAGES,
    DEFAULT_MAX_SECONDS,
    DEFAULT_MAX_STREAM_BYTES,
)
from retriever_trt.indexing.parallel_encoder import DEFAULT_NICE, MAX_NICE
from retriever_trt.store.vector_store import (
    DEFAULT_MILVUS_COLLECTION,
    MilvusConfig,
    MilvusIndexType,
    VectorStoreKind,
    default_milvus_uri,
    milvus_problem,
)

DATA_DIR = Path(__file__).parent / "data"
DEMO_CORPUS = DATA_DIR / "demo_corpus.json"
# The uploads' folder inside the index folder, unless documents_dir names another
# (retriever_trt/live/live_documents.py).
DOCUMENTS_DIR = "documents"
# A collection's name: it appears in URLs, filters and folder names.
COLLECTION_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")


def _check_secret(key: str) -> None:
    if len(key) < 16 or any(c.isspace() for c in key):
        raise ValueError("each key needs at least 16 characters and no spaces, "
                         "e.g. python -c 'import secrets; print(secrets.token_urlsafe(32))'")


_ORIGIN = re.compile(r"https?://[^\s/?#*]+")


class Settings(BaseModel):
    """All of finrag's settings, with their documented ranges."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    host: str = "127.0.0.1"
    port: int = Field(8000, ge=0, le=65535)
    # A .onnx/.plan file or encoder folder (retriever_trt.load_embedder); None: the bundled
    # MiniLM, exported to ONNX into engines/ on first run and run by ONNX Runtime.
    embedder: str | None = None
    index: str | None = None  # a saved Retriever folder; None: engines/index-<corpus name>
    corpus: str | None = None  # what to index when `index` does not exist; None: demo corpus
    served_model_name: str | None = None
    log_level: str = Field("info", pattern="^(critical|error|warning|info|debug|trace)$")

    # The engine's arguments (model, engines_dir, device and the rest, vLLM's names); given
    # as top-level keys, gathered here by _gather_engine.
    engine: EngineConfig = Field(default_factory=lambda: EngineConfig(**SERVER_ENGINE_DEFAULTS))

    # retrieval
    top_k: int = Field(3, ge=1, le=20)
    # Passages whose documents' tables are searched for a computed answer (the prompt still
    # shows top_k): on TAT-QA dev (half used for choosing), 10 answered 36.9% exactly against
    # 33.0% for 3 (BM25, benchmarks/short_answer_retrieval_eval.py). 0: no computed answers.
    table_top_k: int = Field(10, ge=0, le=100)
    # A bug in the answer rules raises (a 500) instead of being logged, counted in
    # finrag:answer_rule_errors_total and answered with no number: on in the tests, so that
    # a rule's bug fails them rather than hiding as a missing number.
    strict_rules: bool = False
    retrieval_mode: str = Field("hybrid", pattern="^(hybrid|dense|bm25)$")
    # hybrid: weighted reciprocal-rank fusion, BM25's weight against dense's 1; the same
    # defaults as retriever_trt.search.retriever's (how they were chosen is said there), written
    # out so that reading settings does not import the retriever.
    bm25_weight: float = Field(4.0, ge=0.0, le=100.0)
    rrf_k: int = Field(30, ge=1, le=1000)
    # the tables' row match in the same fusion (retriever_trt/search/row_match.py); 0: off.
    row_match_weight: float = Field(2.0, ge=0.0, le=100.0)
    batch_window_ms: float = Field(3.0, ge=0.0, le=1000.0)
    max_batch: int = Field(32, ge=1, le=1024)
    host_buffers: int = Field(4, ge=1, le=64)
    chunk_tokens: int = Field(120, ge=16, le=512)
    max_passage_chars: int = Field(600, ge=50)

    # generation: a one-sentence answer (benchmarks/prose_eval.py: 90% of the
    # answers on dev end by themselves within 53 tokens); max_tokens is a ceiling.
    max_tokens: int = Field(64, ge=1, le=4096)
    temperature: float = Field(0.0, ge=0.0, le=2.0)
    # The answer ends at the end of its line (one sentence is asked for) and at a copied
    # table row's first cell separator; engine stop strings, not shown.
    answer_stop: list[str] = Field(default_factory=lambda: ["\n", " | "])
    # It also ends where it starts over: at a word n-gram seen twice (0: never).
    repeat_ngram: int = Field(4, ge=0, le=64)

    # intent
    intent_labels: list[IntentLabel] = Field(default_factory=lambda: list(DEFAULT_LABELS),
                                             min_length=2, max_length=26)
    intent_calibrate: bool = True
    # How far (calibrated log-prob) the model must lead to overrule the lexical finance prior
    # (routing.py). benchmarks/intent_eval.py --choose-margin picks the smallest margin that
    # refuses the fewest of half a of TAT-QA dev: 1.065 on a CPU with AVX-512 BF16 kernels,
    # 1.853 on an AVX2 one, whose fp32 kernels move the leads. That choice sits at the edge
    # where refusals start, so the default is above both: from 1.5 to 4 the off-topic and
    # small-talk sets route the same. 0 with intent_finance_cues false: the best label.
    intent_margin: float = Field(2.0, ge=0.0)
    # A lexical finance prior decides where the model is not confident (routing.py).
    intent_finance_cues: bool = True
    system_prompt: str = ("You are finrag, an assistant that answers questions about "
                          "companies' financial reports.")
    # After the passages; "{question}" is the question again (pipeline.rag.prompts).
    answer_instruction: str = ("Question: {question}\nAnswer in one short sentence, using "
                               "only the text above.")

    warmup: bool = True

    # HTTP: request limits, admission and access (README, "Limits, overload and access")
    max_body_bytes: int = Field(1 << 20, ge=1024, le=1 << 30)
    # Seconds a request body may take to arrive in full (408 after): slow or stalled
    # senders cannot hold connections, nor a shutdown, forever.
    request_read_timeout: float = Field(60.0, gt=0.0, le=3600.0)
    # Seconds a connection may take to send a request's headers (a new connection, or the
    # next request on a kept-alive one); then it is closed: slowloris connections that
    # trickle headers hold nothing (guards/header_timeout.py).
    header_read_timeout: float = Field(30.0, gt=0.0, le=3600.0)
    # Seconds a graceful shutdown (SIGTERM) waits for requests in flight before closing
    # them (uvicorn's timeout_graceful_shutdown).
    shutdown_timeout: float = Field(30.0, ge=0.0, le=3600.0)
    # The largest max_tokens a request may ask for; None: max_model_len - 1.
    max_tokens_limit: int | None = Field(None, ge=1)
    # Admission: requests admitted and not finished, and their prompt + max_tokens tokens.
    max_queued_requests: int = Field(64, ge=1)
    max_queued_tokens: int = Field(65536, ge=64)
    # One key, or several separated by commas (rotation); None: no key asked.
    api_key: SecretStr | None = None
    # Keys with the collections each may read and write (the documents API, docs/
    # documents_api.md): '{"key-a": ["alpha"], "key-b": ["beta"]}'. A key of api_key sees
    # every collection.
    api_keys: dict[str, list[str]] = Field(default_factory=dict, repr=False)
    cors_origins: list[str] = Field(default_factory=list)

    # Where uploads are kept (catalog, files, segments); None: DIR/documents in the index
    # folder. Replicas that share it share their documents.
    documents_dir: str | None = None
    # documents API (docs/documents_api.md): the largest upload, documents indexed at once
    # (each takes a CPU core while it encodes), uploads accepted and not yet indexed (then
    # 429), and how often a replica looks for documents another replica added or deleted.
    max_upload_bytes: int = Field(100 << 20, ge=1024, le=1 << 34)
    ingest_workers: int = Field(1, ge=1, le=64)
    # Batches of uploads encoded at once, each on one core (retriever_trt/indexing/parallel_encoder.py):
    # while no question is answered (None: every core) and while questions are (1: the
    # LLM engine keeps the other cores; more makes uploads faster and questions slower).
    ingest_threads: int | None = Field(None, ge=1, le=256)
    ingest_threads_busy: int = Field(1, ge=1, le=256)
    # The encoding threads' nice value (0-19): the higher, the more the kernel gives a core
    # to questions' threads first, and the longer uploads take while questions are answered.
    ingest_nice: int = Field(DEFAULT_NICE, ge=0, le=MAX_NICE)
    max_pending_documents: int = Field(16, ge=1, le=100000)
    documents_poll_interval: float = Field(1.0, gt=0.0, le=3600.0)
    # What one document may cost (retriever_trt/documents/limits.py); past one it ends
    # `failed` with an error naming the setting: its pages (checked before a page is
    # read), the bytes one compressed stream (a PDF stream, a zip part) and all of them
    # inflate to, its chunks, the seconds its reading and encoding take, and the memory of
    # the process that reads it (killed at once by a delete).
    document_max_pages: int = Field(DEFAULT_MAX_PAGES, ge=1)
    document_max_stream_bytes: int = Field(DEFAULT_MAX_STREAM_BYTES, ge=1024)
    document_max_inflated_bytes: int = Field(DEFAULT_MAX_INFLATED_BYTES, ge=1024)
    document_max_chunks: int = Field(DEFAULT_MAX_CHUNKS, ge=1)
    document_max_seconds: float = Field(DEFAULT_MAX_SECONDS, gt=0.0)
    document_max_memory_bytes: int = Field(DEFAULT_MAX_MEMORY_BYTES, ge=256 << 20)
    # Where the chunk vectors live (docs/documents_api.md, "One store for every replica"):
    # faiss in each process's memory, or one Milvus collection that replicas on any number
    # of machines share. milvus_uri: a Milvus server ("http://host:19530") or a milvus-lite
    # file (one process only); None: DIR/milvus.db in the index folder.
    vector_store: VectorStoreKind = VectorStoreKind.FAISS
    milvus_uri: str | None = None
    milvus_collection: str = DEFAULT_MILVUS_COLLECTION
    # FLAT is exact; GPU_CAGRA and GPU_IVF_FLAT need a Milvus server running on GPUs.
    milvus_index_type: MilvusIndexType = MilvusIndexType.FLAT

    # operations (README, "Operations"): logs, audit log, tracing, traffic mirroring
    log_format: str = Field("text", pattern="^(text|json)$")
    # A path: one hash-chained JSON line per /ask and /v1 request (pipeline/server/observability/audit.py);
    # rotated past audit_log_max_bytes, keeping audit_log_backups older files.
    audit_log: str | None = None
    audit_log_max_bytes: int = Field(100 << 20, ge=4096)
    audit_log_backups: int = Field(10, ge=1, le=10000)
    # OTLP/HTTP endpoint for OpenTelemetry spans (vLLM's name), e.g.
    # http://collector:4318/v1/traces; None: no tracing, no cost.
    otlp_traces_endpoint: str | None = None
    # A URL that receives a copy of each /ask request body, fire-and-forget (shadow testing);
    # at most mirror_queue_size copies wait, later ones are dropped and counted.
    mirror_url: str | None = None
    mirror_queue_size: int = Field(256, ge=1, le=100000)

    # replicas on Ray Serve (pipeline/replicas; README "Replicas"): 1 is one process, as
    # before. ray_address: None starts a local Ray cluster, "auto" joins the running one.
    num_replicas: int = Field(1, ge=1, le=1024)
    ray_address: str | None = None
    # affinity: same question or conversation to the same replica (its prefix cache);
    # power_of_two: Ray Serve's default router. Bounded loads: a replica takes a key only
    # while it holds fewer than ceil(affinity_balance_factor * (in flight + 1) / replicas)
    # requests, else the next in the key's order does (1.0: perfectly even, no slack).
    replica_router: str = Field("affinity", pattern="^(affinity|power_of_two)$")
    affinity_balance_factor: float = Field(1.25, ge=1.0, le=100.0)
    # Autoscaling on queue depth: None keeps num_replicas; else Serve scales between
    # num_replicas and max_replicas, aiming at target_ongoing_requests per replica.
    max_replicas: int | None = Field(None, ge=1, le=1024)
    target_ongoing_requests: float = Field(8.0, gt=0.0)

    @field_validator("cors_origins", mode="before")
    @classmethod
    def _split_origins(cls, value: Any) -> Any:
        return [v.strip() for v in value.split(",") if v.strip()] if isinstance(value, str) \
            else value

    @field_validator("cors_origins")
    @classmethod
    def _check_origins(cls, value: list[str]) -> list[str]:
        for origin in value:
            if not _ORIGIN.fullmatch(origin):
                raise ValueError(f"{origin!r} is not an origin: give scheme://host[:port] "
                                 "without a path or trailing slash, e.g. https://app.example.com"
                                 " ('*' is refused: it would open the API to every web site)")
        return value

    @field_validator("otlp_traces_endpoint", "mirror_url")
    @classmethod
    def _check_url(cls, value: str | None) -> str | None:
        if value is not None and not re.fullmatch(r"https?://\S+", value):
            raise ValueError("must be an http:// or https:// URL")
        return value

    @model_validator(mode="before")
    @classmethod
    def _gather_engine(cls, values: Any) -> Any:
        """Top-level engine keys (and an `engine:` mapping or EngineConfig) into `engine`."""
        if not isinstance(values, dict):
            return values
        values = dict(values)
        given = values.pop("engine", None)
        top = {name: values.pop(name) for name in ENGINE_FIELDS if name in values}
        if isinstance(given, EngineConfig) and not top:
            # Kept as it is: assigning another setting (validate_assignment) passes the
            # built EngineConfig back through here.
            values["engine"] = given
            return values
        if isinstance(given, EngineConfig):
            given = dataclasses.asdict(given)
        values["engine"] = {**SERVER_ENGINE_DEFAULTS, **(given or {}), **top}
        return values

    @field_validator("repeat_ngram")
    @classmethod
    def _check_repeat_ngram(cls, value: int) -> int:
        if value == 1:
            raise ValueError("must be 0 (off) or at least 2: one word seen twice is normal prose")
        return value

    @field_validator("api_key")
    @classmethod
    def _check_key(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None:
            for key in value.get_secret_value().split(","):
                _check_secret(key.strip())
        return value

    @field_validator("api_keys")
    @classmethod
    def _check_api_keys(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        for key, collections in value.items():
            _check_secret(key)
            if not collections:
                raise ValueError("give each key a non-empty list of collections")
            bad = next((c for c in collections if not COLLECTION_NAME.fullmatch(c)), None)
            if bad is not None:
                raise ValueError(f"collection {bad!r}: use 1-64 letters, digits, '_', '-', '.'")
        return value

    def key_collections(self) -> dict[bytes, frozenset[str] | None]:
        """Every accepted key with the collections it may see (None: all of them)."""
        keys: dict[bytes, frozenset[str] | None] = {
            k.encode(): frozenset(c) for k, c in self.api_keys.items()}
        if self.api_key is not None:
            keys.update((k.strip().encode(), None)
                        for k in self.api_key.get_secret_value().split(","))
        return keys

    def max_request_tokens(self, max_model_len: int) -> int:
        """The largest max_tokens a request may ask for, given the engine's context."""
        return self.max_tokens_limit or max_model_len - 1

    @model_validator(mode="after")
    def _check(self) -> Settings:
        names = [label.name for label in self.intent_labels]
        if len(set(names)) != len(names):
            raise ValueError(f"intent_labels: names must be distinct, got {names}")
        if all(label.reply is not None for label in self.intent_labels):
            raise ValueError("intent_labels: at least one label needs reply: null (retrieval)")
        if self.max_replicas is not None and self.max_replicas < self.num_replicas:
            raise ValueError(f"max_replicas: must be at least num_replicas ({self.num_replicas}), "
                             f"got {self.max_replicas}")
        if self.vector_store is VectorStoreKind.MILVUS:
            problem = milvus_problem(self.milvus_uri_value, self.milvus_collection,
                                     self.milvus_index_type,
                                     max(self.num_replicas, self.max_replicas or 1))
            if problem:
                raise ValueError(problem)
        if self.engine.max_model_len is not None:  # else checked against the model at start
            self.check_context(self.engine.max_model_len)
        return self

    def check_context(self, max_model_len: int) -> None:
        """The request bounds against the engine's context (ValueError naming the setting)."""
        if self.max_tokens_limit is not None and self.max_tokens_limit >= max_model_len:
            raise ValueError(f"max_tokens_limit: must be below max_model_len "
                             f"({max_model_len}), got {self.max_tokens_limit}")
        limit = self.max_request_tokens(max_model_len)
        if self.max_tokens > limit:
            raise ValueError(f"max_tokens: the default answer length {self.max_tokens} is over "
                             f"the request limit {limit} (max_tokens_limit or "
                             "max_model_len - 1); lower it")
        if self.max_queued_tokens < max_model_len:
            raise ValueError(f"max_queued_tokens: must be at least max_model_len "
                             f"({max_model_len}) so that any one request fits, got "
                             f"{self.max_queued_tokens}")

    @property
    def model(self) -> str:
        return self.engine.model

    @property
    def engines_path(self) -> Path:
        return Path(self.engine.engines_dir) if self.engine.engines_dir else default_engines_dir()

    @property
    def corpus_path(self) -> Path:
        return Path(self.corpus) if self.corpus else DEMO_CORPUS

    @property
    def index_path(self) -> Path:
        if self.index:
            return Path(self.index)
        return self.engines_path / f"index-{self.corpus_path.stem}"

    @property
    def milvus_uri_value(self) -> str:
        return self.milvus_uri or default_milvus_uri(self.index_path)

    def milvus_config(self) -> MilvusConfig | None:
        """Where the vectors go when vector_store is milvus; None for faiss."""
        if self.vector_store is not VectorStoreKind.MILVUS:
            return None
        return MilvusConfig(self.milvus_uri_value, self.milvus_collection,
                            self.milvus_index_type)

    @property
    def documents_path(self) -> Path:
        return Path(self.documents_dir) if self.documents_dir else self.index_path / DOCUMENTS_DIR


FIELDS = (set(Settings.model_fields) - {"engine"}) | set(ENGINE_FIELDS)
SECRET_FIELDS = ("api_key", "api_keys")
_clash = set(Settings.model_fields) & set(ENGINE_FIELDS)
assert not _clash, f"settings and engine arguments share names: {_clash}"
