"""Prompt templates, one plain-text file per task, with ``$name`` variables.

``string.Template`` rather than ``str.format`` because the templates show JSON
examples full of braces.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from string import Template

PROMPT_DIR = Path(__file__).parent


@cache
def load_prompt(name: str) -> Template:
    path = PROMPT_DIR / f"{name}.txt"
    if not path.exists():
        known = ", ".join(sorted(p.stem for p in PROMPT_DIR.glob("*.txt")))
        raise KeyError(f"no prompt named {name!r}; known: {known}")
    return Template(path.read_text(encoding="utf-8"))


def render_prompt(name: str, **variables: object) -> str:
    """Fill a template; a missing variable is an error, never an empty hole."""
    template = load_prompt(name)
    needed = set(template.get_identifiers())
    missing = needed - variables.keys()
    if missing:
        raise KeyError(f"prompt {name!r} needs {sorted(missing)}")
    return template.substitute({k: str(v) for k, v in variables.items() if k in needed})


def quoted_block(text: str, label: str = "document") -> str:
    """Text quoted as a block whose closing tag the text cannot contain: the tag carries a hash of the text,
    so a document that writes ``</document>`` (or any guess) cannot end the quote and speak as instructions."""
    import hashlib

    tag = f"{label}-{hashlib.sha256(text.encode()).hexdigest()[:10]}"
    return f"<{tag}>\n{text}\n</{tag}>"
