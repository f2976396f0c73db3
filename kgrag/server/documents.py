"""The indexes and their documents: list them, add them (JSON records or uploaded .txt/.md files) and delete
them, each change a job recorded in the index before the 202 and applied by the index's writer (jobs.py)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from fastapi import APIRouter, HTTPException, Request
from starlette.datastructures import UploadFile
from starlette.formparsers import MultiPartException, MultiPartParser

from graph_store.documents import dedupe
from graph_store.jobs import add_job, delete_job
from graph_store.store import Job
from kgrag.api import to_documents
from kgrag.server.deps import Owner, Service, index_named, parse_json, read_body

router = APIRouter()
UPLOAD_SUFFIXES = (".txt", ".md", ".markdown")


def job_view(job: Job) -> dict:
    """A job as clients read it, with the address to poll: queued, running (with ``progress`` while extracting),
    done (with counts) or failed (with ``error``); ``recovered`` when it outlived the process that ran it."""
    return {
        "job_id": job.id,
        "index": job.index,
        "action": job.action,
        "status": job.status,
        **job.detail,
        "status_url": f"/v1/jobs/{job.id}",
    }


async def uploaded_documents(request: Request, body: bytes) -> list[dict]:
    """The .txt/.md files of a multipart upload (UTF-8) as records, titled by their first heading or name."""

    async def replay():
        yield body
        yield b""

    try:
        form = await MultiPartParser(request.headers, replay()).parse()
    except MultiPartException as exc:
        raise HTTPException(400, f"malformed multipart body: {exc.message}") from None
    records = []
    for _, value in form.multi_items():
        if not isinstance(value, UploadFile):
            continue
        if Path(value.filename or "").suffix.lower() not in UPLOAD_SUFFIXES:
            raise HTTPException(400, f"{value.filename}: only .txt and .md files are indexed")
        data = await value.read()
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise HTTPException(400, f"{value.filename}: not UTF-8 text") from None
        if not text.strip():
            raise HTTPException(400, f"{value.filename}: empty file")
        name = Path(value.filename or "upload.txt")
        title = next(
            (ln.lstrip("#").strip() for ln in text.splitlines()[:5] if ln.startswith("#")), name.stem.replace("_", " ")
        )
        records.append({"text": text, "title": title, "source": f"upload:{name.name}"})
    return records


def json_documents(body: bytes, content_type: str) -> list[dict]:
    """The records of {"documents": [{"text", "title"?, "id"?}]}, checked field by field."""
    data = parse_json(body, content_type)
    records = data.get("documents") if isinstance(data, dict) else None
    if not isinstance(records, list):
        raise HTTPException(
            400,
            'send {"documents": [{"text": ..., "title"?: ..., "id"?: ...}]} '
            "or upload .txt/.md files as multipart/form-data",
        )
    for n, r in enumerate(records):
        if not isinstance(r, dict) or not isinstance(r.get("text"), str) or not r["text"].strip():
            raise HTTPException(400, f"documents[{n}] needs a non-empty 'text' string")
        for key in ("title", "id"):
            if r.get(key) is not None and not isinstance(r[key], str):
                raise HTTPException(400, f"documents[{n}].{key} must be a string")
        r["source"] = f"api:{r.get('id') or n}"
    return records


@router.get("/v1/indexes")
async def list_indexes(state: Service, owner: Owner):
    out = []
    for name, rag in state.indexes.items():
        stats = await asyncio.to_thread(rag.stats)
        out.append({"name": name, "offline": rag.settings.offline, **stats})
    return {"indexes": out}


@router.get("/v1/indexes/{name}/documents")
async def list_documents(name: str, state: Service, owner: Owner):
    """Every document's id and title (and its source, a server-side path, only with ``expose_source_paths``)."""
    documents = await asyncio.to_thread(index_named(state, name).documents)
    if not state.settings.expose_source_paths:
        documents = [{k: v for k, v in d.items() if k != "source"} for d in documents]
    return {"documents": documents}


@router.post("/v1/indexes/{name}/documents", status_code=202)
async def add_documents(name: str, request: Request, state: Service, owner: Owner):
    """JSON {"documents": [{"text", "title"?, "id"?}]} or a multipart upload of .txt/.md files."""
    index_named(state, name)
    body = await read_body(request, state.settings)
    content_type = request.headers.get("content-type", "")
    if content_type.startswith("multipart/form-data"):
        records = await uploaded_documents(request, body)
    else:
        records = json_documents(body, content_type)
    if not records:
        raise HTTPException(400, "no documents in the request")
    job = add_job(name, owner, dedupe(to_documents(records)))  # InputError (400): what no job could apply
    return job_view(await asyncio.to_thread(state.writers.submit, name, job))


@router.delete("/v1/indexes/{name}/documents/{doc_id:path}", status_code=202)  # an id may hold "/"
async def delete_document(name: str, doc_id: str, state: Service, owner: Owner):
    index_named(state, name)
    return job_view(await asyncio.to_thread(state.writers.submit, name, delete_job(name, owner, [doc_id])))


@router.get("/v1/jobs/{job_id}")
async def job_status(job_id: str, state: Service, owner: Owner):
    """A job of the caller's (documents or entity decisions), as its index's record holds it."""
    job = await asyncio.to_thread(state.writers.get, job_id)
    if job is None or job.owner != owner:
        raise HTTPException(404, f"no job {job_id!r}")
    return job_view(job)
