"""What marks a folder as an index: its manifest. Light on purpose, so the CLI can check a folder before it
loads the index's heavy imports."""

from __future__ import annotations

import json
from pathlib import Path

from graph_store.errors import IndexStoreError


def require_index(path: Path) -> None:
    """Fail with what to do unless ``path`` holds an index (its manifest is the mark)."""
    if path.exists() and not path.is_dir():
        raise IndexStoreError(f"{path} is a file, not an index directory")
    if not (path / "manifest.json").exists():
        raise IndexStoreError(f"no index at {path}; build one with `kgrag index PATH --index-dir {path}`")


def read_manifest(path: Path) -> dict:
    """The manifest, or a clear error when it is not one (truncated, empty, not an object)."""
    try:
        manifest = json.loads((path / "manifest.json").read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise IndexStoreError(
            f"{path / 'manifest.json'} is damaged ({exc.__class__.__name__}); it records how the "
            "index was built (embedder, chunking): restore it or rebuild the index"
        ) from None
    if not isinstance(manifest, dict) or "schema_version" not in manifest or "embedder" not in manifest:
        raise IndexStoreError(f"{path / 'manifest.json'} is not a kgrag manifest; restore it or rebuild the index")
    return manifest
