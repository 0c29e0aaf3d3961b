"""What the audit log records for a request: who (a key id), what was asked, what was
answered from which sources, and with which model, index and settings (content hashes, so
"which version answered this?" has an answer months later)."""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from pathlib import Path
from typing import Any

from fastapi import Request

from pipeline.server.errors import request_id


def _tree_sha256(folder: Path, skip: Path | None = None) -> str:
    """One hash over a folder's files (names and contents), in name order; `skip`: a
    subfolder left out."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()
                       and (skip is None or not p.is_relative_to(skip))):
        digest.update(str(path.relative_to(folder)).encode() + b"\0")
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def content_hashes(pipe: Any) -> dict[str, str]:
    """The model's, the index's and the settings' hashes (computed once, at start, where
    reading the model's weights delays no answer)."""
    settings = pipe.settings.model_dump(mode="json", exclude={"api_key", "api_keys"})
    model_dir = pipe.engine.model_dir
    index = Path(pipe.settings.index_path)
    return {
        "model_sha256": _tree_sha256(Path(model_dir)) if model_dir else "unknown",
        # The index as built; uploads come and go (their records say which document).
        "index_sha256": _tree_sha256(index, pipe.settings.documents_path)
        if index.is_dir() else "unknown",
        "settings_sha256": hashlib.sha256(json.dumps(settings, sort_keys=True).encode())
        .hexdigest(),
    }


async def audit(request: Request, route_fields: dict[str, Any]) -> None:
    """Append this request's record, flushed to disk before the response ends."""
    state = request.app.state
    if state.audit is None:
        return
    scope_state = request.scope.get("state", {})
    record = {
        "request_id": request_id(request.headers),
        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "key_id": scope_state.get("key_id", "anonymous"),
        "route": request.url.path,
        **route_fields,
        **state.audit_hashes,
    }
    await asyncio.to_thread(state.audit.append, record)


def answer_fields(question: str, answer: dict[str, Any]) -> dict[str, Any]:
    """An /ask record's fields from the answer's dict (Answer.to_dict)."""
    keep = ("intent", "answer", "short_answer", "scale", "derivation", "citations",
            "finish_reason", "usage", "timings")
    return {"question": question, **{k: answer.get(k) for k in keep if k in answer},
            "sources": [{"id": s.get("id"), "score": s.get("score")}
                        for s in answer.get("sources", [])]}
