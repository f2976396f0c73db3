"""The web page (kgrag/web/: plain HTML, CSS and JS, nothing from a CDN) and the health check."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, HTTPException
from fastapi.responses import FileResponse, JSONResponse

from kgrag.server.deps import Service

router = APIRouter()
WEB_DIR = Path(__file__).resolve().parent.parent / "web"


@router.get("/health")
async def health(state: Service):
    """Open to all: the service is up, and the names of its indexes."""
    return {"status": "ok", "indexes": list(state.indexes)}


@router.get("/", include_in_schema=False)
async def page():
    index = WEB_DIR / "index.html"
    if not index.exists():
        return JSONResponse({"service": "kgrag", "api": "/v1"})
    return FileResponse(index)


@router.get("/static/{name}", include_in_schema=False)
async def static(name: str):
    """A file of the page's folder, and nothing outside it."""
    path = (WEB_DIR / name).resolve()
    if path.parent != WEB_DIR or not path.is_file():
        raise HTTPException(404, "not found")
    return FileResponse(path)
