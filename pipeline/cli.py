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


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="finrag", description="Retrieval-augmented finance QA.")
    sub = p.add_subparsers(dest="command", required=True)

    def common(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("--config", help="YAML file of settings")
        sp.add_argument("--model", help="'default' (bundled SmolLM2), a model folder or .gguf")
        sp.add_argument("--embedder", help=".onnx/.plan file or encoder folder")
        sp.add_argument("--index", help="saved index folder")
        sp.add_argument("--corpus", help="corpus to index when the index does not exist")

    serve = sub.add_parser("serve", help="serve the HTTP API")
    common(serve)
    serve.add_argument("--host")
    serve.add_argument("--port", type=int)

    index = sub.add_parser("index", help="build an index from a corpus")
    index.add_argument("--corpus", required=True, help="TAT-QA .json, .jsonl or folder")
    index.add_argument("--out", required=True, help="folder to write the index into")
    index.add_argument("--embedder", help=".onnx/.plan file or encoder folder")
    index.add_argument("--config", help="YAML file of settings")

    prepare = sub.add_parser("prepare", help="convert a GGUF model into engines/models/, "
                             "replacing the copy there (rebuilds a corrupt one)")
    prepare.add_argument("--model", help="'default' (bundled SmolLM2) or a .gguf file")
    prepare.add_argument("--engines-dir", dest="engines_dir", help="default: engines/")
    prepare.add_argument("--config", help="YAML file of settings")

    ask = sub.add_parser("ask", help="answer one question in the terminal")
    common(ask)
    ask.add_argument("question")
    ask.add_argument("--top-k", type=int, dest="top_k")
    ask.add_argument("--max-tokens", type=int, dest="max_tokens")
    ask.add_argument("--json", action="store_true", help="print the whole answer as JSON")
    return p


def _settings(args: argparse.Namespace, **extra: Any):
    from pipeline.settings import load_settings

    keys = ("model", "embedder", "index", "corpus", "host", "port", "top_k", "max_tokens",
            "engines_dir")
    overrides = {k: getattr(args, k) for k in keys if getattr(args, k, None) is not None}
    overrides.update(extra)
    return load_settings(getattr(args, "config", None), overrides)


def _serve(args: argparse.Namespace) -> int:
    import uvicorn

    from pipeline.rag.pipeline import RAGPipeline
    from pipeline.server.app import create_app

    settings = _settings(args)
    # Load (and build on first run) before listening, so errors end here with one line.
    pipeline = RAGPipeline.from_settings(settings)
    app = create_app(settings, pipeline)
    print(f"finrag: serving {pipeline.model_name} on http://{settings.host}:{settings.port}",
          file=sys.stderr)
    uvicorn.run(app, host=settings.host, port=settings.port, log_level="info")
    pipeline.shutdown()
    return 0


def _index(args: argparse.Namespace) -> int:
    from pipeline.rag.pipeline import build_index

    settings = _settings(args)
    r = build_index(settings, args.corpus, args.out)
    print(f"finrag: indexed {len(r.store)} chunks of {args.corpus} into {args.out}")
    return 0


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
    from pipeline.rag.pipeline import RAGPipeline

    settings = _settings(args, warmup=False)
    pipeline = RAGPipeline.from_settings(settings)

    async def go():
        if settings.intent_calibrate:
            await pipeline.intent.calibrate()
        if args.json:
            return await pipeline.ask(args.question)
        final = None
        async for chunk in pipeline.stream(args.question):
            if chunk["type"] == "token":
                print(chunk["text"], end="", flush=True)
            else:
                final = chunk["answer"]
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
    args = _parser().parse_args(argv)
    from pipeline.settings import SettingsError

    # Start-up failures: bad settings, missing or corrupt artifacts (their messages name the
    # file and the command that rebuilds it), TensorRT or a model package not installed.
    known: tuple[type[BaseException], ...] = (SettingsError, FileNotFoundError, ValueError,
                                              ImportError)
    try:
        from retriever_trt.artifacts import ArtifactError
        from retriever_trt.storage import IndexFileError

        known += (ArtifactError, IndexFileError)
    except ImportError:
        pass
    commands = {"serve": _serve, "index": _index, "prepare": _prepare, "ask": _ask}
    try:
        return commands[args.command](args)
    except known as exc:
        print(f"finrag: error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
