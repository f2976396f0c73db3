"""Entity resolution: which name forms are one thing, and the merges a person can review.

A build first resolves names by their normalised string (graph.normalize_name: case, accents, "The X"). Documents
still write one thing several ways ("Corvane Robotics" and "Corvane", "Halvard Instruments" and "HI", "Edda
Morlund" and "E. Morlund", "Tarnholm" and "Tarnholme"), so here:

1. ``candidates``: pairs of entities whose names block together (an acronym, initials, a name that is the start or
   end of another in the same document, a spelling variant), scored by name similarity, co-mention in documents,
   shared neighbours, type agreement and vector similarity, each with its evidence: the passages where each form
   appears, and whether a document introduces one form for the other ("Halvard Instruments (HI)").
2. ``merge_groups``: the merges in force. A person's decisions first, in the order made (the latest verdict on a
   pair wins); then the candidates a document introduces explicitly and that score above the auto-merge
   threshold, never across conflicting types or conflicting dates. No merge ever joins two names a person rejected.
   Automatic merges are held to what the introduction proves (``_may_merge_automatically``): they never chain (each
   name merged automatically is introduced for the very name it joins, and that name is not itself merged into a
   third), a short form that could be two different longer names is left to review, and so are a trailing part
   ("Smith" of "James Todd Smith", "Abu Dhabi" of "Executive Council of Abu Dhabi"), a part cut at a function word
   ("Deathstalker" of "Deathstalker and the Warriors from Hell") and a single word the corpus also writes in lower
   case ("King", "Prince").

Everything works on resolution keys; the caller (graph.derive_graph_tables) normalises names and folds the groups.
"""

from __future__ import annotations

import difflib
import json
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import numpy as np

from graph_store.store import Proposal

# Words an acronym skips ("University of Kessel" -> UK): English function words, not names of this corpus.
_FUNCTION_WORDS = {"of", "the", "and", "for", "in", "on", "at", "de", "du", "la", "le", "von", "van", "der"}
_FUNCTION_WORDS |= {"a", "an", "to", "from", "with", "by"}
_UNTYPED = {"unknown", "topic", ""}  # "topic": the offline extractor's mark for a document's subject
_YEAR = re.compile(r"\b(1\d{3}|20\d{2})\b")
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
MAX_BLOCK = 40  # a spelling block larger than this is a common pattern, not a variant: skipped
EVIDENCE_PASSAGES = 2  # per name form

# Weights of the score (they sum to 1): the name, a document introducing one form for the other, the documents
# they share, their shared neighbours, their vectors.
WEIGHTS = {"name": 0.3, "introduced": 0.4, "co_mention": 0.15, "neighbours": 0.1, "vector": 0.05}
TYPE_BONUS = 0.05


@dataclass
class NameForm:
    """One entity as the build resolved it by its normalised name."""

    key: str
    names: Counter = field(default_factory=Counter)  # surface forms -> times written
    types: Counter = field(default_factory=Counter)
    chunks: set[str] = field(default_factory=set)
    neighbours: set[str] = field(default_factory=set)
    dates: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))  # predicate -> years

    @property
    def tokens(self) -> list[str]:
        return self.key.split()

    @property
    def type(self) -> str:
        known = [(n, t) for t, n in self.types.items() if t not in _UNTYPED]
        return min(known, key=lambda x: (-x[0], x[1]))[1] if known else "unknown"

    def surfaces(self, limit: int = 3) -> list[str]:
        return [n for n, _ in sorted(self.names.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]]

    @property
    def display(self) -> str:
        return self.surfaces(1)[0] if self.names else self.key


@dataclass
class Candidate:
    short: str  # the keys: the shorter form and the longer one
    long: str
    kind: str  # acronym | initials | prefix | suffix | spelling
    score: float = 0.0
    introduced: bool = False
    introduction: str = ""  # the words that introduce one form for the other
    co_mention: float = 0.0
    conflict: str = ""  # why it must never be merged automatically
    common_word: bool = False  # the short form is one word the corpus also writes in lower case
    reasons: list[str] = field(default_factory=list)
    evidence: dict = field(default_factory=dict)

    @property
    def pair(self) -> tuple[str, str]:
        return (self.short, self.long) if self.short < self.long else (self.long, self.short)


Passages = dict[str, tuple[str, str, str]]  # chunk id -> (document id, title, text)


# --- blocking ---------------------------------------------------------------------------------------------------


def _acronyms(tokens: list[str]) -> set[str]:
    content = [t for t in tokens if t not in _FUNCTION_WORDS]
    found = {"".join(t[0] for t in tokens), "".join(t[0] for t in content)}
    return {a for a in found if len(a) >= 2}


def _skeleton(key: str) -> str:
    """Consonants in order, doubled letters once: spelling variants and transliterations share it."""
    letters = re.sub(r"[aeiouy\s]", "", key)
    return re.sub(r"(.)\1+", r"\1", letters)


def _is_acronym(form: NameForm) -> bool:
    return len(form.tokens) == 1 and 2 <= len(form.key) <= 6 and any(n.isupper() for n in form.names)


def _initials_match(short: list[str], long: list[str]) -> bool:
    """ "e morlund" / "e a morlund" against "edda morlund" / "edda anna morlund"."""
    lead = short[:-1]
    return (
        bool(lead)
        and all(len(t) == 1 for t in lead)
        and len(long) >= len(short)
        and short[-1] == long[-1]
        and len(long[0]) > 1
        and [t[0] for t in long[: len(lead)]] == lead
    )


def _name_pairs(forms: dict[str, NameForm]) -> dict[tuple[str, str], str]:
    """Acronyms and initials of a longer name anywhere in the corpus."""
    pairs: dict[tuple[str, str], str] = {}
    by_acronym: dict[str, list[str]] = defaultdict(list)
    by_last: dict[tuple[str, str], list[str]] = defaultdict(list)
    for key, form in forms.items():
        tokens = form.tokens
        if len(tokens) >= 2:
            for acronym in _acronyms(tokens):
                by_acronym[acronym].append(key)
            if len(tokens[0]) > 1:
                by_last[(tokens[0][0], tokens[-1])].append(key)
    for key, form in forms.items():
        tokens = form.tokens
        if _is_acronym(form):
            pairs.update(((key, long), "acronym") for long in by_acronym.get(key, ()))
        if len(tokens) >= 2 and len(tokens[0]) == 1:
            for long in by_last.get((tokens[0], tokens[-1]), ()):
                if _initials_match(tokens, forms[long].tokens):
                    pairs[(key, long)] = "initials"
    return pairs


def _spelling_pairs(forms: dict[str, NameForm]) -> dict[tuple[str, str], str]:
    """Names with the same consonant skeleton and word count that differ by a letter or two."""
    by_skeleton: dict[tuple[str, int], list[str]] = defaultdict(list)
    for key, form in forms.items():
        if len(key) >= 5:
            by_skeleton[(_skeleton(key), len(form.tokens))].append(key)
    pairs: dict[tuple[str, str], str] = {}
    for block in by_skeleton.values():
        if len(block) > MAX_BLOCK:
            continue
        for i, a in enumerate(block):
            for b in block[i + 1 :]:
                if a[0] == b[0] and difflib.SequenceMatcher(None, a, b).ratio() >= 0.8:
                    pairs[(a, b) if len(a) <= len(b) else (b, a)] = "spelling"
    return pairs


def _part_pairs(documents: dict[str, set[str]]) -> dict[tuple[str, str], str]:
    """A name that starts or ends another one in the same document ("Corvane" in "Corvane Robotics")."""
    pairs: dict[tuple[str, str], str] = {}
    for keys in documents.values():
        for long in keys:
            tokens = long.split()
            for n in range(1, len(tokens)):
                for part, kind in ((" ".join(tokens[:n]), "prefix"), (" ".join(tokens[-n:]), "suffix")):
                    if part in keys and len(part) >= 3 and part not in _FUNCTION_WORDS:
                        pairs.setdefault((part, long), kind)
    return pairs


def _blocked_pairs(forms: dict[str, NameForm], documents: dict[str, set[str]]) -> dict[tuple[str, str], str]:
    """(short key, long key) -> kind, for every pair of forms blocked together."""
    return {**_part_pairs(documents), **_spelling_pairs(forms), **_name_pairs(forms)}


# --- scoring ----------------------------------------------------------------------------------------------------


# What follows a name that introduces another form of it: "X (TMS)", "X (also spelled Y)", "X, known as Y".
_INTRODUCES = re.compile(
    r"\s*\(\s*(?:[a-z]+\s+){0,3}[\"“‘']?(?P<paren>[^()\"”’';,]{1,80}?)[\"”’']?\s*[);,]"
    r"|,?\s+(?:[a-z]+\s+){0,2}(?:known as|called|abbreviated(?: as| to)?|short for|spelled)\s+[\"“‘']?"
    r"(?P<named>[^\"”’';,.()]{1,80})"
)


def _introduces(text: str, x: str, y: str) -> str:
    """Where ``text`` writes ``x`` followed by an introduction of exactly ``y`` (the words), or ""."""
    start = text.find(x)
    while start >= 0:
        match = _INTRODUCES.match(text, start + len(x))
        # the whole alias: "known as Bruce Grit" introduces "Bruce Grit", not "Bruce"
        if match and (match.group("paren") or match.group("named")).strip() == y:
            return text[start : match.end()].strip()
        start = text.find(x, start + 1)
    return ""


def _introduced(long: NameForm, short: NameForm, texts: Iterable[str]) -> str:
    """The words of a passage introducing one form for the other: "Halvard Instruments (HI)", "Corvane Robotics,
    known as Corvane", "HI (short for Halvard Instruments)", "Tarnholm (also spelled Tarnholme)"; or ""."""
    pairs = [(x, y) for x in long.surfaces() for y in short.surfaces()]
    for text in texts:
        text = " ".join(text.split())  # a name may break across lines
        for x, y in pairs:
            found = _introduces(text, x, y) or _introduces(text, y, x)
            if found:
                return found
    return ""


def _conflict(a: NameForm, b: NameForm) -> str:
    if a.type not in _UNTYPED and b.type not in _UNTYPED and a.type != b.type:
        return f"conflicting types ({a.type}, {b.type})"
    for predicate in a.dates.keys() & b.dates.keys():
        if a.dates[predicate] and b.dates[predicate] and not a.dates[predicate] & b.dates[predicate]:
            years = sorted(a.dates[predicate] | b.dates[predicate])
            return f"conflicting facts ({predicate}: {', '.join(years)})"
    return ""


def _sentence_with(text: str, surfaces: list[str]) -> str:
    for sentence in _SENTENCE.split(text):
        if any(s.lower() in sentence.lower() for s in surfaces):
            return sentence.strip()[:300]
    return text[:300]


def _evidence(form: NameForm, other: NameForm, passages: Passages) -> list[dict]:
    """Where a form appears: passages shared with the other form's documents first."""
    other_docs = {passages[c][0] for c in other.chunks if c in passages}
    chunks = sorted((c for c in form.chunks if c in passages), key=lambda c: (passages[c][0] not in other_docs, c))
    return [
        {"chunk": c, "title": passages[c][1], "text": _sentence_with(passages[c][2], form.surfaces())}
        for c in chunks[:EVIDENCE_PASSAGES]
    ]


_NAME_SIMILARITY = {"acronym": 0.9, "initials": 0.9, "prefix": 0.7, "suffix": 0.7}


def _score(candidate: Candidate, forms: dict[str, NameForm], passages: Passages, vector: float | None) -> None:
    short, long = forms[candidate.short], forms[candidate.long]
    name = _NAME_SIMILARITY.get(candidate.kind) or difflib.SequenceMatcher(None, short.key, long.key).ratio()
    docs = [{passages[c][0] for c in f.chunks if c in passages} for f in (short, long)]
    co_mention = len(docs[0] & docs[1]) / max(1, min(len(docs[0]), len(docs[1])))
    others = (short.neighbours - {long.key}, long.neighbours - {short.key})
    neighbours = len(others[0] & others[1]) / max(1, len(others[0] | others[1]))
    shared = short.chunks & long.chunks
    candidate.introduction = _introduced(long, short, (passages[c][2] for c in sorted(shared) if c in passages))
    candidate.introduced = bool(candidate.introduction)
    candidate.co_mention = co_mention
    parts = {
        "name": name,
        "introduced": float(candidate.introduced),
        "co_mention": co_mention,
        "neighbours": neighbours,
        "vector": max(0.0, vector or 0.0),
    }
    typed = short.type not in _UNTYPED and short.type == long.type
    candidate.score = round(min(1.0, sum(WEIGHTS[k] * v for k, v in parts.items()) + TYPE_BONUS * typed), 4)
    candidate.conflict = _conflict(short, long)
    candidate.reasons = [candidate.kind] + [
        f"{k.replace('_', ' ')} {v:.2f}" for k, v in parts.items() if k != "name" and k != "introduced" and v > 0
    ]
    if candidate.introduced:
        candidate.reasons.append("a document introduces one form for the other")
    if typed:
        candidate.reasons.append(f"both {short.type}")
    if candidate.conflict:
        candidate.reasons.append(candidate.conflict)
    candidate.evidence = {"a": _evidence(short, long, passages), "b": _evidence(long, short, passages)}


def candidates(
    forms: dict[str, NameForm], passages: Passages, similarity: Callable[[list[tuple[str, str]]], list[float]] | None
) -> list[Candidate]:
    """Every blocked pair, scored, best first. ``similarity`` gives the vector similarity of pairs of names."""
    documents: dict[str, set[str]] = defaultdict(set)
    for key, form in forms.items():
        for chunk in form.chunks:
            if chunk in passages:
                documents[passages[chunk][0]].add(key)
    found = [Candidate(s, long, kind) for (s, long), kind in sorted(_blocked_pairs(forms, documents).items())]
    vectors = (
        similarity([(forms[c.short].display, forms[c.long].display) for c in found])
        if similarity and found
        else [None] * len(found)
    )
    for candidate, vector in zip(found, vectors):
        _score(candidate, forms, passages, vector)
    _mark_common_words([c for c in found if c.introduced], passages)
    return sorted(found, key=lambda c: (-c.score, c.pair))


def _mark_common_words(found: list[Candidate], passages: Passages) -> None:
    """A one-word short form the passages also write in lower case is a common word ("king", "monographs")."""
    words = {c.short for c in found if " " not in c.short and c.kind in ("prefix", "suffix", "spelling")}
    if not words:
        return
    lower = {w for _, _, text in passages.values() for w in re.findall(r"\b[a-z]+\b", text)} & words
    for c in found:
        c.common_word = c.short in lower


def vector_similarity(embed: Callable[[list[str]], np.ndarray]) -> Callable[[list[tuple[str, str]]], list[float]]:
    """Pairs of names -> cosine of their vectors (the embedder's vectors are normalised)."""

    def similarity(pairs: list[tuple[str, str]]) -> list[float]:
        names = sorted({n for pair in pairs for n in pair})
        vectors = dict(zip(names, embed(names)))
        return [float(vectors[a] @ vectors[b]) for a, b in pairs]

    return similarity


# --- groups -----------------------------------------------------------------------------------------------------


class _Groups:
    """Union-find over keys that keeps each group's members and refuses a union across a rejected pair."""

    def __init__(self, keys: Iterable[str], rejected: set[tuple[str, str]]):
        self.root = {k: k for k in keys}
        self.members = {k: {k} for k in self.root}
        self.rejected: dict[str, set[str]] = defaultdict(set)
        for a, b in rejected:
            self.rejected[a].add(b)
            self.rejected[b].add(a)

    def find(self, key: str) -> str:
        while self.root[key] != key:
            self.root[key] = self.root[self.root[key]]
            key = self.root[key]
        return key

    def union(self, a: str, b: str, allowed: Callable[[set[str], set[str]], bool] | None = None) -> bool:
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return True
        small, large = sorted((self.members[ra], self.members[rb]), key=len)
        if any(self.rejected[m] & large for m in small) or (allowed and not allowed(small, large)):
            return False
        if len(self.members[ra]) < len(self.members[rb]):
            ra, rb = rb, ra
        self.root[rb] = ra
        self.members[ra] |= self.members.pop(rb)
        return True


def _folded(forms: dict[str, NameForm], keys: set[str]) -> NameForm:
    """A group as one form, to check it for conflicts."""
    folded = NameForm("")
    for key in keys:
        folded.types.update(forms[key].types)
        for predicate, years in forms[key].dates.items():
            folded.dates[predicate] |= years
    return folded


def merge_groups(
    forms: dict[str, NameForm],
    decisions: list[tuple[str, str, str]],
    found: list[Candidate],
    threshold: float | None,
) -> tuple[dict[str, str], dict[tuple[str, str], str]]:
    """Key -> the key of its group's entity, and (key, key) -> why, for each merge made.

    ``decisions``: (verdict, key, key) in the order made; ``threshold``: a score above it auto-merges (None: never).
    """
    verdicts: dict[tuple[str, str], str] = {}
    for verdict, a, b in decisions:
        if a in forms and b in forms and a != b:
            pair = (a, b) if a < b else (b, a)
            verdicts.pop(pair, None)  # the latest verdict on a pair wins, and comes last
            verdicts[pair] = verdict
    groups = _Groups(forms, {p for p, v in verdicts.items() if v == "reject"})
    merged: dict[tuple[str, str], str] = {}
    for pair, verdict in verdicts.items():
        if verdict == "merge" and groups.union(*pair):
            merged[pair] = "a person's decision"

    def consistent(a: set[str], b: set[str]) -> bool:
        return not _conflict(_folded(forms, a), _folded(forms, b))

    if threshold is None:
        return _canonical(forms, groups), merged
    ambiguous = _ambiguous_short_forms(found)
    merged_short: set[str] = set()  # names merged automatically into a longer one: never a longer one themselves
    for c in found:
        if not (c.score > threshold and c.pair not in verdicts and _may_merge_automatically(c, forms, ambiguous)):
            continue
        if len(groups.members[groups.find(c.short)]) > 1 or c.long in merged_short:
            continue  # no chains: each name merged automatically is introduced for the name it joins
        if groups.union(c.short, c.long, consistent):
            merged_short.add(c.short)
            merged.setdefault(
                c.pair, f"automatic: score {c.score:.2f} > {threshold:g}, introduced in a document: {c.introduction}"
            )
    return _canonical(forms, groups), merged


def _ambiguous_short_forms(found: list[Candidate]) -> set[str]:
    """Short forms that could be two different longer names of the documents they appear in."""
    longs: dict[str, set[str]] = defaultdict(set)
    for c in found:
        if c.introduced or c.co_mention > 0:
            longs[c.short].add(c.long)
    return {short for short, names in longs.items() if len(names) > 1}


def _may_merge_automatically(c: Candidate, forms: dict[str, NameForm], ambiguous: set[str]) -> bool:
    """What a document introducing one form for the other proves. A trailing part is a surname or what a name is
    of ("Abu Dhabi" of "Executive Council of Abu Dhabi"); a part cut at a function word is another thing
    ("Deathstalker" of "Deathstalker and the Warriors from Hell"): both are left to a person."""
    if not c.introduced or c.conflict or c.kind == "suffix" or c.common_word or c.short in ambiguous:
        return False
    if c.kind == "prefix":
        cut = forms[c.long].tokens[len(forms[c.short].tokens)]
        return cut not in _FUNCTION_WORDS
    return True


def _canonical(forms: dict[str, NameForm], groups: _Groups) -> dict[str, str]:
    """Key -> the key its group is named by."""
    canonical: dict[str, str] = {}
    for members in groups.members.values():
        head = min(members, key=lambda k: _canonical_rank(forms[k]))
        canonical.update((m, head) for m in members)
    return canonical


def _canonical_rank(form: NameForm) -> tuple:
    """The form a group is named by: the fullest name (most words, fewest initials), then the most mentioned."""
    tokens = form.tokens
    return (-len(tokens), sum(len(t) == 1 for t in tokens), -len(form.chunks), form.key)


def open_proposals(
    forms: dict[str, NameForm],
    found: list[Candidate],
    canonical: dict[str, str],
    decisions: list[tuple[str, str, str]],
) -> list[Proposal]:
    """The candidates between two different entities that no decision settled, by entity pair (the best one)."""
    decided = {(a, b) if a < b else (b, a) for _, a, b in decisions}
    rejected = {
        frozenset((canonical[a], canonical[b])) for v, a, b in decisions if v == "reject" and a in forms and b in forms
    }
    best: dict[tuple[str, str], Proposal] = {}
    for c in found:
        a, b = canonical[c.short], canonical[c.long]
        if a == b or c.pair in decided or frozenset((a, b)) in rejected:
            continue
        names = (forms[c.short].display, forms[c.long].display)
        evidence = c.evidence
        if a > b:
            a, b, names = b, a, names[::-1]
            evidence = {"a": evidence["b"], "b": evidence["a"]}
        if (a, b) not in best:
            best[(a, b)] = Proposal(a, b, *names, c.score, json.dumps(c.reasons), json.dumps(evidence))
    return list(best.values())
