"""The offline reader: typed answer candidates from evidence sentences, with a confidence a user can see.

No model reads the evidence offline, so an answer is a span of it. ``read_answer`` first types the
answer the question asks for (``question_type``): person, place, organisation, date, year, number,
work (a title), thing ("which X" -> an X, the noun kept), yes/no, comparison, explanation (why / how /
summarise) or other. It then collects candidates of that type from the evidence's sentences (names and
quoted titles, dates, numbers with their unit, "a <kind of> X" phrases, the article's own subject
behind "She ..." / "The company ...") and scores each one by

- type: what the evidence says the candidate is ("the architect Oskar Brenn", "Tarnholm is a port
  city", life dates after a name), its shape (River, University, Records, quotes) and the word before
  it (in / at / by);
- its sentence: the share of the question's other terms and names it holds (the evidence's title
  counts as part of each of its sentences), its cosine to the question, and how near the candidate
  sits to those terms: the relation cue ("founded ... by", "born in", "directed by");
- the evidence's retrieval score and rank;

and never by being a name the question already holds (such names are not candidates; a part of one
is penalised). Sentences that are table rows, headings or list debris are not read. Candidates with
the same name pool their support. Confidence is a logistic of the score, lowered when the runner-up
is close: a user sees it, so a guess looks like a guess.

Comparisons and yes/no questions are read as the planner splits them (``agent.offline.questions.operation_for``):
one reading per option, then ``combine``. ``extractive_summary`` answers why / how / summary questions
with the evidence's most relevant sentences and numbered citation markers.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import itertools
import math
import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from agent.offline.gazetteer import country_of_demonym, is_language, place_kinds
from agent.offline.parsing import parse_all
from agent.offline.questions import (
    ALL_NOUNS,
    AUXILIARY,
    CATEGORY_NOUNS,
    FEMALE_RANKS,
    KIN_STYLE,
    NAME_PARTICLE,
    NO,
    OCCUPATION,
    ORG_NOUNS,
    PERSON_NOUNS,
    PLACE_NOUNS,
    QUESTION_WORDS,
    RANKS,
    SHAPE_WORDS,
    STYLE,
    WORK_NOUNS,
    YES,
    QuestionType,
    common_word,
    focus_sentence,
    looks_like_person,
    mentions_with_initials,
    name_kinds,
    operation_for,
    operation_subquestions,
    question_type,
    whole_word,
)
from agent.offline.relations import KINSHIP_WORDS, PRONOUN_OF, STATED_BY, SYMMETRIC, kinship_asked
from agent.records import NOT_FOUND, is_not_found
from graph_store.embeddings import Embedder
from graph_store.extraction import find_entity_mentions
from graph_store.graph import normalize_name
from graph_store.retrieval import Evidence

# --- evidence as sentences ---------------------------------------------------------------------------

_SENTENCE_END = re.compile(
    r"(?<=[.!?])(?<!\b[A-Z]\.)(?<!\b(?:St|Dr|Mr|Ms|Jr|Sr|No|vs|Co|Lt|Mt|Ft)\.)(?<!\bMrs\.)"
    r"(?<!\bInc\.)(?<!\bGen\.)(?<!\bSgt\.)(?<!\b[cb]\.)(?<!\bca\.)\s+(?=[A-Z\"“(\d])"
)
_MARKDOWN = re.compile(r"^\s*(?:#+|[-*•]|\d+[.)])\s+")


@dataclass
class Sentence:
    text: str
    evidence: Evidence
    rank: int  # the evidence's position in the list it came in
    title: str  # what the evidence is about ("" when unknown)
    opening: bool = False  # the first sentence read from its evidence (an article's opening one)
    title_kind: str = ""  # what the title's bracket says the article is about: "Beast of Blood (film)" is a film

    @property
    def context(self) -> str:
        """The sentence as read: its article's title before it when the sentence does not say it."""
        if self.title and normalize_name(self.title) not in normalize_name(self.text):
            return f"{self.title}: {self.text}"
        return self.text


def is_debris(sentence: str) -> bool:
    """Table rows, headings, lists: too few lower-case words, too many numbers, or cell separators."""
    if "|" in sentence or "\t" in sentence or sentence.count(" - ") >= 3:
        return True
    words = re.findall(r"[A-Za-z][\w'’-]*|\d[\d,.]*", sentence)
    if len(words) < 3:
        return True
    alpha = [w for w in words if w[0].isalpha()]
    lower = sum(1 for w in alpha if w[0].islower())
    if len(words) >= 5 and lower / max(1, len(alpha)) < 0.2:
        return True
    unbracketed = re.sub(r"\([^()]*\)", " ", sentence)  # life dates in brackets are a sentence's, not a table's
    if len(DATE.findall(unbracketed)) >= 3 and lower / max(1, len(alpha)) < 0.45:
        return True  # a table of names and dates ("Barbados 1 August 1973 Belize 1 May 1974 ...")
    return len(words) >= 6 and (len(words) - len(alpha)) / len(words) > 0.4


def split_sentences(text: str) -> list[str]:
    out = []
    for line in text.splitlines():
        line = _MARKDOWN.sub("", line).strip()
        if line:
            out += [s.strip() for s in _SENTENCE_END.split(line) if s.strip()]
    return out


# "Blois- Champagne", "father- in- law", "Ville- d' Avray": a compound or an elision broken by a space (some
# corpora's text has them throughout) is read whole, or the parser splits the sentence there
_SPACED = re.compile(r"(?<=[^\W\d_])- (?=[^\W\d_])|(?<=\b[dDlL]['’]) (?=[A-ZÀ-Þ])")
# ... and "Julia Daudet( Mastani)" is "Julia Daudet (Mastani)": glued, the parser takes the bracket for the name
_GLUED_BRACKET = re.compile(r"(?<=\w)\( ?")


def _mended(text: str) -> str:
    return _GLUED_BRACKET.sub(" (", _SPACED.sub(lambda gap: gap.group(0).strip(), text))


def evidence_sentences(evidence: Sequence[Evidence], max_items: int = 8) -> list[Sentence]:
    """The readable sentences of the evidence (chunks, reports, facts), headings and debris left out."""
    sentences: list[Sentence] = []
    items = [e for e in evidence if e.kind in ("chunk", "report", "fact")][:max_items]
    for rank, item in enumerate(items):
        title = item.titles[0].split(" (")[0].strip() if item.titles else ""
        bracket = re.search(r" \(([^()]+)\)$", item.titles[0]) if item.titles else None
        kind = bracket.group(1) if bracket else ""
        lines = split_sentences(item.text)
        if item.kind == "report" and lines:  # a report's first line is its title
            title, lines = title or lines[0], lines[1:]
        for n, text in enumerate(lines):
            text = _mended(text)
            heading = not re.search(r"[.!?:;\"”)]$", text) and len(text.split()) <= 12 and item.kind != "fact"
            if heading and (n == 0 or text.istitle()):
                if n == 0 and not title:
                    title = text
                continue
            if item.kind != "fact" and is_debris(text):
                continue
            opening = not sentences or sentences[-1].evidence is not item
            sentences.append(Sentence(text, item, rank, title, opening, kind))
    return sentences


# --- candidates ---------------------------------------------------------------------------------------

_MONTH = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sept?(?:ember)?|"
    r"Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?"
)
_YEAR = r"(?:1\d{3}|20\d{2})"
_ORDINAL_WORDS = (
    "first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|thirteenth|"
    "fourteenth|fifteenth|sixteenth|seventeenth|eighteenth|nineteenth|twentieth|twenty-first"
)
# a year before 1000 is a year only where a date says so: after a month ("10 April 963"), "c." or "died"
_EARLY_YEAR = r"(?:1\d{3}|20\d{2}|[1-9]\d{2}\b)"
DATE = re.compile(
    # a day glued to the year before it is a date of its own: life dates written "(28 October 19133 June 1996)"
    rf"(?<=[12]\d{{3}})\d{{1,2}} {_MONTH},? {_YEAR}|"
    rf"(?:(?<=\bc\. )|(?<=\bca\. )|(?<=\bdied )|(?<=\bborn ))[1-9]\d{{2}}\b|"
    rf"\b(?:\d{{1,2}}(?:st|nd|rd|th)? {_MONTH},? {_EARLY_YEAR}|{_MONTH} \d{{1,2}}(?:st|nd|rd|th)?,? {_EARLY_YEAR}|"
    rf"{_MONTH},? {_YEAR}|{_YEAR}s|{_YEAR}(?! ?(?:km|kilomet|met|mile|feet|ft|people|inhabitants)\b)|(?:AD|BC|BCE|CE) \d{{1,4}}\b|\d{{1,4}} (?:AD|BC|BCE|CE)\b|"
    rf"(?:\d{{1,2}}(?:st|nd|rd|th)|{_ORDINAL_WORDS})[ -]century)"
)
_SCALE = r"(?:thousand|million|billion|trillion|hundred)"
_UNITS = set(
    """km kilometres kilometers kilometre kilometer miles mile metres meters metre meter m feet foot ft inches
inch cm mm kg kilograms pounds lb tons tonnes hectares acres years year days months weeks hours minutes seconds
percent % people inhabitants residents times degrees mph seats members episodes""".split()
)
NUMBER = re.compile(
    rf"(?:(?:about|approximately|around|over|nearly|some|roughly) )?(?:[$€£] ?)?"
    rf"(?:\d{{1,3}}(?:,\d{{3}})+|\d+)(?:\.\d+)?(?: ?{_SCALE})?(?: ?%)?"
)
_NUMBER_WORDS = {
    w: n for n, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve".split())
}
_NUMBER_WORD = re.compile(r"\b(?:" + "|".join(list(_NUMBER_WORDS)[2:]) + r"|twice|thrice|once)\b(?:-time)?", re.I)
_SUBJECT_START = re.compile(
    r"^(?:(?:(?:in|on|at|by|after|since|from|during) [^,]{1,40}|[^,]{1,60}(?=, (?:he|she|they|it)\b)), )?(?P<ref>he|she|they|it|"
    r"the (?:[a-z]+ )?(?:" + "|".join(sorted(PLACE_NOUNS | ORG_NOUNS | WORK_NOUNS | {"man", "woman"})) + r"))\b",
    re.I,
)


@dataclass
class Candidate:
    """One answer candidate: the span, how sure the reader is (0..1), the sentence that supports it."""

    answer: str
    confidence: float
    sentence: str
    evidence_id: str
    answer_type: str
    score: float = 0.0  # the raw score confidence is derived from
    support: list[str] = field(default_factory=list)  # every evidence id whose sentences gave this answer


@dataclass
class Reading:
    """The reader's result: what was asked for, the best candidates (best first), and why none if none."""

    answer_type: str
    candidates: list[Candidate]
    reason: str | None = None
    noun: str | None = None
    explanation: str | None = None  # comparisons and yes/no: how the answer was reached

    @property
    def best(self) -> Candidate | None:
        return self.candidates[0] if self.candidates else None

    @property
    def answer(self) -> str:
        return self.candidates[0].answer if self.candidates else NOT_FOUND

    @property
    def confidence(self) -> float:
        return self.candidates[0].confidence if self.candidates else 0.0


@dataclass
class _Span:
    text: str
    start: int
    kind: str  # name | date | number | subject | phrase | defined
    quoted: bool = False  # a title the evidence quotes on its own ('the film "A Dog's Purpose"')
    features: dict = field(default_factory=dict)  # what its score was made of (for inspection)


# Kinds of named places a possessive names ("Regent's Park", "St. Paul's Cathedral") besides the question kinds
_LANDMARKS = set(
    """park cathedral chapel abbey hospital bridge hall theatre theater palace square tower castle academy institute
stadium garden gardens market""".split()
)


# What introduces another name of someone already named: "also known as X", "née X", "born X"
_ALIAS_BEFORE = re.compile(r"\b(?:known as|also called|n[ée]e|born)\s*$|\(\s*or\s+$", re.I)  # "X (or Y)"
_AFTER_A_NAME = re.compile(r"[A-Z][\w'’.-]*\s*\(\s*[\"“]?$")
_NAMED_BEFORE = re.compile(r"\b(?:named|called|known as|nicknamed)\s*[\"“]?\s*$", re.I)  # a quoted name is a name
_BORN_BEFORE = re.compile(r"\b(?:n[ée]e|born(?: as)?)\s*$", re.I)


def _singular(word: str) -> str:
    return word[:-1] if word.endswith("s") and not word.endswith("ss") and len(word) > 3 else word


@functools.lru_cache(maxsize=65536)  # called for every word of every sentence read
def _stem(word: str) -> str:
    word = word.lower()
    if word.endswith(("ied", "ies")):  # "died" is "die", "studied" and "studies" are "study"
        word = word[:-1] if len(word) <= 4 else word[:-3] + "y"
    for suffix in ("ing", "ers", "er", "ed", "es", "s", "ion"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            word = word[: -len(suffix)]
            break
    return word[:6]


_STOP = set(
    """what which who whom whose where when why how is was are were be been being did does do has had have
the a an of in on at to for by with from and or as that this these those it its it's he she they his her their
there than then also into onto about after before during since until while name named called kind type sort
can could will would should may might one many much long old first last""".split()
)
# Role nouns and what a sentence says when it states them ("the founder of X" <- "founded X").
ROLE_CUES = {
    "founder": "found",
    "cofounder": "found",
    "director": "direct",
    "author": "writ",
    "writer": "writ",
    "composer": "compos",
    "producer": "produc",
    "designer": "design",
    "architect": "design",
    "publisher": "publish",
    "performer": "perform",
    "creator": "creat",
    "developer": "develop",
    "inventor": "invent",
    "owner": "own",
    "painter": "paint",
    "birthplace": "born",
    "birth": "born",
    "spouse": "marri",
    "wife": "marri",
    "husband": "marri",
    "married": "marri",
    "died": "die",
    "death": "die",
    "nationality": "citizen",
    "headquarters": "headqu",
    "located": "locat",
}


def _terms(text: str) -> set[str]:
    words = re.findall(r"[A-Za-z][\w'-]*", text)
    out = {_stem(w) for w in words if w.lower() not in _STOP and len(w) > 2}
    out |= {ROLE_CUES[w.lower()] for w in words if w.lower() in ROLE_CUES}
    return out


def _word_stems(text: str) -> list[tuple[int, str]]:
    return [(m.start(), _stem(m.group(0))) for m in re.finditer(r"[A-Za-z][\w'-]*", text)]


def question_names(question: str) -> list[str]:
    """Names the question holds (proper-noun spans and quoted titles), normalised."""
    names = [normalize_name(n) for _, _, n in mentions_with_initials(question)]  # found as the evidence's are
    return [n for n in dict.fromkeys(names) if n]


def _year_text(date: str) -> str:
    """The year (or decade, or century) of a date as written: "4 May 1921" -> "1921"."""
    year = re.search(r"\d{3,4}s?|\d{1,2}(?:st|nd|rd|th) century", date)
    return year.group(0) if year else date


_SENTENCE_OPENERS = set(
    """outside inside today later meanwhile although despite following according like unlike
besides under near across through throughout towards toward upon within without against beyond among around since
once unless whereas while after before during until""".split()
)


def _spans(sentence: Sentence, asked: QuestionType) -> list[_Span]:
    text = sentence.text
    kind = asked.type
    if kind in ("date", "year"):
        spans = [_Span(m.group(0), m.start(), "date") for m in DATE.finditer(text)]
        if kind == "year":
            spans = [_Span(_year_text(s.text), s.start, "date") for s in spans]
        return spans
    if kind == "number":
        return _number_spans(text, asked)
    spans = _mention_spans(text)
    # ("Which goaltender ...?" asks for a person by a noun no list has, said by its ending; "Which festival" not)
    if kind == "person" or kind == "thing" and OCCUPATION.search(asked.noun or ""):
        spans = [_without_affiliation(span) for span in spans]
    for left, right in zip(spans, spans[1:]):
        # "the Seven Years' War": a plural possessive inside a name (next to "the Beatles' Abbey Road", two names)
        if text[left.start + len(left.text) : right.start] in ("' ", "’ ") and left.text.endswith("s"):
            spans.append(_Span(text[left.start : right.start + len(right.text)], left.start, "name"))
    for n, span in enumerate(spans):  # "the 1904 Summer Olympics": the year before an event's name is part of it
        year = re.search(r"\bthe ((?:1[5-9]|20)\d\d) $", text[: span.start])
        if year and span.kind == "name" and year.group(1) not in (asked.focus or ""):
            # (not a year the question gives: "Which prize did X receive in 1996?" asks for the prize)
            spans[n] = _Span(f"{year.group(1)} {span.text}", year.start(1), "name", span.quoted)
    spans += _owner_spans(spans, asked)
    spans += _place_spans(spans, text, asked)
    return spans + _described_spans(sentence, asked)


def _owner_spans(spans: list[_Span], asked: QuestionType) -> list[_Span]:
    """The owner named after "of" in a name, where it is of the asked kind."""
    found: list[_Span] = []
    for span in spans if asked.noun else []:
        # "the Summer Gala of the Chicago Film Festival" holds the festival a question about its gala asks for
        owner = re.search(r" of (?:the )?([A-Z][^,]*)$", span.text)
        head = span.text[: owner.start()].split()[-1] if owner else ""
        if owner and _singular(owner.group(1).split()[-1].lower()) == asked.noun != _singular(head.lower()):
            found.append(_Span(owner.group(1), span.start + owner.start(1), "name", span.quoted))
        # "a siege of which city?": "the Siege of Cassel" names the city after the question's own noun
        elif owner and re.search(rf"\b{re.escape(head.lower())} of (?:which|what)\b", (asked.focus or "").lower()):
            found.append(_Span(owner.group(1), span.start + owner.start(1), "defined", span.quoted))
    return found


def _place_spans(spans: list[_Span], text: str, asked: QuestionType) -> list[_Span]:
    """A country for its demonym ("a Chinese journalist"), a place with its region ("Columbus, Ohio")."""
    found: list[_Span] = []
    if asked.type == "place" and asked.noun in ("country", "nation"):  # "a Chinese journalist" is from China
        found += [_Span(c, s.start, "name") for s in spans if (c := country_of_demonym(s.text))]
    if asked.type == "place":  # "Columbus, Ohio": a place and its region are one answer
        for match in re.finditer(r"\b([A-Z][\w.'-]+(?: [A-Z][\w.'-]+)?), ([A-Z][\w.'-]+(?: [A-Z][\w.'-]+)?)\b", text):
            if place_kinds(match.group(2)):  # "Columbus, Ohio", not "At the University of Vienna, Hayek"
                found.append(_Span(match.group(0), match.start(), "name"))
    return found


def _mention_spans(text: str) -> list[_Span]:
    """The names a sentence mentions, as the reader reads them: not a capitalised first word, not an opener before
    a name; with the initials before them; "New York's John F" as two names."""
    spans = []
    for start, _, name in mentions_with_initials(text):
        if re.fullmatch(r"[\d\s,.]+", name):
            continue
        first = name.split()[0]
        if start == 0 and " " not in name and common_word(text, 0):
            continue  # "Born in Salt Lake City, ...": a sentence's first word, capitalised as every one is
        if start == 0 and first.lower() in _SENTENCE_OPENERS and len(name.split()) > 1:
            # "Outside the EU, ...": a capitalised opener is not part of the name
            name = re.sub(r"^(?:the|a|an)\s+", "", name[len(first) :].strip(), flags=re.I)
            start = text.find(name)
        described = re.match(r"[A-Z][\w'’]*-[a-z]+ (?=[A-Z])", name)
        if described:  # "French-held Kassel", "German-born Anna Lind": the word before says what the name is
            name, start = name[described.end() :], start + described.end()
        initials = re.search(r"(?:\b[A-Z]\.\s?)+$", text[:start])  # "G. Stanley Hall"
        if initials:
            name, start = text[initials.start() : start] + name, initials.start()
        at = text.find(name, start)  # (a mention's offset may fall on the space before it)
        quoted = at >= 0 and bool(re.search(r"[\"“]\s?$", text[:at]) and re.match(r"[\"”]", text[at + len(name) :]))
        # "New York's John F": two names; a quoted title is one ('the film "A Dog's Purpose"'), and so is a place
        # or an institution named after its owner ("St. Xavier's College", "Regent's Park")
        owned = re.search(r"['’]s\s+([A-Z][a-z]+)\b", name)
        whole = quoted or bool(owned and owned.group(1).lower() in ORG_NOUNS | PLACE_NOUNS | _LANDMARKS)
        parts = [name] if whole else re.split(r"['’]s\s+", name)
        offset = start
        for part in parts:
            if part.strip() and part[:1].isupper() or part.startswith('"'):
                spans.append(_Span(part.strip(), offset, "name", quoted))
            offset += len(part) + 3
    return spans


def _described_spans(sentence: Sentence, asked: QuestionType) -> list[_Span]:
    """Candidates that are no name: the article's subject where a sentence starts with a pronoun, what the sentence
    says a thing or a person is, the noun phrase that completes the question's words."""
    text = sentence.text
    kind = asked.type
    spans: list[_Span] = []
    if kind in ("person", "place", "organisation", "work", "thing", "other") and sentence.title:
        subject = _SUBJECT_START.match(text)
        if subject:  # "In 1921 she founded ...", "The city is known for ...": the article's subject
            spans.append(_Span(sentence.title, subject.start("ref"), "subject"))
    if asked.noun in _OCCUPATION_NOUNS:  # "X is a Vallian jazz musician": what the sentence says X is
        spans += _predicate_nouns(text) + _roles_before(text, question_names(asked.focus or ""))
    music_kind = re.search(r"\b(?:kind|type|style|sort) of music\b", asked.focus or "", re.I)
    if asked.noun == "genre" or music_kind:  # "X is a 1999 folk rock album": the kind of album
        spans += _predicate_nouns(text, kind=True)
    elif asked.noun in _CLASSIFIERS:  # "What sport did the X club play?": "X was a soccer club"
        spans += _predicate_nouns(text, kind=True, nouns_only=True)
    if kind == "thing":  # "wrote a book on what subject?": "wrote a book on child medicine"
        spans += _completions(text, asked.focus or "")
    if kind in ("thing", "other") and asked.noun:
        noun = re.escape(asked.noun)
        small = _STOP | _QUANTIFIERS | _SENTENCE_OPENERS  # not "within the fort": a fort, not its name
        for match in re.finditer(rf"\b(?:an? |the )?((?:[a-z][\w-]+ ){{0,2}}{noun}s?)\b", text):
            words = match.group(1).split()
            if len(words) > 1 and not set(words[:-1]) & small:
                spans.append(_Span(match.group(1), match.start(1), "phrase"))
        spans += _defined_as(text, asked.noun, asked.focus or "")
    if kind == "other":  # "X is a demon", "Lilu is what?": a definition's noun phrase
        for match in re.finditer(
            r"\b(?:is|was|are|were) (?:also )?((?:an?|the) (?:[a-z][\w-]* ){0,2}[a-z][\w-]*)", text
        ):
            words = match.group(1).split()  # up to the first small word: "a city on the", "a nation and ..."
            words = words[:1] + list(itertools.takewhile(lambda w: w not in _STOP, words[1:]))
            if len(words) > 1:
                spans.append(_Span(" ".join(words), match.start(1), "phrase"))
    return spans


def _without_affiliation(span: _Span) -> _Span:
    """ "Ada Lind of the Harbour Rovers": a person's team after the name is not part of it. A place is left: a
    royal's style is written so ("Sophia Amalie of Varre", "Eric XIV of Sweden")."""
    match = re.match(r"(.+?) of the [A-Z]", span.text)
    if not match or not looks_like_person(match.group(1)):
        return span
    if {w.lower() for w in match.group(1).split()} & _OFFICE_WORDS:
        return span
    return _Span(match.group(1), span.start, span.kind, span.quoted)


_OCCUPATION_NOUNS = {"occupation", "profession", "job", "career", "vocation"}
# nouns whose answer is a kind, written as the nouns before what the evidence says the subject is ("X was a soccer
# club"), not a name; other asked nouns are not ("What award did the drama film X win?" is not "drama")
_CLASSIFIERS = {"sport", "cuisine"}


def _predicate_nouns(text: str, kind: bool = False, nouns_only: bool = False) -> list[_Span]:
    """The common nouns a copula says its subject is, with their lowercase modifiers and the nouns joined to them:
    "He is a Vallian jazz musician and composer" -> "jazz musician", "composer" (a nationality is no occupation);
    with ``kind``, the modifiers alone: "It is a 1999 folk rock album" -> "folk rock"; with ``nouns_only`` too,
    the nouns among them ("He is a professional basketball player" -> "basketball")."""
    out = []
    for token in parse_all([text])[0]:
        attr = token if token.dep_ == "attr" and token.head.lemma_ == "be" else None
        if attr is None and token.dep_ == "conj" and token.head.dep_ == "attr":
            attr = token  # "... musician and composer"
        if attr is None or attr.pos_ != "NOUN" or not attr.text.islower():
            continue
        copula = attr.head if attr.dep_ == "attr" else attr.head.head
        subjects = [c for c in copula.children if c.dep_ == "nsubj"]
        # a name (the small model tags some as common nouns: "Orodruin") or a pronoun; "His brother was a
        # politician" says what someone else is
        if not any(c.pos_ in ("PRON", "PROPN") or c.text[:1].isupper() for c in subjects):
            continue
        modifiers = (
            _nouns_before(attr.doc, attr.i, lowercase=True)
            if nouns_only
            else [
                t
                for t in attr.lefts
                if t.dep_ in ("compound", "amod") and t.text.isalpha() and t.text.islower() and t.lower_ != "former"
            ]
        )
        first = modifiers[0] if modifiers else attr
        if not kind:
            out.append(_Span(text[first.idx : attr.idx + len(attr)], first.idx, "defined"))
        elif modifiers:
            last = modifiers[-1]
            out.append(_Span(text[first.idx : last.idx + len(last)], first.idx, "defined"))
    return out


def _nouns_before(doc: Any, i: int, lowercase: bool = False) -> list[Any]:
    """The nouns right before token ``i``, by the words' order (the parse of a run of nouns is loose)."""
    run = itertools.takewhile(
        lambda t: t.pos_ in ("NOUN", "PROPN") and (not lowercase or t.text.isalpha() and t.text.islower()),
        reversed(doc[:i]),
    )
    return list(run)[::-1]


def _token_at(doc: Any, start: int) -> Any | None:
    return next((t for t in doc if t.idx == start), None)


def _role_before(doc: Any, span: _Span) -> str | None:
    """The lowercase kind noun right before a name ("rock bands Aquarium" -> "bands"), or None."""
    first = _token_at(doc, span.start)
    before = _nouns_before(doc, first.i) if first is not None else []
    return before[-1].lower_ if before and before[-1].is_lower and _is_kind_word(before[-1].lower_) else None


def _roles_before(text: str, names: list[str]) -> list[_Span]:
    """The role written before a name, by the words' order ("stars A as CIA analyst Ada Lind", "novelist Ada Lind"):
    the nouns right before it, the last one lowercase (the parse hangs them on the name as compounds or as an
    apposition, either way)."""
    out = []
    doc = parse_all([text])[0]
    for name in names:
        for match in whole_word(name).finditer(text.lower()):
            first = _token_at(doc, match.start())
            if first is None or first.i == 0 or doc[first.i - 1].pos_ != "NOUN" or not doc[first.i - 1].is_lower:
                continue
            run = _nouns_before(doc, first.i)
            start, last = run[0].idx, run[-1]
            out.append(_Span(text[start : last.idx + len(last)], start, "defined"))
    return out


def _asked_in_place(question: str) -> tuple[str, str] | None:
    """(the preposition, the lemma of the word it follows) where a question asks in place ("wrote the first book on
    what subject?": "on", "book"); None otherwise. By the words' order: the small model parses a question word in
    place badly ("which" as the object of "of"). The question's only question word, before its noun: not "At which
    ballpark ... the city of which the ..."."""
    words = list(parse_all([question], False)[0])
    at = next((t.i for t in words if t.lower_ in QUESTION_WORDS), None)
    if at is None or at < 2 or words[at].lower_ not in ("what", "which") or at + 1 == len(words):
        return None
    if words[at - 1].pos_ != "ADP" or words[at - 2].pos_ not in ("NOUN", "VERB") or words[at + 1].pos_ == "DET":
        return None
    return words[at - 1].lower_, words[at - 2].lemma_.lower()


def _completions(text: str, question: str) -> list[_Span]:
    """What the sentence writes where the question asks in place (``_asked_in_place``): "a book on child medicine"
    gives "child medicine" (without its article) for "wrote the first book on what subject?"."""
    asked = _asked_in_place(question)
    if asked is None:
        return []
    preposition, head = asked
    out = []
    for token in parse_all([text])[0]:
        if token.dep_ != "pobj" or token.head.lower_ != preposition or token.head.head.lemma_.lower() != head:
            continue
        tokens = list(token.subtree)
        while tokens and tokens[0].dep_ in ("det", "poss", "punct"):
            tokens.pop(0)
        # up to a clause or a preposition but "of" ("the axiom of choice", not "the Games in Tarvell")
        cut = next((t for t in tokens if t.i > token.i and (t.is_punct or t.pos_ == "ADP" and t.lower_ != "of")), None)
        tokens = [t for t in tokens if cut is None or t.i < cut.i]
        if tokens and len(tokens) <= 6:
            start, end = tokens[0].idx, tokens[-1].idx + len(tokens[-1])
            out.append(_Span(text[start:end], start, "defined"))
    return out


def _defined_as(text: str, noun: str, question: str) -> list[_Span]:
    """The subjects the sentence defines as the asked noun, with their modifiers: "The Finnish markka (...) was
    the currency of Finland" -> "Finnish markka" for "What currency ...?"; not as another one of its kind ("the
    country's lowest point" for "What is the highest point ...?")."""
    out = []
    asked = set(re.findall(r"\w+", question.lower()))
    for token in parse_all([text])[0]:
        if token.dep_ != "attr" or token.lemma_.lower() != noun or token.head.lemma_ != "be":
            continue
        ranks = {c.lower_ for c in token.children if c.tag_ in ("JJS", "RBS") or c.ent_type_ == "ORDINAL"}
        if ranks - asked:
            continue
        subject = next((c for c in token.head.children if c.dep_ in ("nsubj", "nsubjpass")), None)
        if subject is None or subject.pos_ == "PRON":
            continue
        first = subject.left_edge  # with its modifiers: "Finnish" in "The Finnish markka", without "The"
        while first.i < subject.i and first.dep_ in ("det", "poss", "punct"):
            first = first.doc[first.i + 1]
        out.append(_Span(text[first.idx : subject.idx + len(subject)], first.idx, "defined"))
    return out


_QUANTIFIERS = {"some", "many", "several", "other", "these", "those", "such", "any", "all", "each", "every", "most"}


# What a number measures, by its unit and by the words that ask for it: a population is not 412 kilometres.
_DIMENSIONS = {
    "length": "km kilometres kilometers kilometre kilometer miles mile metres meters metre meter m feet foot ft "
    "inches inch cm mm length long height tall high elevation distance far depth deep width wide",
    "mass": "kg kilograms pounds lb tons tonnes weight heavy mass",
    "area": "hectares acres area",
    "time": "years year days months weeks hours minutes seconds age old duration",
    "count": "people inhabitants residents population seats members episodes",
}
DIMENSION = {word: dimension for dimension, words in _DIMENSIONS.items() for word in words.split()}


def _dimension_asked(asked: QuestionType) -> str | None:
    """What a number question measures: by its noun ("the population of"), else its "how" word ("how long")."""
    how = re.search(r"\bhow (long|tall|high|far|deep|wide|heavy|old)\b", asked.focus, re.I)
    return DIMENSION.get(asked.noun or "") or (DIMENSION.get(how.group(1).lower()) if how else None)


def _number_spans(text: str, asked: QuestionType) -> list[_Span]:
    spans = []
    wanted = _dimension_asked(asked)
    dates = [m.span() for m in DATE.finditer(text) if not re.fullmatch(_YEAR, m.group(0))]
    for match in NUMBER.finditer(text):
        value = match.group(0).strip()
        if re.fullmatch(_YEAR, value) and asked.noun != "years":
            continue  # a year is not a count
        if any(start <= match.start() < end for start, end in dates):
            continue  # nor is the day of a date ("born January 30, 1977")
        # the unit after a space or a hyphen ("412 kilometres", "a 250-kilometre river")
        unit = re.match(r"(?:\s+|-)(square |cubic )?([a-z%]+)", text[match.end() :])
        measures = DIMENSION.get(unit.group(2)) if unit and not unit.group(1) else "area" if unit else None
        if wanted and measures and measures != wanted:
            continue  # a number of another kind ("412 kilometres long" for a population)
        if unit and unit.group(2) in _UNITS and not (asked.counted and _stem(unit.group(2)) == _stem(asked.counted)):
            value = text[match.start() : match.end() + unit.end()].strip()
        spans.append(_Span(value, match.start(), "number"))
    spans += [_Span(m.group(0), m.start(), "number") for m in _NUMBER_WORD.finditer(text)]
    return spans


# --- what the evidence says things are ----------------------------------------------------------------

_DESCRIPTOR_AFTER = re.compile(
    r"^\s*(?:\([^)]{0,60}\)\s*)?,?\s*(?:is|was|are|were|became|remains)\s+(?:also\s+)?"
    r"(?:an?|the|one of the)\s+([^,.;:()]{2,70})"
)
_APPOSITION_AFTER = re.compile(r"^,\s+(?:an?|the)\s+([a-z][^,.;:()]{1,50})")
_APPOSITION_BEFORE = re.compile(r"\bthe\s+((?:(?!of\s)[a-z][\w-]*\s+){1,3})(?:of\s+)?$")  # "the village of X"
# a role without an article, as news writes it: "the last film for veteran actor X", "starring actress Y"
_BARE_ROLE_BEFORE = re.compile(
    r"(?:^|[,(]\s*|\b(?:for|by|with|and|to|from|as|starring|featuring|including)\s+)((?:[a-z][\w-]*\s+){1,2})$"
)
_EXAMPLE_OF = re.compile(
    r"\b([a-z]{3,})s(?:\s+(?:in|of|at|on|near)\s+[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*)?,?\s+(?:such as|including|like)\s+"
    r"(?:[A-Z][^.;:()]{0,60}?(?:,\s+|\s+and\s+|\s+or\s+))?$"
)
_LIFE_DATES = re.compile(r"^\s*\((?:born |b\. |c\. )?[^)]{0,30}\d{3,4}")
_CUT = re.compile(
    r"\s+(?:in|of|on|at|from|by|for|with|that|which|who|whose|located|based|founded|born|known|"
    r"near|since|until|during|where|when|whose|to)\b.*$"
)


def describe(
    sentences: Sequence[Sentence], pronoun_of: Callable[[str], str | None] | None = None
) -> dict[str, set[str]]:
    """Words the evidence uses for each name: "is a port city", "the architect X", "X, a composer,".

    A name followed by life dates ("(1889-1962)", "(born 1968)") is also described as a "person"; the title of an
    article whose sentences start with "He" or "She" gets that pronoun, and, with ``pronoun_of`` (what the
    corpus's own article about a name calls it), so does every other name the evidence does not say it of.
    """
    words: dict[str, set[str]] = {}
    by_article: dict[str, str | None] = {}  # each name's pronoun by its own article, looked up once
    for sentence in sentences:
        text = sentence.text
        if sentence.title_kind and sentence.title:
            kind_words = re.findall(r"[a-z]+", sentence.title_kind.lower())
            words.setdefault(normalize_name(sentence.title), set()).update(kind_words)
        mentions = mentions_with_initials(text)
        subject = _SUBJECT_START.match(text)
        ref = subject.group("ref").lower() if subject else ""
        if subject and sentence.title and ref in ("he", "she", "it", "they"):
            mentions = [(subject.start("ref"), subject.end("ref"), sentence.title)] + mentions
            if ref in ("he", "she"):
                words.setdefault(normalize_name(sentence.title), set()).add(ref)
        for start, end, name in mentions:
            key = normalize_name(name)
            found = _descriptors_at(text, start, end, name)
            if found:
                words.setdefault(key, set()).update(w.lower() for f in found for w in re.findall(r"[A-Za-z][\w-]*", f))
            if pronoun_of and key not in by_article:
                untitled = " ".join(_untitled(key.split()))  # "Archduke Otto X"'s article is "Otto X"
                by_article[key] = pronoun_of(name) or (pronoun_of(untitled) if untitled != key else None)
    for key, pronoun in by_article.items():
        if pronoun and not words.get(key, set()) & {"he", "she"}:  # the evidence's own "He" / "She" comes first
            words.setdefault(key, set()).add(pronoun)
    return words


def _descriptors_at(text: str, start: int, end: int, name: str) -> list[str]:
    """What ``text`` says the name at ``start:end`` is ("X, a composer,", "the architect X", "X (1889-1962)")."""
    found: list[str] = []
    after = text[end:]
    for pattern in (_DESCRIPTOR_AFTER, _APPOSITION_AFTER):
        match = pattern.match(after)
        if match:
            found.append(_CUT.sub("", match.group(1)))
    before = _APPOSITION_BEFORE.search(text[:start]) or _BARE_ROLE_BEFORE.search(text[:start])
    if before and _is_kind_word(before.group(1).split()[-1]):  # "the architect X", not "the city rises X"
        found.append(before.group(1))
    example = _EXAMPLE_OF.search(text[:start])
    if example:  # "hotels such as X", "rivers including Y and X": X is a hotel, a river
        found.append(example.group(1))
    if _LIFE_DATES.match(after) and " " in name:
        found.append("person")
    # "King Ramiro I", "Gozlin, Count of Bidgau" are men, "Queen Felicia" a woman
    style = re.match(STYLE, after)
    rank = re.sub(r"^\d+\w* ", "", style.group(1)).split()[0] if style else name.split()[0] if " " in name else ""
    if rank.lower() in RANKS:
        found.append("she" if rank.lower() in FEMALE_RANKS else "he")
    return found


def _is_kind_word(word: str) -> bool:
    word = word.lower()
    return (
        word in ALL_NOUNS
        or word.rstrip("s") in ALL_NOUNS
        or word in SPECIFIC_PLACES
        or bool(OCCUPATION.search(word))
        and not word.endswith(("ed", "es"))
    )


_KIND_ALIASES = {
    "mount": "mountain",
    "mt": "mountain",
    "mountains": "mountain",
    "islands": "island",
    "lakes": "lake",
    "hills": "hill",
    "falls": "waterfall",
}


def _kind_words(words: set[str]) -> set[str]:
    return {_KIND_ALIASES.get(w, w) for w in words}


def categories_of(name: str, descriptor: set[str]) -> set[str]:
    """The categories a name's descriptor words and its own words point to."""
    cats = set()
    for word in descriptor:
        singular = word[:-1] if word.endswith("s") else word
        for category, nouns in CATEGORY_NOUNS.items():
            if word in nouns or singular in nouns:
                cats.add(category)
    if "person" in descriptor:
        cats.add("person")
    words = {w.lower() for w in re.findall(r"[A-Za-z]+", name)}
    for category, shape in SHAPE_WORDS.items():
        if words & shape:
            cats.add(category)
    return cats


SPECIFIC_PLACES = set(
    """country nation state city town village county province region district river lake sea
ocean island continent mountain valley municipality borough township parish capital waterfall neighborhood
neighbourhood suburb seat""".split()
)
# kinds of place whose names say what they are ("Avery County", "Lake Tana", "Victoria Falls"): a place name
# without the word, and not described as one in the evidence, is likely another kind of place
_SETTLEMENTS = {"city", "town", "village"}  # names that seldom carry their kind ("Gondar", not "Gondar City")
NAMED_WITH_KIND = set("county river lake waterfall township parish borough district island mountain".split())


def _preposition_before(before: str) -> str:
    """The word before a span, past an article ("rises in the Brannic Mountains" -> "in")."""
    words = before.lower().split()
    while words and words[-1] in ("the", "a", "an"):
        words.pop()
    return words[-1] if words else ""


def _type_score(
    span: _Span, asked: QuestionType, descriptors: dict[str, set[str]], before: str, kind_of: bool = False
) -> tuple[float, str]:
    """How well a span fits the asked type (0..1) and the type the span seems to be."""
    kind = asked.type
    if span.kind == "date":
        return _date_fit(span.text, asked), kind
    if span.kind == "number":
        return _number_fit(span.text.lower(), asked), kind
    if asked.noun == "language" and span.kind == "name":
        return (1.0 if is_language(span.text) else 0.3), "language"
    if span.kind == "defined":  # the sentence says what it is
        return 1.0, kind
    if span.kind == "phrase":
        if kind_of:
            return 1.0, kind
        return (0.75 if asked.noun and asked.noun in span.text.lower() else 0.5), kind
    return _name_type_score(span, asked, descriptors, before, kind_of)


def _name_type_score(
    span: _Span, asked: QuestionType, descriptors: dict[str, set[str]], before: str, kind_of: bool
) -> tuple[float, str]:
    """How well a name fits the asked type, by the categories its own words and the evidence's words for it say."""
    kind = asked.type
    descriptor = descriptors.get(normalize_name(span.text), set())
    known_places = place_kinds(span.text)
    cats = categories_of(span.text, descriptor) | ({"place"} if known_places else set())
    if asked.noun in SPECIFIC_PLACES:
        fit = _place_kind_fit(span.text, asked.noun, descriptor, known_places)
        if fit is not None:
            return fit, "place"
    preposition = _preposition_before(before)
    if preposition in ("in", "at", "near", "from") and not cats:
        cats = {"place"}
    seems = next(iter(sorted(cats)), "person" if looks_like_person(span.text) else "name")
    noun = asked.noun or ""
    words = span.text.lower().split()
    if noun and (noun in descriptor or noun in words or noun in map(_singular, words) or noun + "s" in descriptor):
        return (0.6 if kind_of else 1.0), seems
    if kind in ("thing", "other"):
        return (0.5 if not cats or kind == "other" else 0.35), seems
    if kind in cats:
        return 0.9, kind
    if (
        kind == "work"
        and span.text != span.text.strip('"“”')
        or (kind == "work" and span.kind in ("name", "subject") and descriptor & WORK_NOUNS)
    ):
        return 0.9, kind
    if cats:
        return _other_category_fit(kind, cats), seems
    return _unknown_name_fit(span, kind, descriptor, preposition, seems)


# who -> an organisation is possible ("Who published X?"); where -> an organisation too ("studied at ...")
_NEAR_MISSES = {
    ("person", "organisation"),
    ("place", "organisation"),
    ("organisation", "person"),
    ("organisation", "place"),
}


def _other_category_fit(kind: str, cats: set[str]) -> float:
    """A name known to be of another category than the asked one: a near miss, or no fit."""
    return 0.45 if any((kind, cat) in _NEAR_MISSES for cat in cats) else 0.15


def _unknown_name_fit(span: _Span, kind: str, descriptor: set[str], preposition: str, seems: str) -> tuple[float, str]:
    """A name of no known category: a person by an occupation said of it or by its shape, a place by the preposition
    before it."""
    if kind == "person":
        if descriptor and any(OCCUPATION.search(w) for w in descriptor):
            return 0.8, "person"
        return (0.6 if looks_like_person(span.text) or span.kind == "subject" else 0.35), seems
    if kind == "place":
        return (0.6 if preposition in ("in", "at", "near", "from", "of") else 0.4), seems
    return 0.4, seems


def _date_fit(text: str, asked: QuestionType) -> float:
    """How well a date fits: "which century" wants a century ("the 19th century"), "which decade" one ("the 1960s")."""
    if asked.noun in ("century", "decade"):
        return 1.0 if asked.noun in text.lower() or (asked.noun == "decade" and text.endswith("s")) else 0.4
    return 1.0


def _number_fit(lowered: str, asked: QuestionType) -> float:
    """How well a number fits: a percentage, money, a count of the asked things, or a measure with its unit."""
    if asked.noun in ("percentage", "percent"):
        return 1.0 if "%" in lowered or "percent" in lowered else 0.5
    if asked.noun == "money":
        return 1.0 if re.search(r"[$€£]|dollar|euro|pound", lowered) else 0.5
    written = not re.search(r"\d", lowered)  # "six", "twice"
    # "how many events": "100 years" counts something else ("27 million" is a count; "how much snow" a measure)
    unit = re.sub(r"^(?:[\d.,]+\s*|[a-z]+-)", "", lowered) if not written else ""
    unit = re.sub(r"^(?:hundred|thousand|million|billion|trillion|dozen)\b\s*", "", unit)
    many = re.search(r"\bhow many\b", (asked.focus or "").lower())
    if many and asked.counted and unit and _singular(unit.split()[0]) != _singular(asked.counted):
        return 0.4
    if asked.counted or re.search(r"\bhow (?:many|often)\b", (asked.focus or "").lower()):
        return 0.8 if written else 1.0
    # a measure ("the average snowfall", "how long"): a number with its unit
    has_unit = bool(re.search(r"[a-z%]$", lowered)) and not written
    return 1.0 if has_unit else 0.5 if written else 0.75


def _place_kind_fit(text: str, noun: str, descriptor: set[str], known_places: set[str]) -> float | None:
    """How well a name fits "which country / river / county ...", by the kinds of place it is known or said to be;
    None when nothing tells."""
    noun = {"nation": "country", "seat": "city"}.get(noun, noun)  # a county seat is a town
    span_kinds = known_places | (_kind_words(descriptor | set(re.findall(r"[a-z]+", text.lower()))) & SPECIFIC_PLACES)
    if noun in span_kinds or (noun == "capital" and "city" in span_kinds):
        return 1.0
    if span_kinds:  # a river is not a state, a district not a country
        return 0.3
    if noun in ("country", "continent"):  # the gazetteer knows them all: an unknown name is likely not one
        return 0.45 if noun == "country" else 0.2
    if noun in NAMED_WITH_KIND:
        return 0.5
    return None


# --- scoring -------------------------------------------------------------------------------------------

_TYPE_PREPOSITIONS = {
    "place": {"in", "at", "from", "of", "to", "into"},  # not "near": "died in X, near Y" died in X
    "date": {"in", "on", "since", "from", "until"},
    "year": {"in", "since", "from", "until"},
    "person": {"by", "with"},
    "organisation": {"by", "at", "for", "with"},
    "work": {"in", "of"},
}
WEIGHTS = {
    "type": 0.30,
    "sentence": 0.26,
    "near": 0.06,
    "syntax": 0.16,
    "cue": 0.05,
    "retrieval": 0.09,
    "rank": 0.08,
}


# --- what the parse says: the named-entity type of a span, its tie to the question's relation words ---------

# spaCy's entity labels as the reader's answer types
NER_TYPES = {
    "PERSON": "person",
    "GPE": "place",
    "LOC": "place",
    "FAC": "place",
    "ORG": "organisation",
    "NORP": "nationality",
    "WORK_OF_ART": "work",
    "DATE": "date",
    "CARDINAL": "number",
    "QUANTITY": "number",
    "MONEY": "number",
    "PERCENT": "number",
}
# an asked type and the entity types that rule a name out ("Republic Records" for a place of birth)
_OTHER_TYPES = {
    "person": {"place", "organisation", "date", "work", "nationality", "number"},
    "place": {"person", "date", "work", "nationality", "number"},
    "organisation": {"person", "date", "nationality", "number"},
}


def _tagged(
    span: _Span, asked: QuestionType, entity: str | None, score: float, seems: str, described: Collection[str] = ()
) -> tuple[float, str]:
    """The type score of a name corrected by what the tagger says it is, unless the evidence's own words for it
    (``described``: their categories) say it is something else ("rock bands Aquarium" is no city). A nationality is
    a nationality word the tagger knows or a country, nothing else."""
    if asked.type == "nationality":
        if entity == "nationality":
            return 1.0, entity
        return (0.7, "place") if "country" in place_kinds(span.text) else (0.0, seems)
    if span.kind != "name" or not entity or described and entity not in described and asked.type not in described:
        return score, seems  # no tag, or one the evidence's own words for the name contradict
    if entity == asked.type and asked.noun not in SPECIFIC_PLACES:  # a kind of place: the gazetteer's word
        return max(score, 0.85), entity
    if entity == "place" and asked.noun in _SETTLEMENTS and not place_kinds(span.text):
        return max(score, 0.85), entity  # a place the gazetteer does not know as a country or a state: a town
    if asked.noun in SPECIFIC_PLACES and score >= 1.0:  # the name or the evidence says it is one ("Victoria Falls")
        return score, seems
    if entity in _OTHER_TYPES.get(asked.type, ()):
        return score * 0.6, seems
    return score, seems


@dataclass
class _Parsed:
    """A sentence's parse, the tokens of the question's relation words in it (with the side of each that holds
    the answer) and the title of its article (who "he" / "his" is)."""

    doc: Any
    cues: list[tuple[Any, str]]  # (token, "filler" | "owner" | "either"): see _kin_tie
    title: str = ""


_KINSHIP_STEMS = {_stem(w) for w in KINSHIP_WORDS}
_SYMMETRIC_STEMS = {_stem(w) for w in SYMMETRIC}


def _relation_cues(cue_terms: set[str], question_words: set[str]) -> tuple[set[str], set[str]]:
    """The stems that state the question's relation and those that state its inverse (see relations.STATED_BY)."""
    direct, inverse = set(cue_terms), set()
    for word in question_words:
        if word in STATED_BY:
            direct |= {_stem(w) for w in STATED_BY[word][0]}
            inverse |= {_stem(w) for w in STATED_BY[word][1]}
    return direct - inverse, inverse


def _parsed(
    sentences: list[Sentence],
    spans: list[list[_Span]],
    direct: set[str],
    inverse: set[str],
    question_words: set[str],
    entities: bool,
) -> list[_Parsed | None]:
    """Each sentence's parse, None for a sentence without candidates (its ``spans`` empty): parsing is most of the
    reader's time, and a sentence that names nothing of the asked type needs none; the entity types only when
    names are read (``entities``), not dates or numbers."""
    docs = iter(parse_all([s.text for s, found in zip(sentences, spans) if found], entities))
    out: list[_Parsed | None] = []
    for sentence, found in zip(sentences, spans):
        if not found:
            out.append(None)
            continue
        doc = next(docs)
        cues = []
        for token in doc:
            stems = {_stem(token.text), _stem(token.lemma_)}  # "died" states "die"
            if not token.is_alpha or not stems & (direct | inverse):
                continue
            if any(
                c.dep_ == "compound" and c.tag_ in ("NN", "NNS") and c.lower_ not in question_words
                for c in token.children
            ):
                continue  # "the art director X" does not state "the director of"
            if token.i > 0 and token.text[:1].isupper() and token.tag_ in ("NNP", "NNPS"):
                continue  # "Lind County" is a name, it does not say which county its neighbour "Vallia" is
            side = "owner" if stems & inverse else "either" if stems & _SYMMETRIC_STEMS else "filler"
            cues.append((token, side))
        out.append(_Parsed(doc, cues, sentence.title))
    return out


_FRONTED = "after|for|by|from|with|against|under|behind|about|until|since"
_SIDE = r"(?:on|to) the (north|south|east|west)"  # "borders X on the east", "Suriname to the east"
_SIDE_AFTER = re.compile(rf",?\s+{_SIDE}", re.I)


# "Where did X study?" is said "studied at", "trained at", "graduated from", "was educated at"
_STUDY_VERBS = {"study", "train", "graduate", "educate", "enrol", "enroll"}


def _object_of(doc: Any, start: int, end: int, prepositions: set[str], verbs: set[str]) -> bool:
    """Whether the span is the object of one of ``prepositions`` on one of ``verbs`` ("named after X")."""
    root = _span_root(doc, start, end)
    return (
        root is not None
        and root.dep_ == "pobj"
        and root.head.lower_ in prepositions
        and bool({root.head.head.lower_, root.head.head.lemma_.lower()} & verbs)
    )


_NAMING_PREPOSITIONS = {"after", "for", "from"}


def _named_from(doc: Any, start: int, end: int) -> bool:
    """Whether the span is what something is named after: the object of "after" / "for" / "from" on the verb "name"
    or on a verb whose subject or object is a name ("takes its name from X", "The name was taken from X")."""
    root = _span_root(doc, start, end)
    if root is None or root.dep_ != "pobj" or root.head.lower_ not in _NAMING_PREPOSITIONS:
        return False
    verb = root.head.head
    return verb.lemma_.lower() == "name" or any(
        c.dep_ in ("nsubj", "nsubjpass", "dobj") and c.lemma_.lower() == "name" for c in verb.children
    )


def _equated(doc: Any, start: int, end: int, noun: str, names: list[str]) -> bool:
    """Whether the span is what a copula equates the asked noun with: "Its capital and largest city is Tarvell"
    (not another's: "New South Wales' state capital is Sydney" for Australia's)."""
    root = _span_root(doc, start, end)
    if root is None or root.dep_ not in ("attr", "acomp") or root.head.lemma_ != "be":
        return False
    subjects = [c for c in root.head.children if c.dep_ == "nsubj"]
    owners = [o for s in subjects for o in s.children if o.dep_ == "poss" and o.pos_ == "PROPN"]
    if any(normalize_name(" ".join(t.text for t in o.subtree)) not in names for o in owners):
        return False
    return any(t.lemma_.lower() == noun for s in subjects for t in [s, *s.conjuncts])


_BORN_AFTER = re.compile(r"\s*[-–]\s*born\b")  # "New Zealand-born", "New Zealand - born"
_RANGE_END_ASKED = re.compile(r"\b(?:(?:complet|finish|end|conclu|clos)\w*|until|till)\b", re.I)
_RANGE_START_ASKED = re.compile(r"\b(?:(?:beg[au]n|begin|start|commenc|open)\w*|since)\b", re.I)


def _range_side(text: str, start: int, length: int) -> str | None:
    """ "start" or "end" for a date that opens or closes a range ("between 1320 and 1410", "from 1320 to 1410",
    "1320-1410"), None for one outside a range."""
    before, after = text[max(0, start - 9) : start], text[start + length : start + length + 6]
    if re.search(r"\b(?:between|from)\s+$", before) and re.match(r"\s*(?:and|to|until|till|[-–])\s*\d", after):
        return "start"
    if re.search(r"\d\s*(?:and|to|until|till|[-–])\s*$", before):
        return "end"
    return None


def _agent_of_cue(parsed: _Parsed, start: int, end: int) -> bool:
    """Whether the span is the agent of one of the question's verbs in the passive ("is owned by X")."""
    root = _span_root(parsed.doc, start, end)
    if root is None or root.dep_ != "pobj" or root.head.dep_ != "agent":
        return False
    return any(cue.i == root.head.head.i for cue, _ in parsed.cues)


def _creator_in_definition(doc: Any, start: int, end: int) -> bool:
    """Whether the span is the "by" of what a copula defines something as: "X is a 1961 novel by Ada Lind" (not
    "It was adapted into a film by Y": another work's maker)."""
    root = _span_root(doc, start, end)
    if root is None or root.dep_ != "pobj" or root.head.lower_ != "by":
        return False
    work = root.head.head
    return work.dep_ == "attr" and work.head.lemma_ == "be"


def _span_root(doc: Any, start: int, end: int) -> Any | None:
    span = doc.char_span(start, min(end, len(doc.text)), alignment_mode="expand")  # the tokens the characters touch
    tokens = list(span) if span is not None else []
    if not tokens:
        return None
    inside = {t.i for t in tokens}
    return next((t for t in tokens if t.head.i not in inside or t.head.i == t.i), tokens[-1])


def _counted_noun(doc: Any, start: int, end: int) -> Any | None:
    """The token a number's span hangs from, past its own modifiers: the counted noun of "513,319 TEUs"."""
    root = _span_root(doc, start, end)
    while root is not None and root.dep_ in ("nummod", "quantmod", "compound") and root.head.i != root.i:
        root = root.head
    return root


def _value_owner(doc: Any, start: int, end: int) -> str | None:
    """The proper name a number is said of as its verb's subject ("Piraeus handled 513,319 TEUs"; "X, which
    handled 273,282": the relative's antecedent), or None when its subject is no name."""
    root = _counted_noun(doc, start, end)  # "513,319 TEUs": the counted noun is the verb's object
    if root is None or root.dep_ not in ("dobj", "attr") or root.head.pos_ not in ("VERB", "AUX"):
        return None
    verb = root.head
    subject = next((c for c in verb.children if c.dep_ in ("nsubj", "nsubjpass")), None)
    if subject is not None and subject.tag_ in ("WDT", "WP") and verb.dep_ == "relcl":
        subject = verb.head
    if subject is None or subject.pos_ != "PROPN":
        return None
    words = [t for t in subject.subtree if t.pos_ == "PROPN" and t.i <= subject.i]
    last = subject.i  # with the name's "of" part: "The House of Representatives has 59 members"
    while last + 2 < len(doc) and doc[last + 1].lower_ == "of" and doc[last + 2].pos_ == "PROPN":
        last += 2
    return doc[words[0].i : last + 1].text


def _a_part_of_a_count(doc: Any, start: int, end: int) -> bool:
    """Whether a number counts a part of a count written before it: "has 59 members elected ..., 56 members by
    proportional representation and 3 observer members" (the noun an apposition or its conjunct)."""
    root = _counted_noun(doc, start, end)
    while root is not None and root.dep_ == "conj":
        root = root.head
    return root is not None and root.dep_ == "appos" and any(c.dep_ == "nummod" for c in root.head.children)


# a relative, also composed ("godfather", "stepmother"), is a person whatever the tagger says of the name
_RELATIVE_NOUN = re.compile(rf"^(?:{'|'.join(sorted(KINSHIP_WORDS))})$|(?:father|mother|son|daughter|brother|sister)$")


def _named_role(token: Any) -> bool:
    return token.dep_ == "appos" and token.pos_ == "PROPN" and token.head.pos_ == "NOUN"


def _tie(token: Any, cue: Any, inverse: bool) -> float:
    """1 / the length of the dependency path from ``token`` to the relation word ``cue``, lowered when the
    path goes the wrong way: "the son of Y" names Y for "the father of X", "X was the father of Y" does not."""
    up = [token, *token.ancestors]
    cue_up = [cue, *cue.ancestors]
    common = next((t for t in up if t in cue_up), None)
    if common is None:
        return 0.0
    # a name in apposition to a noun is that noun ("by the engineer Ada Lind"): that step is no distance (not the
    # noun after a name: "Telemann, a friend of Bach" keeps Bach far from what is said of Telemann)
    length = sum(not _named_role(t) for t in up[: up.index(common)]) + sum(
        not _named_role(t) for t in cue_up[: cue_up.index(common)]
    )
    below = up[up.index(cue) - 1] if cue in up and up.index(cue) > 0 else None  # the cue's child on the path
    through_of = below is not None and (below.dep_ == "poss" or below.dep_ == "prep" and below.lower_ == "of")
    return (1.0 / max(1, length)) * (1.0 if through_of == inverse else 0.2)


def _with_conjuncts(tokens: list[Any]) -> list[Any]:
    """The tokens and the names joined to them by "and"; in "son of A of X and B of Y" the parser joins B to X."""
    styled = [o for t in tokens for p in t.children if p.dep_ == "prep" and p.lower_ == "of" for o in p.children]
    return [c for t in tokens for c in [t, *t.conjuncts]] + [
        c for o in styled if o.dep_ == "pobj" for c in o.conjuncts if c.pos_ == "PROPN"
    ]


def _kin_sides(cue: Any) -> tuple[list[Any], list[Any]]:
    """(owners, fillers) of a kinship word: in "X was the son of Y", "X, the son of Y", "Y's son X", "his son"
    and "X married Y", Y (or "his") is the owner, X the filler; "son of A and B" has two owners."""
    owners, fillers = _parents_named(cue), []
    for child in cue.children:
        if child.dep_ == "appos" and not (owners and child.lower_ in RANKS):
            fillers.append(child)
        elif cue.pos_ in ("VERB", "AUX") and child.dep_ == "dobj":
            owners.append(child)
    head = cue.head
    if cue.pos_ in ("VERB", "AUX"):  # "X married Y", "X studied law and married Y"
        fillers += _subjects(cue)
    if cue.dep_ in ("attr", "acomp"):  # "X was the son of Y", "X was married to Y", "X ... and was married to Y"
        fillers += _subjects(head)
    elif cue.dep_ == "nsubj" and head.lemma_ == "be":  # "His father was X"
        fillers += [c for c in head.children if c.dep_ == "attr"]
    elif cue.dep_ in ("appos", "compound") and head.i != cue.i:  # "X, the son of Y", "his son X"
        # ... and only X: in "son of A, Count of Z, and B, daughter of C" the parser joins B to the Count
        return _with_conjuncts(owners), [_styled(head)]
    return _with_conjuncts(owners), _with_conjuncts(fillers)


def _parents_named(cue: Any) -> list[Any]:
    """Whose relative the kinship word says it is: "his son", "the son of Y", "married to Y"; "the son of Y, Count
    of Z, and W" and "the son of Y, Duke of Z, and his wife W" name W too, though the parser hangs W on the style
    or on the verb."""
    owners: list[Any] = []
    for child in cue.children:
        if child.dep_ == "poss":
            owners += _couple(child) if child.lower_ == "their" else [child]
        elif child.dep_ == "prep" and child.lower_ in ("of", "to"):
            owners += [c for c in child.children if c.dep_ == "pobj"]
        elif child.dep_ == "appos" and owners and child.lower_ in RANKS:
            owners += [c for c in child.conjuncts if c.pos_ == "PROPN"]
    if owners and cue.lower_ in ("son", "daughter", "child"):
        spouse = next((t for t in cue.doc[cue.i + 1 :] if t.lower_ in ("wife", "husband") and t.dep_ == "conj"), None)
        if spouse is not None and any(c.dep_ == "poss" for c in spouse.children):
            owners.append(spouse)  # W is in apposition to "wife": a name's side is the noun it names
    return owners


def _styled(token: Any) -> Any:
    """The style a place belongs to: in "X, Count of Z and Bishop of W, son of Y" the parser hangs "son" on W."""
    while True:
        if token.dep_ == "pobj" and token.head.lower_ == "of" and token.head.head.lower_ in RANKS:
            token = token.head.head
        elif token.dep_ == "conj" and token.lower_ in RANKS:
            token = token.head
        else:
            return token


def _couple(their: Any) -> list[Any]:
    """Who "their" stands for in a sentence that says who married ("She married Y in 1884; Z was their daughter",
    "He married Y, and their son was Z"): the marrying verb's subject and object; else "their" itself."""
    for verb in their.doc:
        if verb.lemma_ == "marry" and verb.pos_ == "VERB":
            spouses = [c for c in verb.children if c.dep_ == "dobj"]
            spouses += [o for p in verb.children if p.dep_ == "prep" and p.lower_ == "to" for o in p.children]
            subjects = _subjects(verb)
            if spouses and subjects:
                return subjects + spouses
    return [their]


def _subjects(verb: Any) -> list[Any]:
    """A verb's subjects, or those of the verb it is coordinated with ("She was ... and was married to Y")."""
    while True:
        subjects = [c for c in verb.children if c.dep_ in ("nsubj", "nsubjpass")]
        if subjects or verb.dep_ != "conj" or verb.head.i == verb.i:
            return subjects
        verb = verb.head


def _holds(side: list[Any], token: Any) -> int | None:
    """The position of ``token`` among the side's tokens (a name's words lead to its head, a name in apposition to
    the noun it names: "the physician Johan Lind"), or None."""
    while token.dep_ in ("compound", "flat", "appos") and token.head.i != token.i:
        token = token.head
    return next((n for n, t in enumerate(side) if t.i == token.i), None)


def _is_about(token: Any, names: list[str], title: str) -> bool | None:
    """Whether a side of a kinship word is the question's person: a name sharing a word with it, or a pronoun of
    the article about it; None when it cannot tell (a pronoun of an untitled sentence, a common noun)."""
    if token.tag_ in ("PRP", "PRP$"):
        if not title:
            return None
        return any(_may_be_one_person(title, n) for n in names)
    if token.pos_ == "NOUN":  # "the teacher Greta Sand": the name in apposition says who
        token = next((c for c in token.children if c.dep_ == "appos" and c.pos_ == "PROPN"), token)
    if token.pos_ != "PROPN":
        return None
    if token.lower_ in RANKS and f", {token.text} of " in title:  # "X (1101-1140), Count of Varre, son of Y"
        return any(_may_be_one_person(title, n) for n in names)
    text = " ".join(t.text for t in token.lefts if t.dep_ in ("compound", "flat")) + " " + token.text
    return any(_may_be_one_person(text, n) for n in names)


_REGNAL = re.compile(r"x{0,3}(?:ix|iv|v?i{1,3}|v)|x{1,3}")  # "ii", "iv", "xii" after a first name


def _may_be_one_person(written: str, name: str) -> bool:
    """Whether a name as written may be the question's ``name``: they share a word, and are not two members of one
    family (the same last word after different first ones: "Edda Morlund" is not "Henrik Morlund")."""
    words = [normalize_name(n).split() for n in (written, name)]
    # the numbers of the names themselves, not of a style's relative ("Bertha, daughter of Lothair II")
    numbers = [
        {w for w in normalize_name(n.split(",")[0]).split()[1:] if _REGNAL.fullmatch(w)} for n in (written, name)
    ]
    if all(numbers) and numbers[0] != numbers[1]:
        return False  # "Reginald II, Duke of Guelders" is not "Reginald I of Guelders"
    if numbers[0] and not numbers[1] and len(words[1]) == 1:
        return False  # the question's "Louis" (the Dauphin, his style aside) is not "King Louis XV of France"
    a, b = ([w for w in _untitled(ws) if len(w) > 2] for ws in words)
    if not set(a) & set(b):
        return False
    return not (len(a) > 1 and len(b) > 1 and a[-1] == b[-1] and a[0] != b[0])


def _kin_tie(root: Any, cue: Any, side: str, names: list[str], title: str, wanted: str) -> float | None:
    """How surely ``root`` is the asked relative through the kinship word ``cue``: it stands on the side that holds
    the answer ("filler": "His father was X"; "owner": "he was the son of X"; "either" for spouses and siblings)
    while the other side is the question's person. None when ``root`` is on neither side."""
    owners, fillers = _kin_sides(cue)
    for mine, other, name in ((fillers, owners, "filler"), (owners, fillers, "owner")):
        at = _holds(mine, root)
        if at is None:
            continue
        if side not in (name, "either"):
            return 0.1  # the wrong side: "X was the father of Y" does not make Y a father
        about = [_is_about(t, names, title) for t in other]
        fit = 1.0 if any(about) else 0.7 if not other or None in about else 0.3
        if name == "owner" and len(mine) > 1:  # "the son of A and B": the father is named first, the mother after
            fit *= 1.0 if (at == 0) == (wanted != "mother") else 0.7
        return fit
    return None


def _syntax(parsed: _Parsed, start: int, end: int, names: list[str], wanted: str) -> tuple[float, str | None, bool]:
    """(the span's tie to the question's relation words, 0..1; its named-entity type or None; whether it is the
    asked relative of the question's person through a kinship word, which makes it a person)."""
    root = _span_root(parsed.doc, start, end)
    if root is None:
        return 0.0, None, False
    entity = NER_TYPES.get(root.ent_type_)
    if root.dep_ == "appos" and _RELATIVE_NOUN.search(root.head.lemma_.lower()):
        entity = "person"  # "his godfather Georg Philipp Telemann", whatever the tagger says
    tie, relative = 0.0, False
    for cue, side in parsed.cues:
        if start <= cue.idx < end:
            continue  # the span's own words
        path = _tie(root, cue, side == "owner")
        if {_stem(cue.text), _stem(cue.lemma_)} & _KINSHIP_STEMS:
            kin = _kin_tie(root, cue, side, names, parsed.title, wanted)
            path = kin if kin is not None else 0.5 * path  # off both sides of a kinship word: a weak tie
            relative = relative or (kin or 0.0) >= 0.7
        tie = max(tie, path)
    return tie, entity, relative


# "When was X founded?", "Where was X built?": X underwent the verb (a passive question without its agent)
_UNDERGONE = re.compile(r"^\s*(?:when|where|in (?:which|what) \w+|what year)\s+(?:was|were|is|are)\b", re.I)


def _done_by(parsed: _Parsed, names: list[str]) -> set[str]:
    """Stems of the verbs the question's own entity does in the sentence, in the active voice ("she founded X", with
    "she" the article's subject): no support for when or where that entity underwent them. Symmetric verbs ("she
    married") say both."""
    done: set[str] = set()
    for token in parsed.doc:
        if token.pos_ != "VERB" or any(c.dep_ in ("auxpass", "nsubjpass") for c in token.children):
            continue
        for subject in (c for c in token.children if c.dep_ == "nsubj"):
            who = parsed.title if subject.tag_ == "PRP" else " ".join(t.text for t in subject.subtree)
            if normalize_name(who) in names:
                done |= {_stem(token.text), _stem(token.lemma_)}
    return done - _SYMMETRIC_STEMS


def _asked_names(question: str) -> tuple[str, set[str], list[str]]:
    """(the question without its styles and kin names, its styles' places, its names without their ranks)."""
    # A style's place ("Where did X, Duke of Legnica-Brieg die?": Brieg) is no name the question gives as known.
    # ... nor is a relative the question's own bracket or kin names ("Ealdgyth (daughter of Ælfgar)", "Bertha,
    # daughter of Lothair II": asked their father)
    unstyled = re.sub(STYLE, "", re.sub(rf" \([a-z]+ of [^()]*\)|{KIN_STYLE}[^,?]*", "", question))
    styles = {normalize_name(re.sub(r"^\d+\w* ", "", m.group(1))) for m in re.finditer(STYLE, question)}
    # "Princess Fahrelnissa Zeid" is found written "Fahrelnissa Zeid" too: names are matched without their rank
    names = [" ".join(_untitled(name.split())) for name in question_names(unstyled)]
    return unstyled, styles, names


def _asked_cues(question: str, asked: QuestionType, names: list[str]) -> tuple[set[str], set[str], set[str]]:
    """(the question's terms, those of its relation: not its names ("designed", "born", "river"), its verbs)."""
    q_terms = _terms(asked.focus or question)
    written = [n for _, _, n in find_entity_mentions(question)]  # as written: normalising drops accents
    name_terms = {t for n in names + written for t in _terms(n)} | {_stem(w) for w in name_kinds(question)}
    # a short verb's lemma too: "owns" is "own", as "owned" is in the evidence (the stems keep short words whole;
    # only regular forms: "gave" is not "given")
    verbs = {
        _stem(t.lemma_)
        for t in parse_all([asked.focus or question], False)[0]
        if t.pos_ == "VERB" and t.lower_.startswith(t.lemma_.lower())
    }
    return q_terms, ((q_terms - name_terms) or q_terms) | (verbs - name_terms - _STOP), verbs


def _asked_life_and_range(question: str, asked: QuestionType, q_terms: set[str]) -> tuple[str | None, bool, bool]:
    """("born" / "die" / None: which life date or place is asked, whether a range's end is, whether its start)."""
    focus = (asked.focus or question).lower()
    life_role = (
        "born" if "born" in q_terms or "birth" in focus else "die" if "die" in q_terms or "death" in focus else None
    )
    # "When was X completed?" asks for the end of "built between 1320 and 1410", "When was it begun?" its start
    dated = asked.type in ("date", "year")
    return (
        life_role,
        dated and bool(_RANGE_END_ASKED.search(question)),
        dated and bool(_RANGE_START_ASKED.search(question)),
    )


def _asked_preposition(question: str, q_words: set[str]) -> tuple[str | None, bool]:
    """(the preposition whose object is asked, whether what something is named after is)."""
    # a question fronting its preposition asks for that preposition's object: "After what", "For which team"; so
    # do one that leaves it at the end ("What is X named after?") and one asking in place ("X was named for whom?")
    preposition_first = re.search(rf"(?:^\s*|\b)({_FRONTED})\s+(?:what|which|whom)\b", question, re.I) or re.match(
        rf"\s*(?:what|whom?)\b.*\s({_FRONTED})\s*\??\s*$", question, re.I
    )
    fronted = preposition_first.group(1).lower() if preposition_first else None
    # what something is named after, the evidence may say with any naming preposition ("takes its name from")
    return fronted, fronted in _NAMING_PREPOSITIONS and bool(q_words & {"name", "named", "names"})


class _Asking:
    """What a question asks, read from it once before its evidence is (``_occurrences``)."""

    def __init__(self, question: str, asked: QuestionType, given: Sequence[str] = ()) -> None:
        unstyled, self.styles, self.names = _asked_names(question)
        self.q_terms, self.cue_terms, self.verbs = _asked_cues(question, asked, self.names)
        self.q_words = {w.lower() for w in re.findall(r"[\w'-]+", unstyled)}
        # the question's words in order, singular ("supergroups" is its "supergroup"; "Sandunov" is not its "Sanduny":
        # no stems, names share them): a candidate made of them is the question's own words only where it is written
        # there ("London Transport" is not part of "the London Passenger Transport Board")
        self.q_sequence = f" {' '.join(_singular(w) for w in normalize_name(unstyled).split())} "
        # the question's names with their year ("the 1904 Summer Olympics"): its names are kept without it
        self.dated_names = [
            (y, n) for n in self.names for y in re.findall(rf"\b(\d{{4}}) {re.escape(n)}\b", normalize_name(question))
        ]
        self.short_form_asked = bool(
            re.search(r"\b(?:abbreviat\w*|acronym|initials|short (?:form|name))\b", question, re.I)
        )
        self.kind_of = bool(re.search(r"\b(?:kind|type|sort|form) of\b", asked.focus or question, re.I))
        self.life_role, self.range_end, self.range_start = _asked_life_and_range(question, asked, self.q_terms)
        self.direct, self.inverse = _relation_cues(self.cue_terms, self.q_words)
        self.wanted = kinship_asked(unstyled)
        # a relative is never whom the chain started from: the mother of X's husband is not X (other hops leave what
        # came before among the candidates, so that it still weighs on the others' confidence: ``_read_span``)
        self.never = self.names + [" ".join(_untitled(n.split())) for n in given] if self.wanted else self.names
        # "Under what name was X born?"
        self.birth_name = "name" in self.q_words and bool(self.q_words & {"born", "birth"})
        # "Who played X in Y?": a film's plot names each role's actor in the bracket after it
        self.performer_asked = asked.type == "person" and bool(
            self.verbs & {_stem(v) for v in ("play", "portray", "voice")}
        )
        # "Which country borders X on the east?": "Suriname to the east and Venezuela to the west"
        side_said = re.search(rf"\b{_SIDE}", question, re.I)
        self.side_asked = side_said.group(1).lower() if side_said else None
        self.fronted, self.naming_asked = _asked_preposition(question, self.q_words)
        self.undergone = (
            bool(self.names) and bool(_UNDERGONE.match(question)) and not re.search(r"\bby\b", question, re.I)
        )
        self.names_read = asked.type not in ("date", "year", "number")
        self.dated = asked.type in ("date", "year") or self.life_role is not None


def _names_said(context: str, asking: _Asking, known_as: dict[str, list[str]]) -> tuple[float | None, bool, bool]:
    """How a sentence (``context``, normalised) says the question's names: (the share it says, None without names;
    whether it says none of them in any form; whether it says one with another year than the question's)."""
    names = asking.names
    # whole words: "Brand" is not said by "personal branding"
    share = sum(bool(whole_word(n).search(context)) for n in names) / len(names) if names else None
    # a sentence that says none of the question's names, not even a part ("Burton" for "Tim Burton") or a longer
    # form the evidence gives, is about something else: "X is an American author" does not say who wrote the
    # question's book
    elsewhere = bool(names) and not any(
        whole_word(word).search(context)
        for n in names
        for form in known_as[n]
        for word in form.split()
        if word not in _STOP
    )
    # "the 1906 Summer Olympics" is another one than the question's "1904 Summer Olympics"
    another_year = any(
        re.search(rf"\b(?!{year}\b)\d{{4}} {re.escape(name)}\b", context)
        and not re.search(rf"\b{year} {re.escape(name)}\b", context)
        for year, name in asking.dated_names
    )
    return share, elsewhere, another_year


def _occurrences(
    question: str,
    asked: QuestionType,
    sentences: list[Sentence],
    similarity: np.ndarray,
    descriptors: dict[str, set[str]],
    given: Sequence[str] = (),
) -> list[tuple[float, _Span, Sentence, str]]:
    """Every candidate occurrence in the evidence, scored: (score, the span, its sentence, the type it seems)."""
    asking = _Asking(question, asked, given)
    # A question term found in few of the evidence's sentences says more than one found in all of them.
    sentence_terms = [_terms(s.context) for s in sentences]
    weight = {
        t: math.log(1.0 + (1 + len(sentences)) / (1 + sum(t in terms for terms in sentence_terms)))
        for t in asking.q_terms
    }
    total = sum(weight.values()) or 1.0
    found = []
    spelled_out = _short_names_spelled_out(asking.names, sentences)
    known_as = {n: [n, *spelled_out.get(n, [])] for n in asking.names}  # each name and the evidence's longer forms
    titles = {normalize_name(s.title) for s in sentences}
    namesakes = _namesake_articles(question, asking.names, titles)
    # a name's own article says its dates ("X is a 1918 film"); the same name elsewhere may be a namesake's, and
    # another article's "It was released in 1920" another work's
    own_articles = {n for n in asking.names if n in titles} if asking.dated else set()
    if asking.names_read:  # reading names parses nearly every sentence (their first words, definitions): in one batch
        parse_all([s.text for s in sentences])
    candidates = [_spans(sentence, asked) for sentence in sentences]
    parses = _parsed(sentences, candidates, asking.direct, asking.inverse, asking.q_words, entities=asking.names_read)
    if asking.names_read:
        _describe_by_roles(candidates, parses, descriptors)
    scope = _Scope(asking, asked, descriptors, own_articles, namesakes)
    for sentence, spans, cosine, context_terms, parsed in zip(
        sentences, candidates, similarity, sentence_terms, parses
    ):
        if parsed is None:
            continue  # nothing of the asked type in it
        said = _InSentence.read(sentence, spans, parsed, float(cosine), context_terms, scope, known_as)
        for span in spans:
            key = normalize_name(span.text)
            # the candidate's own words are not support for it ("Brannic Mountains" for "which mountain")
            own = _terms(span.text) - _terms(sentence.context.replace(span.text, " "))
            term_share = sum(weight[t] for t in asking.q_terms & (said.terms - own)) / total
            features = _Features(
                sentence=0.4 * max(0.0, said.cosine)
                + 0.3 * term_share
                + 0.3 * (term_share if said.name_share is None else said.name_share)
            )
            seems = _score_span(span, key, said, scope, features)
            if seems is None:
                continue
            score = features.weighted(sentence.evidence.score, sentence.rank)
            span.features = {
                "type": round(features.type, 3),
                "sentence": round(features.sentence, 3),
                "near": round(features.near, 3),
                "syntax": round(features.syntax, 3),
                "cue": features.cue,
                "retrieval": sentence.evidence.score,
                "rank": sentence.rank,
            }
            score = _discounted(score, span, key, said, scope)
            found.append((score, span, sentence, seems))
    return found


def _describe_by_roles(
    candidates: list[list[_Span]], parses: list[_Parsed | None], descriptors: dict[str, set[str]]
) -> None:
    """ "featuring rock bands Aquarium, ...": the noun right before a name says what it is (and a relative's sex:
    "his two brothers John Frederick" is a "he")."""
    for spans, parsed in zip(candidates, parses):
        if parsed is None:
            continue
        for span in spans:
            role = _role_before(parsed.doc, span) if span.kind == "name" else None
            if role:
                sex = PRONOUN_OF.get(_singular(role), "")
                descriptors.setdefault(normalize_name(span.text), set()).update({role, sex} - {""})


@dataclass
class _Scope:
    """What every candidate of one reading is scored against: the question as read, and what the evidence says of
    the names in it."""

    asking: _Asking
    asked: QuestionType
    descriptors: dict[str, set[str]]  # what the evidence says each name is (``describe``)
    own_articles: set[str]  # the question's names that have an article of their own, when a date is asked
    namesakes: set[str]  # the titles of articles about another bearer of a name the question gives


@dataclass
class _Features:
    """A candidate occurrence's signals (``WEIGHTS``), each stage of ``_score_span`` adjusting them."""

    sentence: float
    type: float = 0.0
    near: float = 0.0
    syntax: float = 0.0
    cue: float = 0.0

    def weighted(self, retrieval: float, rank: int) -> float:
        return (
            WEIGHTS["type"] * self.type
            + WEIGHTS["sentence"] * self.sentence
            + WEIGHTS["near"] * self.near
            + WEIGHTS["syntax"] * self.syntax
            + WEIGHTS["cue"] * self.cue
            + WEIGHTS["retrieval"] * retrieval
            + WEIGHTS["rank"] / (1.0 + rank)
        )


@dataclass
class _InSentence:
    """What one evidence sentence says of the question, read once before its candidates are scored."""

    sentence: Sentence
    parsed: _Parsed  # less the cues that the question's names did, when it asks what they underwent
    cosine: float
    terms: set[str]  # its words, less the same
    title: str  # normalised
    name_share: float | None  # ``_names_said``
    elsewhere: bool
    another_year: bool
    positions: list[int]  # where it says the question's relation words
    name_positions: list[int]  # where it says the question's names
    bracket_opens: dict[int, str]  # where a bracket opens after one of the question's names: that name
    fronted_objects: set[int]  # where the spans start that are the object of the question's fronted preposition

    @classmethod
    def read(
        cls,
        sentence: Sentence,
        spans: list[_Span],
        parsed: _Parsed,
        cosine: float,
        terms: set[str],
        scope: _Scope,
        known_as: dict[str, list[str]],
    ) -> _InSentence:
        asking = scope.asking
        name_share, elsewhere, another_year = _names_said(normalize_name(sentence.context), asking, known_as)
        done: set[str] = set()
        if asking.undergone:  # "In 1921 she founded X" says nothing of when she was founded
            done = _done_by(parsed, asking.names)
            terms = terms - done
            parsed = _Parsed(
                parsed.doc, [c for c in parsed.cues if not {_stem(c[0].text), _stem(c[0].lemma_)} & done], parsed.title
            )
        positions = [p for p, s in _word_stems(sentence.text) if s in asking.cue_terms and s not in done]
        # the question's own words by their lemma too ("proven" for "proved"; not the inverse of a kinship word)
        positions += [c.idx for c, _ in parsed.cues if _stem(c.lemma_) in asking.cue_terms and c.idx not in positions]
        lowered = sentence.text.lower()
        return cls(
            sentence,
            parsed,
            cosine,
            terms,
            normalize_name(sentence.title),
            name_share,
            elsewhere,
            another_year,
            positions,
            # (not what is counted: "How many TEUs did X handle?")
            [m.start() for n in asking.names if n != scope.asked.counted for m in whole_word(n).finditer(lowered)],
            # "the largest being China (about $1.18 trillion)": a value in the bracket after a name is that name's
            {m.end(): n for n in asking.names for m in re.finditer(rf"{whole_word(n).pattern}\s*\(", lowered)},
            _fronted_objects(parsed, spans, asking),
        )


def _fronted_objects(parsed: _Parsed, spans: list[_Span], asking: _Asking) -> set[int]:
    """The spans that are the object of the question's fronted preposition ("After what is X named?")."""
    if not asking.fronted:
        return set()
    return {
        span.start
        for span in spans
        if _object_of(parsed.doc, span.start, span.start + len(span.text), {asking.fronted}, asking.q_words)
        or asking.naming_asked
        and _named_from(parsed.doc, span.start, span.start + len(span.text))
    }


def _score_span(span: _Span, key: str, said: _InSentence, scope: _Scope, features: _Features) -> str | None:
    """Set ``features`` of a candidate span (``key``: its normalised name) from its sentence; the type it seems to
    be, or None if it is ruled out."""
    asking, asked = scope.asking, scope.asked
    text = said.sentence.text
    named = _how_named(span, key, said, scope)
    if named is None:
        return None
    other_name, shortened, played_by = named
    before = text[max(0, span.start - 20) : span.start]
    end = span.start + (1 if span.kind == "subject" else len(span.text))  # "she" stands for the title
    # "X was the currency of Finland" states the relation, as "X (NVTA)" states X's short form and "the role (the
    # actor)" who played it
    stated = span.kind == "defined" or shortened or played_by
    entity, relative, type_boost = _tie_to_question(span, end, said, scope, before, stated, features)
    described = categories_of("", scope.descriptors.get(key, set()))  # its words for it, not its own
    features.type, seems = _tagged(
        span, asked, entity, *_type_score(span, asked, scope.descriptors, before, asking.kind_of), described
    )
    if span.quoted and asked.type == "person" and not _NAMED_BEFORE.search(before):
        features.type = min(features.type, 0.1)  # a title, whatever the tagger says ("Mr. Smith Goes to Washington")
    if type_boost:
        features.type = max(features.type, 0.85)  # the sentence says it is the asked kind of thing
    if asked.type == "person" and seems == "organisation" and _agent_of_cue(said.parsed, span.start, end):
        features.type = max(features.type, 0.85)  # "Who owns X?": "owned by Korr Music Group", a company
    if asking.birth_name and other_name and _BORN_BEFORE.search(text[: span.start]):
        features.syntax, features.type = 1.0, max(features.type, 0.9)  # "Under what name was X born?"
    if (relative or played_by) and asked.type == "person":
        features.type, seems = max(features.type, 0.85), "person"  # someone's father or wife, a role's actor
    if asked.type == "person" and _other_sex(scope.descriptors.get(key, set()), asking.wanted):
        return None  # "the daughter of Henrik Morlund" for his wife, when his article says "He"
    if features.type < 0.15:
        return None
    _place_features(span, end, said, scope, before, features)
    return seems


def _how_named(span: _Span, key: str, said: _InSentence, scope: _Scope) -> tuple[bool, bool, bool] | None:
    """Whether the span is another name of a name before it, a short form, a role's actor; None if what it names
    rules it out as the answer."""
    asking, asked = scope.asking, scope.asked
    text = said.sentence.text
    if not key or _is_given(span.text, asking.never):
        return None  # never an entity the question names ("McDowell County, West Virginia" for McDowell County)
    if asked.type == "person" and (_is_rank_title(span.text) or key in asking.styles):
        return None  # "Duke of Legnica", the question's "3rd Baron Orrin": what someone was, not who
    other_name = span.start in said.bracket_opens or bool(_ALIAS_BEFORE.search(text[: span.start]))
    shortened = _abbreviates(span.text, said.bracket_opens.get(span.start, ""))
    if shortened and not asking.short_form_asked:
        return None  # "The Norrow Valley Transit Authority (NVTA)": the question's own name, shortened
    if asking.wanted and other_name:
        return None  # "X (Karl Thomas Maria; born 1961)", "also known as Karl of Austria": X's other names
    # "John Truett (Tom Drake)", "It stars Tom Drake as John Truett": the role's actor
    played_by = asking.performer_asked and (
        span.start in said.bracket_opens or _plays_a_role(text[span.start + len(span.text) :], asking.names)
    )
    if asked.type == "person" and _AFTER_A_NAME.search(text[: span.start]) and not played_by:
        return None  # "the husband of Julia Daudet (Mastani)": another name of the one before it
    return other_name, shortened, played_by


def _tie_to_question(
    span: _Span, end: int, said: _InSentence, scope: _Scope, before: str, stated: bool, features: _Features
) -> tuple[str | None, bool, bool]:
    """Set the span's syntactic tie to the question's relation words (1 where the sentence ``stated`` the relation
    otherwise); (its entity type, whether the tie is a relative's, whether the sentence says the span is the asked
    kind of thing)."""
    asking, asked = scope.asking, scope.asked
    features.syntax, entity, relative = _syntax(said.parsed, span.start, end, asking.names, asking.wanted)
    if stated:
        features.syntax = 1.0
    type_boost = False
    if asked.noun and said.name_share != 0 and _equated(said.parsed.doc, span.start, end, asked.noun, asking.names):
        # ... of the question's name: "New South Wales' state capital is Sydney" is not New Zealand's
        features.syntax, type_boost = 1.0, True  # "Its capital and largest city is Tarvell"
    if asked.type == "person" and not said.parsed.cues and _creator_in_definition(said.parsed.doc, span.start, end):
        features.syntax = 1.0  # "X is a 1961 novel by Ada Lind": who made X, when no word of the question says so
    if said.fronted_objects:  # "After what is X named?": "named after nearby Fort Dodge", not the county before
        features.syntax = 1.0 if span.start in said.fronted_objects else min(features.syntax, 0.5)
    if asked.noun == "university" and _object_of(said.parsed.doc, span.start, end, {"at", "from"}, _STUDY_VERBS):
        features.syntax = 1.0  # "Branagh trained at the Royal Academy of Dramatic Art"
    if said.title in scope.own_articles and re.search(r"\b(?:is|was) an? $", before):
        features.syntax = 1.0  # "X is a 1919 American film": its own article says when X is from
    return entity, relative, type_boost


def _place_features(span: _Span, end: int, said: _InSentence, scope: _Scope, before: str, features: _Features) -> None:
    """Set how near the span is to the question's words (``near``) and whether the word before it is one that the
    asked type follows (``cue``); values and life dates by what they are next to."""
    asking, asked = scope.asking, scope.asked
    text = said.sentence.text
    distance: float = min(
        (abs(span.start - p) for p in said.positions if not span.start <= p < span.start + len(span.text)),
        default=200,
    )
    if asked.type == "place" and said.positions and span.start < min(said.positions):
        distance *= 1.5  # a place is the verb's complement: "rises in X", "reaches the sea at X"
    features.near = 1.0 / (1.0 + distance / 25.0)
    if span.kind in ("number", "date"):
        _value_features(span, end, said, scope, features)
    cues = _TYPE_PREPOSITIONS.get(asked.type, set())
    if asking.fronted:  # "Until which year ...": "from 1892 until 1954" ends in 1954; "Against which team ...":
        cues = {asking.fronted}  # not the place "at Lind Park"
    features.cue = 1.0 if _preposition_before(before) in cues or span.start in said.fronted_objects else 0.0
    if asking.life_role == "born" and asked.type == "place" and _BORN_AFTER.match(text, span.start + len(span.text)):
        features.syntax, features.cue = 1.0, 1.0  # "New Zealand-born Australian singer": born in New Zealand
    if asking.life_role and asked.type in ("date", "year", "place"):
        _life_features(span, said, scope, before, features)
    if (asking.range_end or asking.range_start) and span.kind == "date":
        range_side = _range_side(text, span.start, len(span.text))
        if range_side:  # the asked end of a range states it as a verb would
            features.syntax, features.cue = (1.0, 1.0) if (range_side == "end") == asking.range_end else (0.0, 0.0)


def _value_features(span: _Span, end: int, said: _InSentence, scope: _Scope, features: _Features) -> None:
    """A number or a date: values sit next to what they measure (names in lists do not), and belong to the name
    whose bracket they are in or whose verb they follow."""
    asking, asked = scope.asking, scope.asked
    # the question's own names near the candidate ("Thessaloniki, which handled 273,282")
    name_distance = min((abs(span.start - p) for p in said.name_positions), default=200)
    features.near = 0.75 * features.near + 0.25 / (1.0 + name_distance / 25.0)
    doc = said.parsed.doc
    owner = _value_owner(doc, span.start, end) if asked.type == "number" else None
    if owner is not None:  # "Piraeus handled 513,319 TEUs, followed by X, which handled 273,282"
        same = any(_same_name(normalize_name(owner), n) for n in asking.names)
        features.syntax = 1.0 if same else min(features.syntax, 0.3)
    elif asked.type == "number" and _a_part_of_a_count(doc, span.start, end):
        features.syntax = min(features.syntax, 0.3)  # "59 members ..., 56 members by proportional representation"
    text = said.sentence.text
    inside = any(at <= span.start and ")" not in text[at : span.start] for at in said.bracket_opens)
    if inside and not asking.life_role:  # life dates in the bracket are read by their order (``_life_features``)
        features.near, features.syntax = 1.0, 1.0


def _life_features(span: _Span, said: _InSentence, scope: _Scope, before: str, features: _Features) -> None:
    """A date or place of birth or death: "Ana Keldor (1931-2009)" was born in 1931 and died in 2009."""
    asking, asked = scope.asking, scope.asked
    sentence = said.sentence
    role = _life_date_role(sentence.text, span.start, sentence.title) or _life_verb_before(before)
    if role and asking.names and _life_dates_of_another(sentence, span.start, asking.names):
        role = "another's"  # "Greta Morlund (1856-1930)" for "When was Edda Morlund born?"
    if role and scope.own_articles and said.title not in scope.own_articles:
        role = "another's"  # "the son of the historian Olof Palme (1884-1918)": a namesake, maybe
    if role == asking.life_role:
        features.cue, features.near = 1.0, 1.0
        if asked.type == "place":  # "(3 May 1897, Marseille - ...)": the place of birth by position
            features.type = max(features.type, 0.8)
        else:  # a date in the bracket after the name states the relation as a verb would
            features.syntax = 1.0
    elif role:
        features.near *= 0.3


def _discounted(score: float, span: _Span, key: str, said: _InSentence, scope: _Scope) -> float:
    """An occurrence's score, lowered where its sentence or its words say it may not be the asked one's."""
    asking, asked = scope.asking, scope.asked
    # a title the evidence quotes on its own names another work than the question's longer one ("A Man Called Horse"
    # for "The Return of a Man Called Horse") ... but "the city of Atbarah" is not the question's "Atbarah River" when
    # a city is asked for
    part_of_question = (
        not span.quoted
        and (
            f" {' '.join(_singular(w) for w in key.split())} " in asking.q_sequence
            or any(f" {key} " in f" {n} " for n in asking.names)
        )
        and not (asked.noun and asked.noun in scope.descriptors.get(key, set()))
    )
    if part_of_question:
        score *= 0.5
    if (
        asked.type in ("date", "year")
        and scope.own_articles == set(asking.names)
        and said.title not in scope.own_articles
    ):
        score *= 0.85  # every name the question asks about has its own article: the date is in one
    text = said.sentence.text
    side = _SIDE_AFTER.match(text, span.start + len(span.text)) if asking.side_asked else None
    if side and side.group(1).lower() != asking.side_asked:
        score *= 0.6  # the name of another side
    if said.title in scope.namesakes:
        score *= 0.7  # "Sancho Ramírez", the King, when the question asks of the Count of that name
    if said.elsewhere:
        score *= 0.85
    if said.another_year:
        score *= 0.5
    if said.sentence.evidence.kind == "fact":
        score *= 0.85
    return score


def _abbreviates(short: str, name: str) -> bool:
    """Whether ``short`` is written of the initials of ``name``'s words ("NVTA", "N.V.T.A." for "norrow valley transit
    authority"), small words left out or not."""
    letters = re.sub(r"[^a-z]", "", short.lower())
    words = name.split()
    return (
        len(letters) >= 2
        and short[:1].isupper()
        and letters
        in (
            "".join(w[0] for w in words),
            "".join(w[0] for w in words if w not in _STOP),
        )
    )


def _namesake_articles(question: str, names: list[str], titles: set[str]) -> set[str]:
    """The titles of articles about another bearer of the question's styled name: with "Sancho Ramírez, Count of
    Ribagorza" among the evidence's (normalised) ``titles``, the article "Sancho Ramírez" is his namesake's."""
    styled = {
        normalize_name(m.group(0)) for m in re.finditer(rf"[A-ZÀ-Þ][\w'-]*(?: [A-ZÀ-Þ][\w'-]*)*{STYLE}", question)
    }
    return {t for t in titles if t in names} if styled & titles else set()


def _short_names_spelled_out(names: list[str], sentences: list[Sentence]) -> dict[str, list[str]]:
    """The full names the evidence gives the question's short ones: "Tarnholm Maritime Society (TMS)" for "TMS"."""
    out: dict[str, list[str]] = {}
    for sentence in sentences:
        text = sentence.text
        brackets = [m for m in re.finditer(r"\s*\(([^()]{2,20})\)", text) if normalize_name(m.group(1)) in names]
        if not brackets:
            continue  # names are looked for only where a bracket holds one of the question's
        ends = {end: name for _, end, name in mentions_with_initials(text)}
        for bracket in brackets:
            if bracket.start() in ends:
                out.setdefault(normalize_name(bracket.group(1)), []).append(normalize_name(ends[bracket.start()]))
    return out


_DEATH_MARK = re.compile(r"\b(?:died|d\.|death)\s*$", re.I)
_BIRTH_MARK = re.compile(r"\b(?:born|b\.|birth)\s*$", re.I)


def _other_sex(described: set[str], wanted: str) -> bool:
    """Whether the evidence's pronouns for a candidate ("he", "she") say it cannot be the ``wanted`` relative."""
    pronoun = PRONOUN_OF.get(wanted)
    return pronoun is not None and described & {"he", "she"} == {"she" if pronoun == "he" else "he"}


def _life_verb_before(before: str) -> str | None:
    """ "born" / "die" for a date or place right after its verb: "born in Nyon ... and died Neuilly"."""
    verb = re.search(r"\b(?:(born)\s+(?:in|at|on)|died(?:\s+(?:in|at|on))?)\s+(?:the\s+)?$", before)  # "born X": a name
    return None if verb is None else "born" if verb.group(1) else "die"


def _life_date_role(text: str, position: int, title: str = "") -> str | None:
    """ "born" / "die" for a date or place inside the life dates after a name: "(1889-1962)", "(born 1968)",
    "(May 8, 1889 in Seattle – May 14, 1967 in Los Angeles)", "(28 October 1913 3 June 1996)": birth comes
    first, death after the dash (or at the last date), unless "born" / "died" says otherwise."""
    for paren in re.finditer(r"\(([^()]*)\)", text):
        if not paren.start(1) <= position < paren.end(1):
            continue
        inner, at = paren.group(1), position - paren.start(1)
        dates = list(DATE.finditer(inner))
        if not dates or re.search(r";|\b(?:born|b\.)", inner[at : dates[0].start()]):
            return None  # another name of the person before "; born <date>" ("(Karl Thomas Vinge; born 1961)")
        marked = re.search(r"\b(?:born|b\.|died|d\.)", inner)
        last_word = title.split()[-1] if title.split() else ""
        after_title = bool(last_word) and text[: paren.start()].rstrip().endswith(last_word)
        if len(dates) < 2 and not marked and not after_title:
            return None  # one year after a title ("Oh, Mr Porter!" (1937)) dates the work, not a life
        if _DEATH_MARK.search(inner[:at]) and not _BIRTH_MARK.search(inner[:at]):
            return "die"  # "(died 1850)", "(born 1790; died 1850)" read from the nearest mark
        if re.fullmatch(r"[\s?]*(?:–|—|-)\s*", inner[: dates[0].start()]):
            return "die"  # "( – 1 January 1406)": the birth is unknown, the date after the dash is the death
        dash = re.search(r"\s*(?:–|—|-|\bto\b)\s*", inner[dates[0].end() :])
        split = dates[0].end() + dash.start() if dash else dates[-1].start() if len(dates) > 1 else len(inner)
        return "die" if at >= split else "born"
    return None


def _life_dates_of_another(sentence: Sentence, position: int, names: list[str]) -> bool:
    """The life dates around ``position`` follow a name that is none of the question's ("Greta Morlund (1856-1930)"
    for "When was Edda Morlund born?"), unless they open the asked person's own article, which may write the name
    another way ("John R. Smight" in "Jack Smight"); later in it, dates after another name are that one's ("He was
    the son of Y (1884-1918)")."""
    text, title = sentence.text, sentence.title
    own_article = any(_same_name(normalize_name(re.sub(STYLE, "", title)), n) for n in names)  # "X, Prince of Y": X's
    if own_article and sentence.opening:
        return False
    opening = text.rfind("(", 0, position)
    before = re.sub(r"(?:\s*\([^()]*\))+\s*$", "", text[:opening])  # "Ola Palme (born Tonow) (1888-1982)"
    # "Prince Ra'ad bin Zeid (born 1936)", "Count Gerold of Kessel (died 942)": the owner with a name's small words
    owner = re.search(rf"((?:[A-Z][\w'’.-]*\s+(?:(?:{NAME_PARTICLE}|of)\s+)?){{0,3}}[A-Z][\w'’.-]*),?\s*$", before)
    owner = owner if opening >= 0 else None
    if not owner:
        return False
    key = normalize_name(owner.group(1))
    return bool(key) and not any(_same_name(key, n) or n in key or key in n for n in names)


def _plays_a_role(after: str, names: list[str]) -> bool:
    """Whether the text after a name gives it one of the question's names as a role: "Tom Drake | as John Truett"."""
    role = re.match(r"\s+as\s+(?:the\s+)?([^,;.()]+)", after)
    return role is not None and any(normalize_name(role.group(1)).startswith(n) for n in names)


def _is_given(answer: str, given: Sequence[str]) -> bool:
    """Whether an answer is one of ``given`` (normalised names), written another way or with its region after it."""
    key = normalize_name(answer)
    head = normalize_name(answer.split(",")[0])
    return any(_same_name(key, n) or head == n for n in given)


def _same_name(key: str, name: str) -> bool:
    """A candidate that is a question's name written another way: "Kim Jong Chol" for "Kim Jong-chul",
    "Barry Jarvis Wesson" for "Barry Wesson"."""
    a, b = _untitled(key.split()), _untitled(name.split())
    if a == b:  # "Archduke Anton of Austria" is "Anton of Austria"
        return True
    if len(b) >= 2 and set(b) <= set(a) and len(a) <= len(b) + 1 and a[0] == b[0] and a[-1] == b[-1]:
        return True
    if len(b) >= 3 and b in (a[1:], a[:-1]):  # "Shaikha Hala bint Daij", "Anna von Habsburg-Lothringen"
        return True
    return (
        len(b) >= 2
        and len(a) == len(b)
        and a[0] == b[0]
        and difflib.SequenceMatcher(None, key, name).ratio() >= 0.85
        and all(_same_word(x, y) for x, y in zip(a, b))
    )


def _untitled(words: list[str]) -> list[str]:
    """A name's words without the rank or role before it ("archduke anton of austria" -> "anton of austria")."""
    return words[1:] if len(words) > 2 and words[0] in RANKS | PERSON_NOUNS else words


_ROMAN = re.compile(r"[ivxl]+")


def _same_word(a: str, b: str) -> bool:
    """Two words of one name written two ways ("chol", "chul"), not two names of one family: another given name
    ("Archduke Anton" / "Archduke Stefan"), another number ("Jan I" / "Jan II")."""
    if a == b:
        return True
    if _ROMAN.fullmatch(a) and _ROMAN.fullmatch(b):
        return False
    return difflib.SequenceMatcher(None, a, b).ratio() >= 0.5


def _confidence(score: float, runner_up: float | None) -> float:
    """A logistic of the raw score, lowered when the runner-up is close (calibrated on dev hops)."""
    base = 1.0 / (1.0 + math.exp(-(score - 0.62) * 12.0))
    if runner_up is not None:
        base *= 0.6 + 0.4 * min(1.0, (score - runner_up) / 0.1)
    return round(max(0.01, min(0.99, base)), 3)


def _strip_asked_words(answer: str, question: str) -> str:
    """ "Queensland Senator Barnaby Joyce" for "... which Queensland Senator ...?" -> "Barnaby Joyce"."""
    phrase = re.search(r"\b(?:which|what)\s+((?:[A-Z][\w-]*\s+)+)", question)
    if not phrase:
        return answer
    asked = {w.lower() for w in phrase.group(1).split()}
    words = answer.split()
    while len(words) > 2 and words[0].lower() in asked:
        words.pop(0)
    return " ".join(words)


def with_style(name: str, sentence: str) -> str:
    """The name as its sentence writes it with its style after it ("Victor Amadeus" in "son of Victor Amadeus,
    Prince of Anhalt-Bernburg, and ..." -> "Victor Amadeus, Prince of Anhalt-Bernburg"): the next hop asks about
    that one, not about every Victor Amadeus; else the name."""
    style = re.search(re.escape(name) + STYLE, sentence or "")
    return f"{name}, {style.group(1)}" if style else name


# Words that make a rank or an office of a rank or a role ("Crown Prince", "Prince Consort", "National Artist",
# "Deputy Prime Minister"), not a name
_RANK_WORDS = RANKS | {"crown", "grand", "great", "arch", "vice", "consort", "regent", "dowager", "hereditary"}
_OFFICE_MODIFIERS = {"deputy", "prime", "supreme", "national", "chief", "senior"}
_OFFICE_WORDS = _RANK_WORDS | PERSON_NOUNS | _OFFICE_MODIFIERS


def _is_rank_title(name: str) -> bool:
    """ "Duke of Legnica", "the Prince of Tuscany", "Mayor of Oakland", "Crown Prince", "National Artist": a rank or
    an office, held over a place or alone, said of someone named elsewhere."""
    words = re.sub(r"^the\s+", "", name.strip(), flags=re.I).split()
    if len(words) >= 2 and all(w.lower() in _OFFICE_WORDS for w in words):
        return True
    return any(len(words) >= at + 3 and words[at].lower() in _OFFICE_WORDS and words[at + 1] == "of" for at in (0, 1))


# Ranks a royal's name is written with ("Princess Regina of Saxe-Meiningen", "Archduke Karl Salvator of Austria"),
# unlike a sovereign's ("King Eric XIV of Sweden" is "Eric XIV of Sweden")
_NAMED_WITH = {"prince", "princess", "archduke", "archduchess", "infante", "infanta"}


def _strip_title(answer: str, asked: QuestionType) -> str:
    """A person's name without the title before it: "Emperor Minh Mạng" -> "Minh Mạng", "King X of Y" -> "X of Y"."""
    words = answer.split()
    # a rank only in a noble's style ("Duke Casimir I of Oświęcim") or before a regnal number ("Sultan Bayezid II"):
    # "Duke Ellington", "Lady Gaga" are names
    styled = " of " in answer or re.search(r" [IVXL]+$", answer)
    titles = (PERSON_NOUNS | {"dr.", "mr.", "mrs.", "ms.", "prof."} | (RANKS if styled else set())) - _NAMED_WITH
    lead = 0  # "National Artist Tomas Vell", "Deputy Prime Minister Ivar Holm": an office's words before the name
    while lead < len(words) - 1 and words[lead].lower() in titles | _OFFICE_MODIFIERS:
        lead += 1
    if asked.type == "person" and lead and words[lead - 1].lower() in titles and words[lead][:1].isupper():
        return " ".join(words[lead:])
    return answer


def _clean_answer(text: str) -> str:
    text = text.strip().strip(" ,;:")
    return text[:-2] if text.endswith("'s") or text.endswith("’s") else text


def _date_detail(text: str) -> tuple[int, int, int] | None:
    """(year, month or 0, day or 0) as written: "June 1989" -> (1989, 6, 0); None for no year."""
    parsed = parse_date(text)
    if parsed is None:
        return None
    month = parsed[1] if re.search(_MONTH, text) else 0
    day = re.search(r"\b(\d{1,2})(?:st|nd|rd|th)?\b(?!\d)", re.sub(r"\d{3,4}", " ", text))
    return parsed[0], month, int(day.group(1)) if month and day else 0


def _dates_pooled(pooled: dict[str, list]) -> dict[str, list]:
    """Dates pooled with the fuller dates they are part of: "June 1989" and "1989" count for "June 10, 1989"."""
    details = {key: _date_detail(occurrences[0][1].text) for key, occurrences in pooled.items()}
    out: dict[str, list] = {}
    for key in sorted(pooled, key=lambda k: details[k] or (0, 0, 0), reverse=True):
        mine = details[key]
        fuller = next(
            (
                other
                for other in out
                if mine
                and (theirs := details[other])
                and theirs[0] == mine[0]
                and mine[1] in (0, theirs[1])
                and mine[2] in (0, theirs[2])
            ),
            None,
        )
        out.setdefault(fuller or key, []).extend(pooled[key])
    return out


def _rank(
    found: list[tuple[float, _Span, Sentence, str]], k: int, asked: QuestionType, question: str = ""
) -> list[Candidate]:
    """Pool occurrences by name (more sources, a little more support) and keep the best k."""
    pooled: dict[str, list[tuple[float, _Span, Sentence, str]]] = {}
    for occurrence in found:
        pooled.setdefault(normalize_name(occurrence[1].text), []).append(occurrence)
    if asked.type == "date":
        pooled = _dates_pooled(pooled)
    # "McDowell County, West Virginia" is McDowell County with its state after it: one candidate, so that the next
    # hop is not asked about the same place twice and read the second time from weaker evidence
    for key in list(pooled):
        span = pooled[key][0][1]
        head = normalize_name(span.text.split(",")[0])
        if span.kind == "name" and head != key and head in pooled:
            pooled[head].extend(pooled.pop(key))
    scored = []
    for occurrences in pooled.values():
        occurrences.sort(key=lambda o: -o[0])
        best = occurrences[0]
        if asked.type == "date":  # the date as fully as the evidence writes it: "June 10, 1989", not "June 1989"
            fullest = max(occurrences, key=lambda o: _date_detail(o[1].text) or (0, 0, 0))[1]
            best = (best[0], fullest, *best[2:])
        sources = list(dict.fromkeys(o[2].evidence.id for o in occurrences))
        # other sources add support only as far as their own occurrence is a good one
        others: dict[str, float] = {}
        for o in occurrences[1:]:
            if o[2].evidence.id != best[2].evidence.id:
                others.setdefault(o[2].evidence.id, o[0])
        score = best[0] + min(0.08, 0.2 * sum(max(0.0, o - 0.45) for o in others.values()))
        scored.append((score, best, sources))
    scored.sort(key=lambda s: -s[0])
    out = []
    for n, (score, (_, span, sentence, seems), sources) in enumerate(scored[:k]):
        runner_up = scored[n + 1][0] if n + 1 < len(scored) else None
        # the best one is as sure as its lead over the runner-up; the others as their gap to the best
        confidence = (
            _confidence(score, runner_up)
            if n == 0
            else _confidence(score, None) * (0.6 + 0.4 * max(0.0, 1 - (scored[0][0] - score) / 0.1)) * 0.7
        )
        out.append(
            Candidate(
                _strip_title(_strip_asked_words(_clean_answer(span.text), question), asked),
                round(confidence, 3),
                sentence.text,
                sentence.evidence.id,
                asked.type if span.kind != "name" else seems,
                round(score, 4),
                sources,
            )
        )
    for above, c in zip(out, out[1:]):  # a lower candidate is never more confident than the one above it
        c.confidence = min(c.confidence, above.confidence)
    return out


# --- the reader ------------------------------------------------------------------------------------------


def _similarity(question: str, sentences: list[Sentence], embedder: Embedder) -> np.ndarray:
    if not sentences:
        return np.zeros(0)
    vectors = embedder.embed([question] + [s.context for s in sentences])
    return vectors[1:] @ vectors[0]


def read_answer(
    question: str,
    evidence: Sequence[Evidence],
    embedder: Embedder,
    k: int = 3,
    pronoun_of: Callable[[str], str | None] | None = None,
    given: Sequence[str] = (),
) -> Reading:
    """The best k typed candidates for ``question`` in ``evidence`` (best first), or none and a reason.
    ``pronoun_of`` tells a name's sex by the corpus's article about it (``Retrievers.pronoun_of``): the
    evidence of "Who was the mother of X?" often names the father alone. ``given`` are the names the hops
    before this one started from and what they answered (normalised), never this hop's answer."""
    asked = question_type(question)
    sentences = evidence_sentences(evidence)
    if not sentences:
        return Reading(asked.type, [], "not found: no readable evidence", asked.noun)
    asked = _typed_by_evidence(asked, sentences)
    similarity = _similarity(asked.focus or question, sentences, embedder)
    if asked.type in ("comparison", "yes/no"):
        return _read_operation(question, asked, sentences, similarity, embedder)
    if asked.type == "explanation":
        return _read_explanation(question, asked, sentences, similarity, k)
    if asked.type == "cause":
        return _read_cause(question, sentences, similarity, k)
    sexed = asked.type == "person" and kinship_asked(question) in PRONOUN_OF
    return _read_span(question, asked, sentences, similarity, k, pronoun_of if sexed else None, given)


def _typed_by_evidence(asked: QuestionType, sentences: list[Sentence]) -> QuestionType:
    """A "which X" whose noun no word list knows ("Which judoka won ...?") asks for a person when the evidence
    calls someone an X: "Ann Vell (born 1987) is a male judoka", "Ann Vell, a judoka, was born in ...", "He is a
    judoka". Only a pronoun or a birth says so: the entity recogniser alone types names too loosely ("Shangri-La,
    Manila is a hotel" would make a hotel a person)."""
    if asked.type != "thing" or not asked.noun or asked.noun in ALL_NOUNS:
        return asked
    named = re.compile(rf"\b{re.escape(asked.noun)}s?\b", re.I)
    for doc in parse_all([s.text for s in sentences if named.search(s.text)]):
        for token in doc:
            if _singular(token.lower_) != asked.noun or token.dep_ not in ("attr", "appos"):
                continue
            subject = token.head if token.dep_ == "appos" else None
            if token.dep_ == "attr":
                subject = next((c for c in token.head.children if c.dep_ in ("nsubj", "nsubjpass")), None)
            if subject is None:
                continue
            born = any(c.lemma_ == "bear" for c in subject.children) or subject.head.lemma_ == "bear"
            if subject.lower_ in ("he", "she") or born:
                return dataclasses.replace(asked, type="person")
    return asked


def _read_span(
    question: str,
    asked: QuestionType,
    sentences: list[Sentence],
    similarity: np.ndarray,
    k: int,
    pronoun_of: Callable[[str], str | None] | None = None,
    given: Sequence[str] = (),
) -> Reading:
    found = _occurrences(question, asked, sentences, similarity, describe(sentences, pronoun_of), given)
    # a hop never answers what the chain started from or answered before (the actor in a film by the director of X
    # is not X); ranked with the others first, a name it ties with ("Nice Guys" beside "High Hopes") is no surer
    candidates = _rank(found, k + len(given), asked, asked.focus or question)
    candidates = [c for c in candidates if not _is_given(c.answer, given)][:k]
    if asked.type == "person":
        _add_family_name(candidates, question, {s.evidence.id: s.title for s in sentences})
        for candidate in candidates:  # "Godfrey III, Duke of Lower Lorraine": which Godfrey III, as written
            candidate.answer = with_style(candidate.answer, candidate.sentence)
    if asked.plural and candidates:
        candidates[0].answer = _listed_with(candidates[0]) or candidates[0].answer
    if not candidates:
        wanted = {"date": "date", "year": "year", "number": "number", "thing": asked.noun or "answer"}.get(
            asked.type, f"{asked.type} name" if asked.type != "other" else "answer"
        )
        return Reading(
            asked.type,
            [],
            f"not found: no {wanted} in the evidence that the question does not already name",
            asked.noun,
        )
    return Reading(asked.type, candidates, None, asked.noun)


def _listed_with(candidate: Candidate) -> str | None:
    """The candidate and the names listed after it ("Gillian Chung, Bobo Chan, and Cecilia Cheung"), as written,
    for a question asking for several; None when it is named alone. A list ends in "and" (the small parser
    misreads lists of names it does not know, so the list is read from the names and what is between them)."""
    text = candidate.sentence
    at = text.find(candidate.answer)
    if at < 0:
        return None
    end = at + len(candidate.answer)
    for start, stop, _ in sorted(mentions_with_initials(text)):
        if start < end:
            continue
        between = text[end:start]
        if not re.fullmatch(r",\s*|,?\s+and\s+", between):
            return None
        end = stop
        if "and" in between:
            return text[at:end]
    return None


# Relatives who are born with the family's name ("his brother, John" in the article on James Tuchet is John Tuchet).
_BORN_WITH_THE_NAME = {"father", "son", "brother", "sister", "daughter", "child", "sibling", "grandfather"}


def _add_family_name(candidates: list[Candidate], question: str, titles: dict[str, str]) -> None:
    """A relative born into the question's person's family, named by first name alone in that person's own article,
    gets the family name: the answer says who, not "John"."""
    if not _BORN_WITH_THE_NAME & set(re.findall(r"[a-z]+", question.lower())):
        return
    for _, _, person in mentions_with_initials(question):
        own = person.split(",")[0].split()  # "James Tuchet, 7th Earl of Castlehaven": "James Tuchet"
        own = [w for w in own if not _REGNAL.fullmatch(w.lower()) and w not in ("Jr", "Jr.", "Sr", "Sr.")]
        if len(own) < 2 or " of " in f" {' '.join(own)} ".lower():
            continue  # "Reginald I of Guelders": a style, no family name
        for candidate in candidates:
            title = titles.get(candidate.evidence_id, "")
            if (
                re.fullmatch(r"[A-Z][a-z]+", candidate.answer)
                and title
                and _same_name(normalize_name(title.split(",")[0]), normalize_name(" ".join(own)))
            ):
                candidate.answer = f"{candidate.answer} {own[-1]}"


def _read_explanation(
    question: str, asked: QuestionType, sentences: list[Sentence], similarity: np.ndarray, k: int
) -> Reading:
    ranked = _rank_sentences(question, sentences, similarity)
    candidates = [
        Candidate(
            s.text,
            _confidence(score + 0.1, None),
            s.text,
            s.evidence.id,
            "explanation",
            round(score, 4),
            [s.evidence.id],
        )
        for score, s in ranked[:k]
    ]
    return Reading("explanation", candidates, None if candidates else "not found: nothing in the evidence explains it")


# What a death is stated with: "died of / from X", "succumbed to X", "his death from X", "killed in a car accident".
_DYING = {"die", "death", "succumb"}
_FATAL_EVENTS = set(
    """accident crash collision fire battle duel shipwreck explosion bombing earthquake avalanche attack war
skirmish ambush storm flood massacre""".split()
)
# A verb that says how someone died is its cause ("was assassinated": assassination)
_DEATH_VERBS = {"assassinate": "assassination", "murder": "murder", "execute": "execution", "drown": "drowning"}


def _read_cause(question: str, sentences: list[Sentence], similarity: np.ndarray, k: int) -> Reading:
    """ "Why did X die?": the illness, accident or deed the evidence names as the cause of X's death, read from the
    parse of the sentences most about X."""
    names = question_names(question)
    ranked = [
        (score, s)
        for score, s in _rank_sentences(question, sentences, similarity)
        if any(n in normalize_name(s.text) or _same_name(normalize_name(s.title), n) for n in names)
    ][:12]  # the asked person's death: their name in the sentence, or their own article
    docs = parse_all([s.text for _, s in ranked])
    found: dict[str, Candidate] = {}
    for (score, sentence), doc in zip(ranked, docs):
        for cause in _causes_of_death(doc):
            key = cause.lower()
            if key not in found:
                found[key] = Candidate(
                    cause,
                    _confidence(score + 0.1, None),
                    sentence.text,
                    sentence.evidence.id,
                    "cause",
                    round(score, 4),
                )
    candidates = sorted(found.values(), key=lambda c: -c.score)[:k]
    return Reading("cause", candidates, None if candidates else "not found: no cause of death in the evidence", "death")


def _causes_of_death(doc: Any) -> list[str]:
    return [cause for token in doc for cause in _causes_at(token) if cause]


def _causes_at(token: Any) -> list[str]:
    """The causes of death a word states: "died of X", "killed in a X accident", "committed suicide"."""
    if any(c.dep_ in ("nsubj", "nsubjpass", "poss") and c.pos_ == "NOUN" for c in token.children):
        return []  # "his wife died of X", "her father's death": someone else's death
    objects = [(p.lower_, o) for p in token.children if p.dep_ == "prep" for o in p.children if o.dep_ == "pobj"]
    if token.lemma_ in _DYING:
        return [_cause_phrase(o) for prep, o in objects if prep in ("of", "from", "to") or o.lemma_ in _FATAL_EVENTS]
    if token.lemma_ == "kill" and token.pos_ == "VERB":
        return [_cause_phrase(o) for _, o in objects if o.lemma_ in _FATAL_EVENTS]
    if token.lemma_ == "commit" and any(c.lower_ == "suicide" for c in token.children):
        return ["suicide"]
    if token.lemma_ in _DEATH_VERBS and any(c.dep_ == "auxpass" for c in token.children):
        return [_DEATH_VERBS[token.lemma_]]
    return []


def _cause_phrase(head: Any) -> str:
    """The noun phrase of a cause without its article and what it adds of place or time: "a heart attack at his
    home" -> "heart attack"; "complications of pneumonia" stays whole."""
    keep = [head]
    for child in head.children:
        if child.dep_ in ("det", "poss", "punct", "relcl", "acl", "appos", "cc", "conj"):
            continue
        if child.dep_ == "prep" and child.lower_ != "of":
            continue
        keep += list(child.subtree)
    return "".join(t.text_with_ws for t in sorted(keep, key=lambda t: t.i)).strip(" ,.")


_CAUSAL = re.compile(
    r"\b(?:because|so that|in order to|to (?:gain|get|secure|expand|add|acquire|obtain|reduce|avoid)|"
    r"due to|reason|after|since|led to|as a result|therefore|aim|goal|wanted|needed)\b",
    re.I,
)


def _rank_sentences(question: str, sentences: list[Sentence], similarity: np.ndarray) -> list[tuple[float, Sentence]]:
    q_terms = _terms(question)
    names = question_names(question)
    why = bool(
        re.match(r"\s*(?:and\s+)?(?:why|how come|what (?:is|was) the (?:reason|purpose|cause))\b", question, re.I)
    )
    scored = []
    for sentence, cosine in zip(sentences, similarity):
        context = sentence.context
        term_share = len(q_terms & _terms(context)) / len(q_terms) if q_terms else 0.0
        name_share = sum(n in normalize_name(context) for n in names) / len(names) if names else 0.0
        score = (
            0.5 * float(cosine)
            + 0.25 * term_share
            + 0.15 * name_share
            + 0.1 * sentence.evidence.score
            + (0.1 if why and _CAUSAL.search(sentence.text) else 0.0)
        )
        scored.append((score, sentence))
    scored.sort(key=lambda s: -s[0])
    return scored


def extractive_summary(
    question: str, evidence: Sequence[Evidence], embedder: Embedder, max_sentences: int = 4
) -> tuple[str, list[str]]:
    """The evidence's most relevant, non-redundant sentences, each followed by "[n]", n being the position
    (from 1) of its evidence in ``evidence``; and the ids of the evidence cited, in order of citation."""
    sentences = evidence_sentences(evidence, max_items=len(evidence))
    if not sentences:
        return NOT_FOUND, []
    vectors = embedder.embed([question] + [s.context for s in sentences])
    ranked = _rank_sentences(question, sentences, vectors[1:] @ vectors[0])
    position = {e.id: n for n, e in enumerate(evidence, 1)}
    index_of = {id(s): n for n, s in enumerate(sentences)}
    chosen: list[Sentence] = []
    for _, sentence in ranked:
        vector = vectors[1 + index_of[id(sentence)]]
        if any(float(vector @ vectors[1 + index_of[id(c)]]) > 0.85 for c in chosen):
            continue  # says what a chosen sentence says
        chosen.append(sentence)
        if len(chosen) >= max_sentences:
            break
    text = " ".join(f"{s.text.rstrip()} [{position[s.evidence.id]}]" for s in chosen)
    return text, list(dict.fromkeys(s.evidence.id for s in chosen))


# --- comparisons, yes/no, and combining readings -----------------------------------------------------------


def _read_operation(
    question: str, asked: QuestionType, sentences: list[Sentence], similarity: np.ndarray, embedder: Embedder
) -> Reading:
    """A comparison or yes/no question read as the planner splits it: one reading per option, then combine."""
    operation = operation_for(question) or {"op": "yes_no", "labels": [], "property": asked.focus}
    inputs = []
    for label, sub_question in operation_subquestions(operation):
        about = [s for s in sentences if _mentions(s, label)] or sentences
        sub_asked = question_type(sub_question)
        sub_similarity = _similarity(sub_question, about, embedder)
        if sub_asked.type == "yes/no":
            reading = read_yes_no(sub_question, about, sub_similarity, label, operation.get("property"))
        else:
            reading = _read_span(sub_question, sub_asked, about, sub_similarity, 3)
        inputs.append((label, reading))
    if not inputs:
        reading = read_yes_no(question, sentences, similarity, None, operation.get("property"))
        return Reading("yes/no", reading.candidates, reading.reason, explanation=reading.explanation)
    answer, explanation, confidence = combine(operation, question, inputs)
    if is_not_found(answer):
        return Reading(asked.type, [], explanation)
    support = next((r.best for _, r in inputs if isinstance(r, Reading) and r.best), None)
    candidates = [
        Candidate(
            answer,
            confidence,
            support.sentence if support else "",
            support.evidence_id if support else "",
            asked.type,
            confidence,
        )
    ]
    if asked.type == "comparison":
        candidates += [
            Candidate(label, round(min(confidence, 1 - confidence), 3), "", "", "comparison", 0.0)
            for label, _ in inputs
            if normalize_name(label) != normalize_name(answer)
        ]
    else:
        candidates.append(Candidate(NO if answer == YES else YES, round(1 - confidence, 3), "", "", "yes/no", 0.0))
    return Reading(asked.type, candidates, None, explanation=explanation)


def _mentions(sentence: Sentence, label: str) -> bool:
    key = normalize_name(label)
    return bool(key) and (key in normalize_name(sentence.context))


_NEGATION = re.compile(r"\b(?:not|never|no|neither|nor|n't|without)\b", re.I)


def read_yes_no(
    question: str,
    sentences: Sequence[Sentence],
    similarity: np.ndarray,
    subject: str | None = None,
    prop: str | None = None,
) -> Reading:
    """Yes / no for "Is X P?".

    A property that is a kind of thing ("a composer", "British publications") is checked against what
    the evidence says X is (its descriptors: "Lise Vandt was a composer"); a same-category word
    counts half ("a magazine" for "a publication"). Any other property ("born in Tarnholm") is checked
    against the sentences about X: yes when one holds its terms; a negated sentence says no.
    """
    focus = focus_sentence(question)
    if not subject:  # "Was Piet Sarandon born in Tarnholm?": the first name is the subject, the rest the property
        subject = _yes_no_subject(focus, sentences)
    names = [normalize_name(subject)] if subject else []
    prop_text = _yes_no_property(question, focus, subject, prop)
    prop_words = [
        w.lower()
        for w in re.findall(r"[A-Za-z][\w-]*", prop_text)
        if w.lower() not in _STOP and w.lower() not in ("both", "also", "each", "either")
    ]
    prop_terms = {_stem(w) for w in prop_words} | {ROLE_CUES[w] for w in prop_words if w in ROLE_CUES}
    if not prop_terms:
        return Reading("yes/no", [], "not found: no property to check")
    about = [
        (s, c) for s, c in zip(sentences, similarity) if not names or any(n in normalize_name(s.context) for n in names)
    ]
    if not about:
        return Reading("yes/no", [], f"not found: nothing in the evidence about {subject or 'it'}")
    nominal = not re.search(r"\b(?:in|at|on|of|by|from|to|with|for|born|died)\b|\w+ed\b", prop_text, re.I)
    # what the evidence says the subject is, under its name or a longer form of it ('Nicholas Lofton "Nick" Hexum')
    descriptor = (
        set().union(
            *(d for n, d in describe([s for s, _ in about]).items() if any(f" {name} " in f" {n} " for name in names))
        )
        if names
        else set()
    )
    if nominal and descriptor:
        return _yes_no_by_descriptor(prop_words, prop_terms, descriptor, about)
    return _yes_no_by_sentences(prop_terms, about)


def _yes_no_subject(focus: str, sentences: Sequence[Sentence]) -> str | None:
    """The first name of a yes/no question, as long as the evidence names it ("Is Mark King American?" is found as
    one name: Mark King)."""
    mentions = find_entity_mentions(re.sub(rf"^\s*{AUXILIARY}\s+", "", focus, flags=re.I))
    subject = mentions[0][2] if mentions else None
    if not subject:
        return None
    known = " ".join(normalize_name(s.context) for s in sentences)
    words = subject.split()
    return next(
        (
            " ".join(words[:n])
            for n in range(len(words), 0, -1)
            if f" {normalize_name(' '.join(words[:n]))} " in f" {known} "
        ),
        subject,
    )


def _yes_no_property(question: str, focus: str, subject: str | None, prop: str | None) -> str:
    """What a yes/no question asks of its subject, a pronoun for a thing the sentence before named replaced by it."""
    prop_text = prop or re.sub(rf"^\s*{AUXILIARY}\s+", "", focus, flags=re.I)
    if subject:
        at = prop_text.lower().find(subject.lower())
        # "Does the director Puneet Sira also have one?": what is asked follows the subject
        prop_text = (
            prop_text[at + len(subject) :]
            if at >= 0 and not prop
            else re.sub(re.escape(subject), " ", prop_text, flags=re.I)
        )
    earlier = question[: question.find(focus)].strip() if focus in question else ""
    if earlier and re.search(r"\b(?:one|it|that)\b", prop_text):
        last = find_entity_mentions(earlier)  # "X has an OBE. Does Y also have one?": one = an OBE
        if last:
            prop_text = re.sub(r"\b(?:one|it|that)\b", last[-1][2], prop_text)
    return prop_text


def _yes_no_by_descriptor(
    prop_words: list[str], prop_terms: set[str], descriptor: set[str], about: list[tuple[Sentence, Any]]
) -> Reading:
    """ "Is X a composer?": yes when what the evidence says X is holds the property's words."""
    stems = {_stem(w) for w in descriptor}
    share = len(prop_terms & stems) / len(prop_terms)
    head = prop_words[-1] if prop_words else ""
    head_category = categories_of("", {head}) if head else set()
    if head and _stem(head) not in stems and head_category and head_category & categories_of("", descriptor):
        share = max(share, 0.5 * share + 0.5)  # "a magazine" is a kind of "publication"
    answer = YES if share >= 0.99 or (share >= 0.5 and _stem(head) in stems) or share >= 0.75 else NO
    sentence = next((s for s, _ in about if any(w in s.text.lower() for w in descriptor)), about[0][0])
    confidence = round(0.55 + 0.4 * (share if answer == YES else 1 - share), 3)
    explanation = f"the evidence describes it as: {' '.join(sorted(descriptor))}"
    return _yes_no_reading(answer, confidence, sentence, share, explanation)


def _yes_no_by_sentences(prop_terms: set[str], about: list[tuple[Sentence, Any]]) -> Reading:
    """ "Was X born in Tarnholm?": yes when a sentence about X holds the property's terms; a negated one says no."""
    best_share, best_sentence = 0.0, about[0][0]
    for sentence, cosine in about:
        share = len(prop_terms & _terms(sentence.context)) / len(prop_terms)
        if _NEGATION.search(sentence.text) and share > 0:
            share *= 0.3
        share = 0.85 * share + 0.15 * max(0.0, float(cosine))
        if share > best_share:
            best_share, best_sentence = share, sentence
    answer = YES if best_share >= 0.6 else NO
    confidence = round(0.5 + min(0.45, abs(best_share - 0.6)), 3)
    explanation = f"{'states' if answer == YES else 'does not state'} it: {best_sentence.text}"
    return _yes_no_reading(answer, confidence, best_sentence, best_share, explanation)


def _yes_no_reading(answer: str, confidence: float, sentence: Sentence, score: float, explanation: str) -> Reading:
    """A yes/no reading: one candidate, supported by ``sentence``."""
    evidence_id = sentence.evidence.id
    candidate = Candidate(answer, confidence, sentence.text, evidence_id, "yes/no", round(score, 4), [evidence_id])
    return Reading("yes/no", [candidate], None, explanation=explanation)


_SCALES = {"hundred": 1e2, "thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12}
_MONTHS = {m: n for n, m in enumerate("jan feb mar apr may jun jul aug sep oct nov dec".split(), 1)}


def parse_date(text: str) -> tuple[int, int, int] | None:
    """(year, month, day) of a written date: "4 February 1948", "Feb 4, 1948", "1948", "1950s", "AD 43"."""
    text = text.strip()
    century = re.search(r"(\d{1,2})(?:st|nd|rd|th)[ -]century", text)
    if century:
        return ((int(century.group(1)) - 1) * 100, 1, 1)
    year = re.search(r"\b(\d{3,4})s?\b", text) or re.search(r"\b(?:AD|CE) (\d{1,4})\b", text)
    if not year:
        return None
    value = int(year.group(1))
    if re.search(r"\b(?:BC|BCE)\b", text):
        value = -value
    month = next((n for m, n in _MONTHS.items() if re.search(rf"\b{m.capitalize()}", text)), 1)
    day = re.search(r"\b(\d{1,2})(?:st|nd|rd|th)?\b(?!\d)", text.replace(year.group(0), " "))
    return (value, month, int(day.group(1)) if day and int(day.group(1)) <= 31 else 1)


# lengths in metres and weights in kilograms, so "1,200 m" and "3 km" compare
_UNIT_FACTORS = {
    "km": 1000,
    "kilometres": 1000,
    "kilometers": 1000,
    "kilometre": 1000,
    "kilometer": 1000,
    "m": 1,
    "metres": 1,
    "meters": 1,
    "metre": 1,
    "meter": 1,
    "cm": 0.01,
    "centimetres": 0.01,
    "centimeters": 0.01,
    "mm": 0.001,
    "miles": 1609.344,
    "mile": 1609.344,
    "ft": 0.3048,
    "feet": 0.3048,
    "foot": 0.3048,
    "inches": 0.0254,
    "inch": 0.0254,
    "kg": 1,
    "kilograms": 1,
    "tonnes": 1000,
    "tons": 1000,
    "pounds": 0.4536,
    "lb": 0.4536,
    "g": 0.001,
    "grams": 0.001,
}


def parse_number(text: str) -> float | None:
    """The value of "412 kilometres" (in metres), "6,960", "$1.18 trillion", "5.1%", "twice"."""
    lowered = text.lower()
    match = re.search(r"(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?", lowered)
    if match:
        value = float(match.group(1).replace(",", "") + (f".{match.group(2)}" if match.group(2) else ""))
        scale = re.search(rf"\b({_SCALE})\b", lowered)
        unit = re.match(r"\s*([a-z]+)\b", lowered[match.end() :])
        factor = _UNIT_FACTORS.get(unit.group(1), 1.0) if unit else 1.0
        return value * (_SCALES[scale.group(1)] if scale else 1.0) * factor
    word = re.search(r"\b(" + "|".join(_NUMBER_WORDS) + r"|once|twice|thrice)\b", lowered)
    if word:
        return float({"once": 1, "twice": 2, "thrice": 3}.get(word.group(1), _NUMBER_WORDS.get(word.group(1), 0)))
    return None


def _value(item: Any, value_type: str) -> tuple[Any, str, float]:
    """(comparable value, as written, confidence) of a reading or a plain answer; value None when none parses."""
    candidates = item.candidates if isinstance(item, Reading) else [Candidate(str(item or ""), 0.5, "", "", value_type)]
    parse = parse_date if value_type == "date" else parse_number
    for candidate in candidates:
        if is_not_found(candidate.answer):
            continue
        value = parse(candidate.answer)
        if value is not None:
            return value, candidate.answer, candidate.confidence
    return None, NOT_FOUND, 0.0


def _lifespans(inputs: list[tuple[str, Any]]) -> list[tuple[str, Any, str, float]]:
    """(label, years lived, as written, confidence) per option, from its birth and death readings in that order."""
    out = []
    for (label, born), (_, died) in zip(inputs[::2], inputs[1::2]):
        (start, start_text, c1), (end, end_text, c2) = _value(born, "date"), _value(died, "date")
        if start is None or end is None:
            out.append((label, None, NOT_FOUND, 0.0))
            continue
        years = (end[0] - start[0]) + (end[1] - start[1]) / 12 + (end[2] - start[2]) / 365
        out.append((label, years, f"{start_text} - {end_text}", min(c1, c2)))
    return out


def _answer_of(item: Any) -> tuple[str, float]:
    if isinstance(item, Reading):
        return item.answer, item.confidence
    text = str(item or "").strip() or NOT_FOUND
    return text, 0.0 if is_not_found(text) else 0.5


def _same(a: str, b: str) -> bool:
    x, y = normalize_name(a), normalize_name(b)
    if not x or not y:
        return False
    date_a = parse_date(a) if DATE.fullmatch(a.strip()) else None
    date_b = parse_date(b) if DATE.fullmatch(b.strip()) else None
    if date_a and date_b:
        return date_a[0] == date_b[0]
    return x == y or x in y.split(" ") or y in x.split(" ") or (len(x) > 3 and len(y) > 3 and (x in y or y in x))


def combine(operation: dict, question: str, inputs: list[tuple[str, Any]]) -> tuple[str, str, float]:
    """The final answer of a compare / choose / both / same / yes_no item from its inputs' readings.

    ``inputs``: (label, Reading or plain answer text) per option, in the operation's label order.
    Returns (answer text, one-line explanation, confidence 0..1). "compare" names the option whose
    date or number is the least ("prefer": "min") or the greatest ("max"); "choose" the option whose
    yes/no reading says yes most surely; "both" says yes when every reading says yes; "same" yes when
    the readings' answers agree; "yes_no" passes one yes/no reading on.
    """
    op = operation.get("op")
    if not inputs:
        return NOT_FOUND, "nothing to combine", 0.0
    if op == "compare":
        value_type = operation.get("value_type", "date")
        values = (
            _lifespans(inputs)
            if value_type == "lifespan"
            else [(label, *_value(item, value_type)) for label, item in inputs]
        )
        known = [v for v in values if v[1] is not None]
        listed = "; ".join(f"{label}: {written}" for label, _, written, _ in values)
        if not known:
            return NOT_FOUND, f"no {value_type} found for any option ({listed})", 0.0
        pick = min if operation.get("prefer", "min") == "min" else max
        winner = pick(known, key=lambda v: v[1])
        ties = [v for v in known if v[1] == winner[1]]
        criterion = operation.get("criterion", "")
        if len(known) < len(values):
            return winner[0], f"{listed}: only {winner[0]} has a {value_type}, a guess", round(0.25 * winner[3], 3)
        if len(ties) > 1:
            return winner[0], f"{listed}: a tie", round(0.3 * min(v[3] for v in known), 3)
        confidence = min(v[3] for v in known)
        return winner[0], f"{listed} -> {winner[0]} is {criterion}".strip(), round(confidence, 3)
    if op == "choose":
        scored = []
        for label, item in inputs:
            answer, confidence = _answer_of(item)
            scored.append(
                (confidence if answer == YES else (1 - confidence) * 0.5 if answer == NO else 0.0, label, answer)
            )
        scored.sort(key=lambda s: -s[0])
        listed = "; ".join(f"{label}: {answer}" for _, label, answer in scored)
        return (
            scored[0][1],
            f"{listed} -> {scored[0][1]}",
            round(scored[0][0] * (1 - (scored[1][0] if len(scored) > 1 else 0) / 2), 3),
        )
    if op == "both":
        answers = [(label, *_answer_of(item)) for label, item in inputs]
        listed = "; ".join(f"{label}: {a}" for label, a, _ in answers)
        if any(is_not_found(a) for _, a, _ in answers):
            missing = [label for label, a, _ in answers if is_not_found(a)]
            return NO, f"{listed}: nothing found about {', '.join(missing)}", 0.3
        yes = all(a == YES for _, a, _ in answers)
        confidence = min(c for _, _, c in answers) if yes else max(c for _, a, c in answers if a == NO)
        return (YES if yes else NO), listed, round(confidence, 3)
    if op == "same":
        answers = [(label, *_answer_of(item)) for label, item in inputs]
        listed = "; ".join(f"{label}: {a}" for label, a, _ in answers)
        if any(is_not_found(a) for _, a, _ in answers):
            return NO, f"{listed}: not every value was found", 0.3
        same = all(_same(answers[0][1], a) for _, a, _ in answers[1:])
        return (YES if same else NO), listed, round(min(c for _, _, c in answers), 3)
    if op == "yes_no":
        answer, confidence = _answer_of(inputs[0][1])
        return answer, f"{inputs[0][0]}: {answer}", confidence
    return NOT_FOUND, f"unknown operation {op!r}", 0.0


@dataclass
class ExtractiveAnswer:
    answer: str
    evidence_ids: list[str]
    sentence: str
    score: float  # the reader's confidence (0..1)
    reading: Reading | None = None  # every candidate, the answer type, and why none when none


def extractive_answer(question: str, evidence: list[Evidence], embedder: Embedder) -> ExtractiveAnswer:
    """The best-supported answer for ``question`` in ``evidence``, or NOT_FOUND."""
    reading = read_answer(question, evidence, embedder)
    best = reading.best
    if best is None:
        return ExtractiveAnswer(NOT_FOUND, [], "", 0.0, reading)
    return ExtractiveAnswer(
        best.answer, [best.evidence_id] if best.evidence_id else [], best.sentence, best.confidence, reading
    )
