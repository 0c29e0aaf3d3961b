"""The `finrag` command line: serve, index, prepare, ask.

Settings come from flags, FINRAG_* variables and a YAML file (--config); bad settings and
missing files end with a one-line error and exit status 2, not a traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("finrag")
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "unknown (not installed)"


def _json_arg(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise argparse.ArgumentTypeError(f"not valid JSON ({exc}): give an object such as "
                                         "'{\"key\": 1}'") from None


def _engine_flags(sp: argparse.ArgumentParser) -> None:
    """One flag per EngineConfig field, in vLLM's spelling (--max-num-seqs, bools as
    --enable-prefix-caching / --no-enable-prefix-caching, dicts as JSON)."""
    import dataclasses
    import types
    import typing

    from llm_engine import EngineConfig
    from pipeline.engine_settings import ENGINE_FIELDS, SERVER_ENGINE_DEFAULTS, takes_json

    defaults = dataclasses.asdict(EngineConfig(**SERVER_ENGINE_DEFAULTS))
    group = sp.add_argument_group("engine arguments (llm_engine.EngineConfig; vLLM's names)")
    for name, tp in ENGINE_FIELDS.items():
        flag = "--" + name.replace("_", "-")
        default = defaults.get(name)
        helptext = _HELP.get(name, name.replace("_", " "))
        kinds = [a for a in (typing.get_args(tp) if typing.get_origin(tp) in (typing.Union,
                 types.UnionType) else (tp,)) if a is not type(None)]
        if kinds == [bool]:
            group.add_argument(flag, dest=name, action=argparse.BooleanOptionalAction,
                               default=argparse.SUPPRESS, help=f"{helptext} (default: {default})")
            continue
        convert = _json_arg if takes_json(tp) else (
            kinds[0] if len(kinds) == 1 and kinds[0] in (int, float, str) else str)
        # Absent unless given, so that a given JSON null (--speculative-config null) reaches
        # the settings as None instead of reading as "not given".
        group.add_argument(flag, dest=name, type=convert, default=argparse.SUPPRESS,
                           metavar=name.upper(), help=f"{helptext} (default: {default})")


_HELP = {"model": "'default' (bundled SmolLM2), a model folder or .gguf",
         "engines_dir": "built artifacts: prepared models, ONNX files, indexes"}


def _parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line; given the `command` that runs, only it gets the engine flags (read
    off llm_engine's EngineConfig, which imports no torch: llm_engine/config.py)."""
    p = argparse.ArgumentParser(prog="finrag", description="Retrieval-augmented finance QA.")
    p.add_argument("--version", action="version", version=f"finrag {_version()}")
    sub = p.add_subparsers(dest="command", required=True)

    def common(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("--config", help="YAML file of settings")
        sp.add_argument("--embedder", help=".onnx/.plan file or encoder folder")
        sp.add_argument("--index", help="saved index folder")
        sp.add_argument("--corpus", help="corpus to index when the index does not exist")
        sp.add_argument("--served-model-name", dest="served_model_name",
                        help="the model name the API answers with (default: --model)")
        if command in (None, sp.prog.split()[-1]):
            _engine_flags(sp)

    serve = sub.add_parser("serve", help="serve the HTTP API")
    common(serve)
    serve.add_argument("--host")
    serve.add_argument("--port", type=int)
    serve.add_argument("--api-key", dest="api_key",
                       help="ask every request for this key (Authorization: Bearer); "
                            "FINRAG_API_KEY keeps it out of the process list")
    serve.add_argument("--api-keys", dest="api_keys", type=_json_arg, metavar="JSON",
                       help="keys with the collections each may read and write, e.g. "
                            "'{\"key-a\": [\"alpha\"]}' (FINRAG_API_KEYS keeps them out of "
                            "the process list)")
    serve.add_argument("--documents-dir", dest="documents_dir", metavar="DIR",
                       help="where uploaded documents are kept (default: INDEX/documents)")
    serve.add_argument("--max-upload-bytes", dest="max_upload_bytes", type=int,
                       help="the largest document upload (default 100 MiB)")
    serve.add_argument("--log-level", dest="log_level",
                       choices=["critical", "error", "warning", "info", "debug", "trace"])
    serve.add_argument("--shutdown-timeout", dest="shutdown_timeout", type=float,
                       help="seconds SIGTERM waits for requests in flight (default 30)")
    serve.add_argument("--header-read-timeout", dest="header_read_timeout", type=float,
                       help="seconds a connection may take to send its request headers "
                            "(default 30)")
    serve.add_argument("--request-read-timeout", dest="request_read_timeout", type=float,
                       help="seconds a request body may take to arrive (default 60)")
    serve.add_argument("--log-format", dest="log_format", choices=["text", "json"])
    serve.add_argument("--audit-log", dest="audit_log", metavar="PATH",
                       help="append a hash-chained record of every answer to PATH")
    serve.add_argument("--otlp-traces-endpoint", dest="otlp_traces_endpoint", metavar="URL",
                       help="export OpenTelemetry spans over OTLP/HTTP to URL")
    serve.add_argument("--mirror-url", dest="mirror_url", metavar="URL",
                       help="send a copy of each /ask request to URL (shadow testing)")
    serve.add_argument("--strict-rules", dest="strict_rules",
                       action=argparse.BooleanOptionalAction,
                       help="a bug in the answer rules fails the request instead of answering "
                            "with no number (the tests run with it)")
    replicas = serve.add_argument_group("replicas on Ray Serve (pip install 'finrag[ray]')")
    replicas.add_argument("--num-replicas", dest="num_replicas", type=int,
                          help="full pipelines behind one endpoint (default 1: one process, "
                               "no Ray)")
    replicas.add_argument("--ray-address", dest="ray_address",
                          help="join this Ray cluster ('auto': the running one; default: "
                               "start a local one)")
    replicas.add_argument("--replica-router", dest="replica_router",
                          choices=["affinity", "power_of_two"],
                          help="affinity (default): same question or conversation to the "
                               "same replica; power_of_two: Ray Serve's default")
    replicas.add_argument("--affinity-balance-factor", dest="affinity_balance_factor",
                          type=float,
                          help="bounded-load affinity: a replica takes a question only while "
                               "it holds under this times its share of the requests in "
                               "flight, else the next replica does (default 1.25, at least 1)")
    replicas.add_argument("--max-replicas", dest="max_replicas", type=int,
                          help="autoscale between --num-replicas and this on queue depth")
    replicas.add_argument("--target-ongoing-requests", dest="target_ongoing_requests",
                          type=float, help="autoscaling target per replica (default 8)")

    index = sub.add_parser("index", help="build an index from a corpus")
    index.add_argument("--corpus", required=True, help="TAT-QA .json, .jsonl or folder")
    index.add_argument("--out", required=True, help="folder to write the index into")
    index.add_argument("--embedder", help=".onnx/.plan file or encoder folder (default: the "
                       "bundled MiniLM's dynamic INT8 graph, engines/retriever/all-minilm-l6-v2/"
                       "model.int8-dynamic.onnx, on CPU: 2x FP32's chunks/s, recall@5 within "
                       "0.01; its FP32 model.onnx with a GPU). The index records the encoder "
                       "(precision, file sha256); serve and ask must use the same one")
    index.add_argument("--engines-dir", dest="engines_dir",
                       help="where the default encoder is exported (default: engines/)")
    index.add_argument("--config", help="YAML file of settings")

    prepare = sub.add_parser("prepare", help="convert a GGUF model into engines/models/, "
                             "replacing the copy there (rebuilds a corrupt one)")
    prepare.add_argument("--model", help=_HELP["model"])
    prepare.add_argument("--engines-dir", dest="engines_dir", help="default: engines/")
    prepare.add_argument("--config", help="YAML file of settings")

    audit = sub.add_parser("audit", help="check an audit log's hash chain")
    audit_sub = audit.add_subparsers(dest="audit_command", required=True)
    verify = audit_sub.add_parser("verify", help="check the chain over the log and its "
                                  "rotated files; name the first bad line")
    verify.add_argument("path", help="the audit_log file")

    ask = sub.add_parser("ask", help="answer one question in the terminal")
    common(ask)
    ask.add_argument("question")
    ask.add_argument("--top-k", type=int, dest="top_k")
    ask.add_argument("--max-tokens", type=int, dest="max_tokens")
    ask.add_argument("--json", action="store_true", help="print the whole answer as JSON")
    return p


def _settings(args: argparse.Namespace, **extra: Any):
    from pipeline.engine_settings import ENGINE_FIELDS
    from pipeline.settings import FIELDS
    from pipeline.settings_sources import load_settings

    # Every flag whose name is a setting (engine arguments included) overrides it.
    overrides = {k: v for k, v in vars(args).items()
                 if k in FIELDS and (v is not None or k in ENGINE_FIELDS)}
    overrides.update(extra)
    return load_settings(getattr(args, "config", None), overrides)


def _serve(args: argparse.Namespace) -> int:
    import uvicorn

    from pipeline.server.app import create_app
    from pipeline.server.guards.connection import server_protocol
    from pipeline.server.observability.access_log import configure_logging, remove_logging

    settings = _settings(args)
    if settings.num_replicas > 1 or settings.max_replicas is not None:
        from pipeline.replicas.launch import serve_replicas

        return serve_replicas(settings)
    log_config = configure_logging(settings.log_format, settings.log_level)
    # Listen at once: /health says "starting" while the pipeline loads (on a first run,
    # builds engines/), and a start-up failure stops the server and ends here (one line).
    app = create_app(settings)
    server = uvicorn.Server(uvicorn.Config(app, host=settings.host, port=settings.port,
                                           log_config=log_config, access_log=False,
                                           # not uvloop, which finrag[ray] brings in: the
                                           # one-process server runs as it did without it
                                           loop="asyncio",
                                           http=server_protocol(
                                               settings.header_read_timeout),
                                           timeout_graceful_shutdown=settings.shutdown_timeout))
    app.state.on_start_failed = lambda: setattr(server, "should_exit", True)
    print(f"finrag: listening on http://{settings.host}:{settings.port}; /ready turns 200 once "
          "the models and index are loaded", file=sys.stderr)
    try:
        server.run()
    finally:
        remove_logging()
    if app.state.start_error is not None:
        raise app.state.start_error
    return 0


def _audit(args: argparse.Namespace) -> int:
    from pipeline.server.observability.audit import verify

    result = verify(args.path)
    print(f"finrag audit: {result.message}", file=sys.stdout if result.ok else sys.stderr)
    return 0 if result.ok else 1


def _index(args: argparse.Namespace) -> int:
    import time

    # The retriever alone: pipeline.rag would bring in the LLM engine, and with it torch.
    from retriever_trt.embedders.loader import describe, load_embedder
    from retriever_trt.search.retriever import Retriever

    settings = _settings(args)
    start = time.perf_counter()
    embedder = load_embedder(settings.embedder, settings.engines_path)
    r = Retriever.build(embedder, args.corpus, args.out, chunk_tokens=settings.chunk_tokens,
                        mode=settings.retrieval_mode)
    seconds = time.perf_counter() - start
    report = r.ingest_report
    print(f"finrag: indexed {len(r.store)} chunks ({report.encoded} distinct encoded) of "
          f"{args.corpus} into {args.out} in {seconds:.1f} s, {len(r.store) / seconds:.1f} "
          f"chunks/s, encoder {describe(r.embedder)}; {report.summary()}")
    # The index holds what could be read; a failed file still fails the command, so a
    # script that builds a shelf's index notices it.
    return 1 if report.failed else 0


def _prepare(args: argparse.Namespace) -> int:
    from pathlib import Path

    from llm_engine.utils.model_path import resolve_model

    settings = _settings(args)
    if Path(settings.model).expanduser().is_dir():
        raise ValueError(f"--model {settings.model}: a Hugging Face folder, used as it is; "
                         "only 'default' or a .gguf file is prepared")
    out = resolve_model(settings.model, settings.engines_path, force=True)
    print(f"finrag: prepared {settings.model} into {out}")
    return 0


def _ask(args: argparse.Namespace) -> int:
    from pipeline.rag import RAGPipeline, TokenEvent

    settings = _settings(args, warmup=False)
    pipeline = RAGPipeline.from_settings(settings)

    async def go():
        if settings.intent_calibrate:
            await pipeline.intent.calibrate()
        if args.json:
            return await pipeline.ask(args.question)
        final = None
        async for event in pipeline.stream(args.question):
            if isinstance(event, TokenEvent):
                print(event.text, end="", flush=True)
            else:
                final = event.answer
        print()
        return final

    try:
        answer = asyncio.run(go())
    finally:
        pipeline.shutdown()
    if args.json:
        print(json.dumps(answer.to_dict(), indent=2))
    else:
        for i, s in enumerate(answer.sources, 1):
            print(f"[{i}] {s['title']} ({s['id']}, score {s['score']:.3f})")
        print(f"intent: {answer.intent}; timings: {answer.timings}")
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    # The first word that is not an option names the command (finrag's own options, --help
    # and --version, take no value).
    args = _parser(next((a for a in argv if not a.startswith("-")), None)).parse_args(argv)
    from pipeline.settings_sources import SettingsError

    # Start-up failures: bad settings, missing or corrupt artifacts (their messages name the
    # file and the command that rebuilds it), TensorRT or a model package not installed.
    known: tuple[type[BaseException], ...] = (SettingsError, FileNotFoundError, ValueError,
                                              ImportError)
    try:
        from retriever_trt.embedders.artifacts import ArtifactError
        from retriever_trt.store.storage import IndexFileError

        known += (ArtifactError, IndexFileError)
    except ImportError:
        pass
    commands = {"serve": _serve, "index": _index, "prepare": _prepare, "ask": _ask,
                "audit": _audit}
    try:
        return commands[args.command](args)
    except known as exc:
        print(f"finrag: error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
