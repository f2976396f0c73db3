"""Entity and fact extraction behind one interface: with an LLM, or offline with no model.

Both produce a ``ChunkExtraction`` per chunk: entities (name, type, description)
and relations, i.e. (subject, predicate, object) facts with a description and a
strength in [0, 1].
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal, Protocol

import json_repair
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from pydantic import BaseModel, Field, ValidationError, field_validator

from graph_store.errors import ModelError
from graph_store.llm import ChatClient, truncated
from prompts import quoted_block, render_prompt


def _as_text(v: Any) -> str:
    """Models write names and types as numbers or null at times: text, stripped."""
    return "" if v is None else str(v).strip()


class ExtractedEntity(BaseModel):
    name: str = Field(min_length=1)
    type: str = "unknown"
    description: str = ""

    _text = field_validator("name", "type", "description", mode="before")(_as_text)


class ExtractedRelation(BaseModel):
    subject: str = Field(min_length=1)
    predicate: str = "related to"
    object: str = Field(min_length=1)
    description: str = ""
    strength: float = 1.0

    _text = field_validator("subject", "predicate", "object", "description", mode="before")(_as_text)

    @field_validator("strength", mode="before")
    @classmethod
    def _unit_strength(cls, v: Any) -> float:
        # Prompts ask for 1-10 (as GraphRAG does); store [0, 1].
        try:
            value = float(v)
        except (TypeError, ValueError):
            return 1.0
        return max(0.0, min(1.0, value / 10 if value > 1 else value))


class ChunkExtraction(BaseModel):
    entities: list[ExtractedEntity] = []
    relations: list[ExtractedRelation] = []
    status: Literal["ok", "failed"] = "ok"
    error: str | None = None
    # The model endpoint failed (timeout, unreachable, unreadable reply), not the chunk: not stored.
    endpoint_failure: bool = Field(False, exclude=True)

    def merged(self, other: ChunkExtraction) -> ChunkExtraction:
        """Union with a gleaning round's output (repeats dropped)."""
        names = {e.name.lower() for e in self.entities}
        triples = {(r.subject.lower(), r.predicate.lower(), r.object.lower()) for r in self.relations}
        return ChunkExtraction(
            entities=self.entities + [e for e in other.entities if e.name.lower() not in names],
            relations=self.relations
            + [r for r in other.relations if (r.subject.lower(), r.predicate.lower(), r.object.lower()) not in triples],
        )


class Extractor(Protocol):
    name: str
    uses_llm: bool

    def extract(self, text: str, title: str) -> ChunkExtraction: ...


class ExtractionParseError(ValueError):
    pass


_FENCE = re.compile(r"```(?:json)?\s*(.*?)(?:```|$)", re.S)


def parse_extraction(raw: str) -> ChunkExtraction:
    """Tolerant parse of an LLM's extraction output.

    Accepts code fences, text around the JSON, truncated or slightly broken JSON
    (repaired), ``relations`` given as ``facts``/``triples`` or as [s, p, o]
    lists. Raises ExtractionParseError when nothing usable is there.
    """
    text = (raw or "").strip()
    if not text:
        raise ExtractionParseError("empty output")
    fenced = _FENCE.search(text)
    if fenced:
        text = fenced.group(1)
    start = text.find("{")
    if start < 0:
        raise ExtractionParseError(f"no JSON object in output: {raw[:80]!r}")
    data = json_repair.loads(text[start:])
    if not isinstance(data, dict):
        raise ExtractionParseError(f"output is not a JSON object: {raw[:80]!r}")
    relations = data.get("relations", data.get("facts", data.get("triples", [])))
    if not isinstance(relations, list) or not isinstance(data.get("entities", []), list):
        raise ExtractionParseError("'entities' and 'relations' must be lists")
    entities, kept = [], []
    for item in data.get("entities", []):
        item = {"name": item} if isinstance(item, str) else item
        try:
            entities.append(ExtractedEntity.model_validate(item))
        except ValidationError:
            continue  # one bad item does not spoil the chunk
    for item in relations:
        if isinstance(item, list) and len(item) >= 3:
            item = {"subject": item[0], "predicate": item[1], "object": item[2]}
        try:
            kept.append(ExtractedRelation.model_validate(item))
        except ValidationError:
            continue
    if not entities and not kept and (data.get("entities") or relations):
        raise ExtractionParseError("no valid entity or relation in output")
    return ChunkExtraction(entities=entities, relations=kept)


def _in_text(name: str, text: str) -> bool:
    """The text names it: the whole name, or at least half of its words of 3+ characters."""
    if name.lower() in text:
        return True
    words = re.findall(r"\w{3,}", name.lower())
    return bool(words) and 2 * sum(w in text for w in words) >= len(words)


def grounded(extraction: ChunkExtraction, text: str) -> ChunkExtraction:
    """Without the entities the chunk does not name and the relations between them: a small model copies the
    prompt's worked example (seen: "Lindau", a town of the example, extracted from a chunk about a comet)."""
    text = text.lower()
    entities = [e for e in extraction.entities if _in_text(e.name, text)]
    relations = [r for r in extraction.relations if _in_text(r.subject, text) and _in_text(r.object, text)]
    return extraction.model_copy(update={"entities": entities, "relations": relations})


MAX_ITEMS = 15  # entities and relations asked for per chunk: enough for 240 tokens, within the output budget


class LLMExtractor:
    """One call per chunk, optional gleaning rounds; one corrective retry on an unparsable or cut reply.

    A chunk that still fails is recorded as failed with the reason (never stored as ok); a failing endpoint
    (timeout, unreachable, unreadable reply) fails the chunk too, and the next ``kgrag index`` retries it.
    """

    uses_llm = True

    def __init__(self, client: ChatClient, gleaning_rounds: int = 0):
        self.client = client
        self.gleaning_rounds = gleaning_rounds
        self.name = f"llm:{client.model_name}"

    def _ask(self, messages: list) -> tuple[str, ChunkExtraction]:
        reply = self.client.invoke(messages, task="extract")
        raw = str(reply.content)
        try:
            if truncated(reply):
                raise ExtractionParseError("reply cut at the output budget")
            return raw, parse_extraction(raw)
        except ExtractionParseError as first:
            # The retry differs from the first call (so the cache cannot replay the bad answer).
            retry = messages + [
                AIMessage(raw),
                HumanMessage(render_prompt("extract_retry", error=str(first), max_items=MAX_ITEMS // 2)),
            ]
            reply = self.client.invoke(retry, task="extract")
            if truncated(reply):
                raise ExtractionParseError("reply cut at the output budget twice") from None
            raw = str(reply.content)
            return raw, parse_extraction(raw)

    def extract(self, text: str, title: str) -> ChunkExtraction:
        messages: list[BaseMessage] = [
            HumanMessage(
                render_prompt("extract", title=title or "(untitled)", text=quoted_block(text), max_items=MAX_ITEMS)
            )
        ]
        try:
            raw, result = self._ask(messages)
            for _ in range(self.gleaning_rounds):
                messages = [*messages, AIMessage(raw), HumanMessage(render_prompt("extract_gleaning"))]
                raw, more = self._ask(messages)
                if not more.entities and not more.relations:
                    break
                result = result.merged(more)
            return grounded(result, f"{title}\n{text}")
        except ExtractionParseError as exc:
            return ChunkExtraction(status="failed", error=f"unusable reply: {exc}")
        except ModelError as exc:
            kind = "timeout" if "did not answer within" in str(exc) else "endpoint error"
            return ChunkExtraction(status="failed", error=f"{kind}: {exc}", endpoint_failure=True)


# --- offline extraction -------------------------------------------------------------------------

# Lower-case words allowed inside a name ("University of Kessel", "Leonardo da Vinci").
_CONNECTORS = {
    "of",
    "the",
    "de",
    "da",
    "del",
    "della",
    "di",
    "du",
    "des",
    "la",
    "le",
    "van",
    "von",
    "der",
    "den",
    "y",
    "&",
    "'s",
}
# Capitalised words that start sentences or are too generic to be entities on their own.
_STOP = set(
    """a an the this that these those he she it they we i you his her its their our my your
him them in on at by for from with as of to into after before during while when where which who whom
whose what how why there here however although though but and or if then than also also, so because
since until upon among between about over under against without within is was are were be been
one two three four five first second third many most some several all both each other such
january february march april may june july august september october november december
monday tuesday wednesday thursday friday saturday sunday""".split()
)
# Every capital of the Latin, Greek and Cyrillic alphabets: "Ælfgar", "Émile Zola", "Øystein Ore" are names too
UPPER = "[" + "".join(re.escape(chr(c)) for c in range(0x41, 0x530) if chr(c).isupper()) + "]"
_WORD = rf"(?:{UPPER}[\w'’.\-]*[\w]|{UPPER})"
_NUMBER_TAIL = r"(?:\s+\d+[A-Za-z]*)?"  # "Apollo 11", "Louis XIV" is covered by _WORD
_SPAN = re.compile(
    rf"{_WORD}(?:\s+(?:(?:{'|'.join(map(re.escape, sorted(_CONNECTORS, key=len, reverse=True)))})\s+)*{_WORD})*{_NUMBER_TAIL}"
)
_QUOTED = re.compile(r"[\"“]([^\"”]{2,80})[\"”]")
_SENTENCE = re.compile(rf"(?<=[.!?])\s+(?={UPPER}|[\"“(])|\n{{2,}}")
_PRONOUN_START = re.compile(
    r"^(?:he|she|it|they|his|her|its|their|the (?:film|album|song|book|company|band|city|town|river|novel|series|show|game|school|university|station))\b",
    re.I,
)


def _clean_span(span: str) -> str:
    words = span.split()
    while words and (words[-1].lower() in _CONNECTORS):
        words.pop()
    while words and words[0].lower() in _STOP:
        words.pop(0)
    return " ".join(words).strip(" .,'’-")


def find_entity_mentions(sentence: str) -> list[tuple[int, int, str]]:
    """(start, end, name) of proper-noun spans and quoted titles in a sentence, in order, first mention only."""
    found: dict[str, tuple[int, int]] = {}
    for match in _QUOTED.finditer(sentence):
        found.setdefault(match.group(1).strip(), match.span(1))
    for match in _SPAN.finditer(sentence):
        name = _clean_span(match.group(0))
        if len(name) < 2 or name.lower() in _STOP or not any(c.isalpha() for c in name):
            continue
        start = match.start() + match.group(0).find(name)
        found.setdefault(name, (start, start + len(name)))
    return sorted((start, end, name) for name, (start, end) in found.items())


def _predicate(between: str) -> str:
    """The words linking two mentions; a long gap keeps its last words, nearest the object."""
    words = re.findall(r"[\w'’-]+", between.lower())
    if not words:
        return "related to"
    return " ".join(words if len(words) <= 8 else words[-5:])


class OfflineExtractor:
    """Proper-noun and quoted-title spans as entities; facts from entities close in one sentence.

    Pairs are adjacent mentions, the predicate being the words between them. A sentence that opens with a pronoun or "The film..."
    is about the document's title entity, so its first mentions also get a fact
    with the title as subject. Fast: a few regexes per sentence, no model.
    """

    name = "offline-regex"
    uses_llm = False

    def extract(self, text: str, title: str) -> ChunkExtraction:
        entities: dict[str, ExtractedEntity] = {}
        relations: list[ExtractedRelation] = []
        subject = title.strip() if title and title.strip().lower() in text.lower() else ""
        if subject:
            entities[subject.lower()] = ExtractedEntity(name=subject, type="topic")
        for sentence in _SENTENCE.split(text):
            sentence = sentence.strip()
            mentions = find_entity_mentions(sentence)
            for _, _, name in mentions:
                entities.setdefault(name.lower(), ExtractedEntity(name=name))
            for (_, end_a, a), (start_b, _, b) in zip(mentions, mentions[1:]):
                if a.lower() != b.lower():
                    relations.append(
                        ExtractedRelation(
                            subject=a,
                            predicate=_predicate(sentence[end_a:start_b]),
                            object=b,
                            description=sentence[:300],
                            strength=1.0 if start_b - end_a < 60 else 0.5,
                        )
                    )
            if subject and mentions and _PRONOUN_START.match(sentence):
                previous_end = 0
                for start, end, name in mentions[:3]:
                    if name.lower() != subject.lower():
                        relations.append(
                            ExtractedRelation(
                                subject=subject,
                                predicate=_predicate(sentence[previous_end:start]),
                                object=name,
                                description=sentence[:300],
                                strength=0.8,
                            )
                        )
                    previous_end = end
        return ChunkExtraction(entities=list(entities.values()), relations=relations)


def dump_extraction(extraction: ChunkExtraction) -> str:
    return json.dumps(extraction.model_dump(), ensure_ascii=False, sort_keys=True)
