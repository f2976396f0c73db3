"""Documents in, chunks out: loading folders and corpus files, validation, token chunking."""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from graph_store.embeddings import minilm_tokenizer
from graph_store.errors import InputError

TEXT_SUFFIXES = {".txt", ".md", ".markdown"}
CORPUS_SUFFIXES = {".json", ".jsonl"}


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Document:
    text: str
    title: str = ""
    source: str = ""
    id: str = ""  # derived from the content when not given

    def __post_init__(self):
        if not self.text or not self.text.strip():
            raise InputError(f"document {self.title or self.source or '?'!r} is empty")
        if not self.id:
            object.__setattr__(self, "id", self.hash[:16])

    @property
    def hash(self) -> str:
        return content_hash(self.title + "\x00" + self.text)


@dataclass(frozen=True)
class Chunk:
    id: str
    doc_id: str
    index: int
    text: str
    n_tokens: int


@dataclass
class LoadReport:
    """What loading found besides documents: skipped files and notices, for the user."""

    skipped: list[str] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)


_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def clean_text(text: str) -> str:
    """Text without control characters (escape sequences, bells, NUL): they would reach terminals and XML."""
    return _CONTROL.sub(" ", text.replace("\r\n", "\n").replace("\r", "\n"))


def clean_title(title: str) -> str:
    return " ".join(clean_text(title).split())


def _read_text(path: Path) -> str:
    data = path.read_bytes()
    if b"\x00" in data[:8192]:
        raise InputError(f"{path}: looks like a binary file (NUL bytes); only UTF-8 text is indexed")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{path}: not valid UTF-8 (byte {exc.start}: {data[exc.start : exc.start + 1]!r}); "
            "convert it, e.g. iconv -f latin1 -t utf-8"
        ) from None


def _title_of(text: str, file: Path) -> str:
    """A Markdown file's first heading, else the file name."""
    for line in text.splitlines()[:5]:
        if line.startswith("#"):
            return line.lstrip("#").strip()
    return file.stem.replace("_", " ")


def _records_from_json(path: Path, text: str) -> Iterator[tuple[str, object]]:
    """(where, record) pairs; a line of a JSONL file that is not JSON comes as an InputError in its place."""
    if path.suffix == ".jsonl":
        for line_no, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    yield f"{path}:{line_no}", json.loads(line)
                except json.JSONDecodeError as exc:
                    yield f"{path}:{line_no}", InputError(f"{path}:{line_no}: not valid JSON ({exc.msg})")
        return
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
    if not isinstance(data, list):
        raise InputError(f"{path}: expected a JSON list of {{title, text}} objects, got {type(data).__name__}")
    yield from ((f"{path}#{n}", record) for n, record in enumerate(data, 1))


def _documents_from_corpus(path: Path, text: str, report: LoadReport) -> Iterator[Document]:
    """Records of a corpus file; a bad record (or JSONL line) is skipped and reported, the rest still load."""
    for n, (_, record) in enumerate(_records_from_json(path, text), 1):
        try:
            if isinstance(record, InputError):
                raise record
            if not isinstance(record, dict) or not isinstance(record.get("text"), str):
                raise InputError(f"{path}#{n}: record has no 'text' string")
            title = clean_title(str(record.get("title") or ""))
            yield Document(
                text=clean_text(record["text"]),
                title=title,
                source=f"{path}#{n}",
                id=clean_title(str(record.get("id") or "")),
            )
        except InputError as exc:
            report.skipped.append(str(exc))


def load_documents(path: str | Path, report: LoadReport | None = None) -> list[Document]:
    """Documents from a .txt/.md file, a folder of them, or a JSON/JSONL corpus file.

    Problems with a single file of a folder are reported and the file skipped;
    a path that is missing or holds nothing usable is an error.
    """
    path = Path(path)
    report = report if report is not None else LoadReport()
    if not path.exists():
        raise InputError(f"{path}: no such file or directory")
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    docs: list[Document] = []
    for file in files:
        suffix = file.suffix.lower()
        if suffix not in TEXT_SUFFIXES | CORPUS_SUFFIXES:
            if not path.is_dir():
                raise InputError(f"{file}: unsupported file type; use .txt, .md, .json or .jsonl")
            report.skipped.append(f"{file}: unsupported file type")
            continue
        try:
            text = _read_text(file)
            if suffix in CORPUS_SUFFIXES:
                docs.extend(_documents_from_corpus(file, text, report))
            else:
                text = clean_text(text)
                docs.append(Document(text=text, title=clean_title(_title_of(text, file)), source=str(file)))
        except InputError as exc:
            if not path.is_dir():
                raise
            report.skipped.append(str(exc))
    if not docs:
        raise InputError(f"{path}: no documents found" + (f" ({'; '.join(report.skipped)})" if report.skipped else ""))
    titles = Counter(d.title for d in docs if d.title)
    report.notices += [
        f"{n} documents share the title {t!r}; all are kept, told apart by id" for t, n in titles.items() if n > 1
    ]
    return docs


def chunk_document(doc: Document, chunk_tokens: int, overlap: int) -> list[Chunk]:
    """Windows of up to ``chunk_tokens`` MiniLM tokens, about ``overlap`` tokens shared, cut between words.

    The default size stays under the embedder's 256-token limit so every chunk is embedded whole.
    """
    if not 0 <= overlap < chunk_tokens:
        raise InputError(f"chunk overlap {overlap} must be >= 0 and < chunk size {chunk_tokens}")
    encoding = minilm_tokenizer().encode(doc.text, add_special_tokens=False)
    offsets = encoding.offsets
    if len(offsets) <= chunk_tokens:
        return [Chunk(f"{doc.id}-0000", doc.id, 0, doc.text.strip(), len(offsets))]
    text_of = doc.text

    def inside_word(i: int) -> bool:  # token i goes on the word before it ("Carl" + "##mar")
        if not 0 < i < len(offsets):
            return False
        at = offsets[i][0]
        return at == offsets[i - 1][1] and text_of[at].isalnum() and text_of[at - 1].isalnum()

    chunks: list[Chunk] = []
    start, step = 0, chunk_tokens - overlap
    while start < len(offsets):
        end = min(start + chunk_tokens, len(offsets))
        cut = end  # a window ends before a word it would cut ("started Carl" for "started Carlmar Film")
        while cut > start + 1 and inside_word(cut):
            cut -= 1
        end = cut if cut > start + 1 else end
        text = text_of[offsets[start][0] : offsets[end - 1][1]].strip()
        chunks.append(Chunk(f"{doc.id}-{len(chunks):04d}", doc.id, len(chunks), text, end - start))
        if end == len(offsets):
            break
        following = min(start + step, end)  # ... and the next starts at a word's start
        while following < end and inside_word(following):
            following += 1
        start = max(following, start + 1)
    return chunks


def dedupe(docs: Iterable[Document]) -> list[Document]:
    """Drop exact repeats; the same id with different content in one batch is an error."""
    seen: dict[str, Document] = {}
    conflicts = []
    for doc in docs:
        if doc.id in seen:
            if seen[doc.id].hash != doc.hash:
                conflicts.append(f"id {doc.id!r} is given to different texts ({seen[doc.id].source}, {doc.source})")
            continue
        seen[doc.id] = doc
    if conflicts:
        raise InputError("; ".join(conflicts))
    return list(seen.values())
