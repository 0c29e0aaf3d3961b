"""The documents API under /v1: upload (multipart, 202 while indexing), list, get, delete.

A key of `api_keys` sees and changes only its collections' documents: another tenant's
document is a 404, as an unknown one is. Uploads and deletes are audit-log records.
The upload body reaches the route unbuffered (guards/body_limit.py counts it against
max_upload_bytes); Starlette spools each file to an anonymous temporary file, which
closes, and so vanishes, whatever happens to the request.
"""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from starlette.datastructures import UploadFile

from pipeline.server.errors import DOCUMENT_ERRORS, UPLOAD_ERRORS, RequestRejected
from pipeline.server.guards.access import caller_collections
from pipeline.server.observability.audit_trail import audit
from pipeline.settings import COLLECTION_NAME
from retriever_trt.live.catalog import DocumentRecord, DocumentStatus
from retriever_trt.live.live_documents import LiveDocuments, UploadError
from retriever_trt.search.filters import DEFAULT_COLLECTION

router = APIRouter()
UPLOAD_PATH = "/v1/documents"
MAX_FILES = 32  # files in one upload request
RETRY_AFTER_S = 5

UPLOAD_BODY = {"requestBody": {"required": True, "content": {"multipart/form-data": {
    "schema": {"type": "object", "required": ["file"], "properties": {
        "file": {"type": "array", "items": {"type": "string", "format": "binary"},
                 "description": f"one or more documents (up to {MAX_FILES})"},
        "collection": {"type": "string", "description": "the collection they join (default: "
                       "the key's only collection, or 'default' for a key that sees all)"}}}}}}}


def _documents(request: Request) -> LiveDocuments:
    live = request.app.state.pipeline.documents
    if live is None:
        raise RequestRejected("this server takes no uploads", 404)
    return live


def document_view(record: DocumentRecord, live: LiveDocuments) -> dict[str, Any]:
    """A document as the API shows it: status, progress (0..1; null when another replica
    indexes it), error, and the metadata and chunk count once it is ready."""
    progress = 1.0 if record.status is DocumentStatus.READY else live.progress(record.id)
    return {"id": record.id, "object": "document", "name": record.name,
            "collection": record.collection, "status": record.status.value,
            "progress": None if progress is None else round(progress, 3),
            "error": record.error, "bytes": record.bytes, "sha256": record.sha256,
            "created_at": int(record.created), "title": record.title or None,
            "chunks": record.chunks, "metadata": record.metadata}


def upload_collection(given: Any, allowed: frozenset[str] | None) -> str:
    """The collection an upload joins: the one named, which the key must be allowed to
    write; else the key's only one (or 'default' for a key that sees every collection)."""
    if given is None or given == "":
        if allowed is None:
            return DEFAULT_COLLECTION
        if len(allowed) == 1:
            return next(iter(allowed))
        raise RequestRejected(f"collection: this key writes to several collections; name "
                              f"one of {', '.join(sorted(allowed))}")
    if not isinstance(given, str) or not COLLECTION_NAME.fullmatch(given):
        raise RequestRejected("collection: use 1-64 letters, digits, '_', '-' or '.'")
    if allowed is not None and given not in allowed:
        raise RequestRejected(f"collection {given!r}: this key may write to "
                              f"{', '.join(sorted(allowed))} only", 403)
    return given


@router.post(UPLOAD_PATH, status_code=202, openapi_extra=UPLOAD_BODY, responses=UPLOAD_ERRORS)
async def upload(request: Request) -> JSONResponse:
    live = _documents(request)
    allowed = caller_collections(request)
    if not request.headers.get("content-type", "").startswith("multipart/form-data"):
        raise RequestRejected("send the files as multipart/form-data (field 'file', and "
                              "optionally 'collection')", 415)
    async with request.form(max_files=MAX_FILES, max_fields=MAX_FILES + 8) as form:
        files = [v for k, v in form.multi_items() if k == "file" and isinstance(v, UploadFile)]
        if not files:
            raise RequestRejected("file: send one or more files in the multipart field 'file'")
        collection = upload_collection(form.get("collection"), allowed)
        try:  # all of a request's files are taken, or none
            added = await asyncio.to_thread(
                live.add_all, [(f.filename or "", f.file) for f in files], collection)
        except UploadError as exc:
            headers = {"Retry-After": str(RETRY_AFTER_S)} if exc.status == 429 else None
            raise RequestRejected(str(exc), exc.status, headers) from None
        shown = []
        for record, created in added:
            await audit(request, {"action": "document.upload", "document": record.id,
                                  "name": record.name, "collection": collection,
                                  "sha256": record.sha256, "created": created})
            shown.append(document_view(record, live))
    return JSONResponse({"documents": shown}, status_code=202)


@router.get(UPLOAD_PATH, responses=DOCUMENT_ERRORS)
async def list_documents(request: Request, collection: str | None = None) -> dict[str, Any]:
    live = _documents(request)
    records = live.list(caller_collections(request), collection)
    return {"object": "list", "data": [document_view(r, live) for r in records]}


@router.get(UPLOAD_PATH + "/{doc_id}", responses=DOCUMENT_ERRORS)
async def get_document(doc_id: str, request: Request) -> dict[str, Any]:
    live = _documents(request)
    record = live.get(doc_id, caller_collections(request))
    if record is None:
        raise RequestRejected(f"no document {doc_id!r}", 404)
    return document_view(record, live)


@router.delete(UPLOAD_PATH + "/{doc_id}", responses=DOCUMENT_ERRORS)
async def delete_document(doc_id: str, request: Request) -> dict[str, Any]:
    live = _documents(request)
    record = await asyncio.to_thread(live.delete, doc_id, caller_collections(request))
    if record is None:
        raise RequestRejected(f"no document {doc_id!r}", 404)
    await audit(request, {"action": "document.delete", "document": doc_id,
                          "name": record.name, "collection": record.collection})
    return {"id": doc_id, "object": "document", "deleted": True}
