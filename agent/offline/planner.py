"""The offline, rule-based planner: decomposition that keeps what the question asks (``rule_based_plan``),
follow-ups resolved against the previous turn (``resolve_follow_up``) and small talk (``small_talk_reply``)."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from agent.offline.chains import KIND_OF_NAME, relation_chain, wh_for
from agent.offline.parsing import parse
from agent.offline.questions import (
    EVENT_VERB,
    LEAD_AUX,
    NAME_PARTICLE,
    PERSON_NOUNS,
    PLACE_NOUNS,
    REFERENCE,
    WHY_QUESTION,
    looks_like_person,
    operation_for,
    operation_subquestions,
    parse_question,
    question_type,
)
from agent.offline.relations import COMPOSITIONS, KINSHIP_WORDS
from agent.plans import (
    DEFAULT_MAX_SUBQUESTIONS,
    looks_abstract,
    plan_event,
    plan_records,
    single_question_plan,
    validate_plan,
)
from agent.records import is_not_found

if TYPE_CHECKING:
    from spacy.tokens import Token

    from agent.offline.parsing import Masked

# --- operations: comparisons, yes/no, summaries ------------------------------------------------------


# --- the offline, rule-based planner ----------------------------------------------------------------

_NAME = r"(?:#\d+|[A-Z\"“][\w'’.\"”-]*(?:\s+(?:(?:of|the|de|and|a|an)\b|[A-Z\"“][\w'’.\"”-]*|\d+))*)"
# "the country Signmark is from", "the company X is part of": a relative clause without "that"
_REDUCED = re.compile(
    rf"\b[Tt]he (?P<noun>[a-z]+) (?P<name>{_NAME}) (?P<aux>is|was|are|were) (?P<rest>from|in|part of|"
    rf"a part of|based in|located in|a member of|(?:a|an|the) (?:sequel|prequel|remake|successor|predecessor) (?:to|of))\b"
)
_CONTAINING = re.compile(  # ... and any verb in "-ing": "the river flowing through X", "the 1946 drama featuring X"
    rf"\b[Tt]he (?P<noun>(?:\d{{4}} )?[a-z]+(?: [a-z]+)?) (?P<verb>[a-z]{{2,}}ing) (?P<prep>(?:through|into|in|on|at|from|for|to|across|"
    rf"along|past|near|with|over|under) )?(?P<name>(?:the (?:[a-z]+ |\d{{4}} )?)?{_NAME})"
    r"(?<!['’]s)(?![\w'’])"  # not a possessive: "bordering Clonbrook's country" borders the country
    r"(?P<side> (?:on|to) the (?:north|south|east|west)\w*)?"  # "bordering X on the east"
)  # "the region containing the fell Knott": a kind before the name is the name's
_NOT_A_NOUN = r"(?:to|be|first|last|only|one|ever)\b"  # "the first to be credited with X", "the highest ... ever"
# "the university attended by X", "the company founded by X": a participle clause with its agent
# ("the 2001 science fiction film made by X": a year and modifiers before the noun)
_BY_AGENT = re.compile(
    rf"\b[Tt]he (?P<noun>(?:\d{{4}} )?(?:(?!{_NOT_A_NOUN})[a-z]+ ){{0,2}}(?!{_NOT_A_NOUN})[a-z]+) (?P<verb>[a-z]+) by "
    rf"(?P<agent>{_NAME})"
)
# "the fairy tale adapted as X", "the song featured in the film X": a participle clause with its object
# (the object may be a part of a named thing: "depicted in Nuovomondo's final sequences", "in the last scenes of X")
# ("the Philadelphia singer featured alongside X on Y": a modifier before the noun, a second place after the object)
_OWNED = rf"{_NAME}(?:(?:(?<=s['’])|(?<=['’]s)) ['‘\"“][^'’\"”?]+['’\"”])?"  # "on Norman Connors' 'Starship'"
_WITH_OBJECT = re.compile(
    rf"\b[Tt]he (?P<noun>(?:[A-Z][a-z]+ )?(?!{_NOT_A_NOUN})[a-z]+(?: (?!{_NOT_A_NOUN})[a-z]+){{0,2}}) (?P<verb>[a-z]+) "
    rf"(?P<prep>as|into|in|on|at|from|for|to|with|alongside) "
    rf"(?P<object>(?:the )?(?:[a-z]+ )?{_OWNED}(?:(?<=['’]s)(?: [a-z]+){{1,2}}(?= [a-z]+\?))?"
    rf"(?: in \d{{4}}| (?:in|on|at) {_OWNED})?|"
    rf"the (?:[a-z]+ ){{1,2}}of {_NAME})"
)
# "the state west of X", "the province to the east of X": a place beside a named one is found first
_SIDE_OF = re.compile(
    rf"\b[Tt]he (?P<noun>[a-z]+) (?:(?:directly|immediately|just) )?(?:to the )?"
    rf"(?P<side>(?:north|south)(?:east|west)?|east|west) of (?P<name>{_NAME})"
)
# "X was born in the capital of which country?": the wh-word asks for what the place is the capital of; first
# the place ("X was born in which city?"), then "#1 is the capital of which country?"
_RELATION_OF_WHICH = re.compile(
    r"\b(?P<phrase>the (?P<relation>(?:[a-z]+ ){0,2}?(?P<head>[a-z]+)) of (?P<wh>which|what) (?P<noun>[a-z]+))\b"
)
_CITY_RELATIONS = {"capital", "seat", "city"}  # the place such a relation is of is a city
# a preposition before a relative pronoun: "the astronomer with whom X discovered a comet"
_RELATIVE_PREPOSITION = "under|for|with|from|by|against|through|during|after|before|behind|beside|near|to"
_PREPOSITION = f"in|at|on|of|{_RELATIVE_PREPOSITION}"  # before a question word: "Under what name did ..."
# (with a proper adjective before the noun: "the Norwegian company that", "the Anglican diocese whose", "the
# former Czech president who")
_RELATIVE = re.compile(
    rf"\b[Tt]he (?P<noun>(?:(?:[a-z]+ )?[A-Z][a-z]+(?:an|ese|ish|ic|ch|i) (?=[a-z]))?[a-z]+(?: (?!(?:in|at|on|of|{_RELATIVE_PREPOSITION})\b)[a-z]+){{0,2}}) "
    rf"(?P<rel>where|in which|at which|on which|(?:{_RELATIVE_PREPOSITION}) (?:whom|which)|whom|who|which|that|whose"
    r"|when) (?P<clause>[^?]+)"
)
_RELATIVE_WORDS = {"where", "which", "that", "who", "whom", "whose", "when"}
_AUX = re.compile(r"\b(was|is|were|are|did|does|do|has|had|have)\b")
_LOCATED = re.compile(
    r"^(?P<subject>.+?) (?:is|was|are|were) (?:located|situated|found|based|headquartered|sited)(?: in)?$"
)
# the verbs after which a relative clause ends ("the area where X is located became a state")
_CLAUSE_END = re.compile(
    r"\b(?:located|situated|found|based|headquartered|born|formed|founded|buried|filmed|held|"
    r"died|studied|grew up|raised|educated|married|signed|recorded|premiered|published|"
    r"established|set)\b(?: in\b)?"
)
# past forms without "-ed" that start a clause ("the city where X grew up")
_IRREGULAR = set(
    """wrote grew won went taught began met built spent became gave made fought ran sang left died lay flew drew
sold held took found""".split()
)
PLACE_WORDS = set(
    """city town village country state province county region district river lake sea island continent
area territory municipality borough nation kingdom valley capital""".split()
)


def _as_verb(word: str) -> Token:
    """The word as the parser reads it in a plain clause, "They <word> it." (parses are kept per text)."""
    return parse(f"They {word.lower()} it.")[1]


def _base_verb(word: str) -> str:
    """The verb's lemma as the parser gives it: "besieged" -> "besiege", "won" -> "win"."""
    token = _as_verb(word)
    return token.lemma_.lower() if token.pos_ in ("VERB", "AUX") else word.lower()


def _present_of(participle: str) -> str | None:
    """The present of a verb's "-ing" form as the parser reads it ("flowing" -> "flows", "hosting" -> "hosts",
    "reaching" -> "reaches"); None for a word that is no verb ("during", "building")."""
    token = _as_verb(participle)
    lemma = token.lemma_.lower()
    if token.pos_ != "VERB" or lemma == participle.lower():
        return None
    if re.search(r"(?:s|sh|ch|x|z|o)$", lemma):
        return lemma + "es"
    return lemma[:-1] + "ies" if re.search(r"[^aeiou]y$", lemma) else lemma + "s"


_ACRONYM = re.compile(r"[A-Z]{2,3}s?")  # "EP", "LPs", "CEO": a common noun written short


def _relative_question(noun: str, rel: str, clause: str) -> str:
    clause = clause.strip().rstrip("?.").strip()
    typed = noun.split()[-1] in PLACE_WORDS
    # "the astronomer with whom X discovered a comet": "the astronomer whom X discovered a comet with"; "in / at / on
    # which" says where only of a place ("the novel on which X is based": "the novel which X is based on")
    stranded = re.fullmatch(rf"({_RELATIVE_PREPOSITION}{'' if typed else '|in|at|on'}) (whom|which)", rel)
    if stranded:
        return _relative_question(noun, stranded.group(2), f"{clause} {stranded.group(1)}")
    if rel == "whose":  # "the film whose director was born in X", "the novelist whose work X is based on"
        return _whose_question(noun, clause)
    if rel == "who":
        return f"Who {clause}?"
    if rel in ("where", "in which", "at which", "on which"):
        return _where_question(noun, rel, clause, typed)
    if rel == "when":
        return _when_question(clause)
    if rel in ("which", "that", "whom") and (question := _object_relative_question(noun, clause)):
        return question
    return f"Which {noun} {clause}?"


def _whose_question(noun: str, clause: str) -> str:
    """ "the film whose director was born in X": "Which film's director was born in X?"."""
    aux = _AUX.search(clause)
    owned = clause[: aux.start()].split() if aux else []
    # (a short word in capitals is the owned noun's: "whose debut EP was X")
    named = next(
        (n for n, w in enumerate(owned) if n > 0 and (w[:1].isupper() and not _ACRONYM.fullmatch(w) or w[:1] == "#")),
        None,
    )
    if aux and named is not None:  # the clause has its own subject after the owned noun
        after = clause[aux.end() :].strip()
        return (
            " ".join(
                f"Which {noun}'s {' '.join(owned[:named])} {aux.group(1)} {' '.join(owned[named:])} {after}".split()
            )
            + "?"
        )
    return f"Which {noun}'s {clause}?"


def _where_question(noun: str, rel: str, clause: str, typed: bool) -> str:
    """ "the city where X was born": "In which city was X born?"; "Where ...?" for a noun that is no place."""
    located = _LOCATED.match(clause)
    if located and typed:
        return f"Which {noun} is {located.group('subject')} in?"
    aux = _AUX.search(clause)
    preposition = "In" if rel in ("where", "in which") else rel.split()[0].capitalize()
    if aux:
        subject, rest = clause[: aux.start()].strip(), clause[aux.end() :].strip()
        if typed:
            return f"{preposition} which {noun} {aux.group(1)} {subject} {rest}?".replace("  ", " ")
        return f"Where {aux.group(1)} {subject} {rest}?".replace("  ", " ")
    words = clause.split()
    verbs = [n for n, w in enumerate(words) if n > 0 and (w.endswith("ed") or w in _IRREGULAR)]
    # a subject with a relative clause of its own ("the band that released X formed"): the clause's verb is the last
    nested = verbs and any(w in ("that", "which", "who") for w in words[: verbs[0]])
    verb_at = (verbs[-1] if nested else verbs[0]) if verbs else None
    if verb_at is not None:
        subject, verb, rest = " ".join(words[:verb_at]), _base_verb(words[verb_at]), " ".join(words[verb_at + 1 :])
        if typed:
            return " ".join(f"{preposition} which {noun} did {subject} {verb} {rest}".split()) + "?"
        return " ".join(f"Which {noun} did {subject} {verb} {rest} at".split()) + "?"
    present = next((n for n, w in enumerate(words) if n > 0 and _present_verb(words, n)), None)
    if present is not None:  # "the observatory where the telescope stands" -> "Where does the telescope stand?"
        subject, rest = " ".join(words[:present]), " ".join(words[present + 1 :])
        asked = f"{preposition} which {noun} does" if typed else "Where does"
        return " ".join(f"{asked} {subject} {words[present][:-1]} {rest}".split()) + "?"
    return f"Where did {clause}?"


def _when_question(clause: str) -> str:
    """A "when" clause as its own question, its past verb in the base form after "did"."""
    aux = _AUX.search(clause)
    if aux:
        return f"When {aux.group(1)} {clause[: aux.start()].strip()} {clause[aux.end() :].strip()}?".replace("  ", " ")
    words = clause.split()
    verb_at = next((n for n, w in enumerate(words) if n > 0 and (w.endswith("ed") or w in _IRREGULAR)), None)
    if verb_at is not None:  # "the year when the opera house opened" -> "When did the opera house open?"
        words[verb_at] = _base_verb(words[verb_at])
    return f"When did {' '.join(words)}?"


def _object_relative_question(noun: str, clause: str) -> str | None:
    """An object relative: "the river which the Tekeze River turns into" -> "Which river does ... turn into?"; None
    when the clause starts with no subject or has no verb to ask with."""
    words = clause.split()
    if not words or not (words[0][:1].isupper() or words[0] in ("the", "a", "an", "his", "her")):
        return None
    lower = [
        n
        for n, w in enumerate(words)
        if n > 0 and w[:1].islower() and w not in _FUNCTION - {"is", "was", "are", "were", "has", "had", "have"}
    ]
    # the subject may be a phrase with nouns of its own ("the director of X worked as ..."): its verb is the
    # first word after it that looks like one
    verb_at = next((n for n in lower if words[n] in _FUNCTION or _looks_verb(words[n])), lower[0] if lower else None)
    if verb_at is not None:
        subject, verb, rest = " ".join(words[:verb_at]), words[verb_at], " ".join(words[verb_at + 1 :])
        if verb in ("is", "was", "are", "were", "has", "had", "have"):
            return " ".join(f"Which {noun} {verb} {subject} {rest}".split()) + "?"
        if _looks_verb(verb):
            return " ".join(f"Which {noun} did {subject} {_base_verb(verb)} {rest}".split()) + "?"
        if verb.endswith("s") and not verb.endswith("ss"):
            base = verb[:-2] if verb.endswith(("ches", "shes", "sses", "xes")) else verb[:-1]
            return " ".join(f"Which {noun} does {subject} {base} {rest}".split()) + "?"
    return None


def _present_verb(words: list[str], n: int) -> bool:
    """Whether ``words[n]`` reads as a verb in the present ("stands", "joins"), not a plural noun before its verb
    ("the brothers live"): nothing, a small word or a name follows it."""
    following = words[n + 1] if n + 1 < len(words) else ""
    return bool(re.fullmatch(r"[a-z]+[^s]s", words[n])) and (
        not following or following in _FUNCTION or not following[:1].islower()
    )


_PARTICIPLES = set(
    """born founded formed established built created released published made written designed
completed opened named located based taken elected discovered invented produced directed owned killed buried
held signed acquired dissolved known given won sold called""".split()
)
_FUNCTION = set(
    """in on at of to for by with from into as the a an and or but that which who where when its his her
their is was are were be been has have had""".split()
)


def _looks_verb(word: str) -> bool:
    return (
        word.endswith("ed")
        or word in _IRREGULAR
        or word in _PARTICIPLES
        or bool(EVENT_VERB.fullmatch(word))
        or _past_form(word)
    )


@functools.lru_cache(maxsize=4096)
def _past_form(word: str) -> bool:
    """Whether the parser reads a lower-case word as a verb's past ("bought", "sought"), in a plain clause."""
    if not word.isalpha() or not word.islower() or word in _FUNCTION:
        return False  # "was", "had": the auxiliaries are read as such
    return _as_verb(word).tag_ in ("VBD", "VBN")


def _cut_clause(rel: str, clause: str, outer: str) -> tuple[str, str]:
    """A relative clause and what follows it in the outer sentence: ``outer`` is the text before the phrase."""
    # a comma ends the clause, unless a side of its verb follows ("borders X, Texas, to the north and east")
    comma = re.search(r",\s+(?=[a-z])(?!(?:on|to) the (?:north|south|east|west))", clause)
    tail = ""
    if comma:
        clause, tail = clause[: comma.start()], clause[comma.start() :]
    words = clause.split()
    aux_match = re.search(rf"\b({LEAD_AUX})\b", outer, re.I)
    outer_aux = (
        aux_match.group(1).lower()
        if aux_match and re.match(rf"^\s*(?:(?:{_PREPOSITION}) )?(?:which|what|who|whom|where|when|how)\b", outer, re.I)
        else None
    )
    outer_at = None if tail or outer.strip() else _outer_verb_at(words)
    if outer_at is not None:  # the phrase is the subject: "The band that released X broke up when?"
        return " ".join(words[:outer_at]), " " + " ".join(words[outer_at:])
    cut = _cut_at_clause_end(rel, clause)
    if cut:
        return cut[0], cut[1] + tail
    if tail:
        return clause, tail
    if outer_aux in ("was", "were", "is", "are"):
        cut = _cut_before_outer_participle(clause)
    elif outer_aux in ("did", "does", "do"):
        cut = _cut_before_outer_verb(rel, clause)
    return cut or (clause, tail)


def _cut_at_clause_end(rel: str, clause: str) -> tuple[str, str] | None:
    """Where the words of a clause end: before the outer sentence's participle after a name ("that produced Fist
    Power taken by the British"), or where the parse-free clause end says."""
    words = clause.split()
    if rel in ("which", "that", "who") and words and words[0][:1].islower() and words[0] not in _FUNCTION:
        # "that produced Fist Power taken by the British": the verb, its object, then the outer sentence's participle
        for after_name in re.finditer(r"\b[A-Z0-9][\w'’.\"”)-]*(?P<space>\s+)(?P<p>[a-z]+)\b", clause):
            if after_name.group("p") in _PARTICIPLES:
                cut = after_name.start("space")
                return clause[:cut], clause[cut:]
    else:
        end = _CLAUSE_END.search(clause)
        if (
            end
            and end.start() > 0
            and end.end() < len(clause.rstrip())
            and clause[end.end() :].split()[0] not in ("by", "on", "at", "as")
            and clause[end.end() :].split()[-1] not in _PREPOSITIONS  # "the man X was married to": one clause
            and not clause[end.end() :].strip()[:1].isupper()  # "born in Paris": the name is the clause's
        ):
            return clause[: end.end()], clause[end.end() :]
    return None


def _cut_before_outer_participle(clause: str) -> tuple[str, str] | None:
    """ "In which city was the founder of the company that made X born?": "born", the last word, is the outer verb
    when the clause has a verb of its own."""
    last = re.search(r"(\S+)\s+([a-z]+)\s*$", clause)
    before = clause[: last.start(2)].split() if last else []
    if (
        last
        # "What is the population of the city where X was founded?": "founded" is the clause's, after its own
        # "was"; in "What is the shore of the lake that X flows into called?" the clause has its own verb (a
        # title's words are not one: "What was the prize that the performer of Changed It won?")
        and last.group(1) not in _BE_OR_HAVE
        and last.group(2) in _PARTICIPLES
        and any(
            w in _BE_OR_HAVE or w.islower() and (_looks_verb(w) or w not in _FUNCTION and _present_verb(before, n))
            for n, w in enumerate(before)
        )
    ):
        return clause[: last.start(2)].rstrip(), " " + last.group(2)
    return None


def _cut_before_outer_verb(rel: str, clause: str) -> tuple[str, str] | None:
    """After "did": the question's own verb, after the clause's verb (and the clause's complements)."""
    words = clause.split()
    if rel != "whose":
        # "What amount did the location where X occur handle in 2010?": "handle ..." is the outer verb (after "whose"
        # the owned noun comes first: "the city whose NBA team drafted X" has its verb second)
        tokens = [(m.start(), m.group(0)) for m in re.finditer(r"\S+", clause)]
        first = next((n for n, (_, w) in enumerate(tokens) if w[:1].islower() and w not in _FUNCTION), None)
        named = first is not None and any(w[:1].isupper() or w[:1].isdigit() for _, w in tokens[:first])
        if named and first is not None and first + 1 < len(tokens):
            position, word = tokens[first + 1]
            if word[:1].islower() and word not in _FUNCTION:
                return clause[:position].rstrip(), " " + clause[position:]
    # "When did the filmmaker that X worked as an assistant to die?", "What year did the team that X played for
    # win the league?": the question's own verb follows the clause's verb and its complements
    outer_at = _outer_verb_at(words)
    if outer_at is not None:
        return " ".join(words[:outer_at]), " " + " ".join(words[outer_at:])
    return None


_DETERMINERS = {"the", "a", "an", "his", "her", "its", "their", "this", "that", "these", "those"}
_PREPOSITIONS = {"in", "on", "at", "to", "for", "with", "from", "by", "as", "under", "into", "of", "about", "against"}


def _after_named_object(words: list[str]) -> int | None:
    """A subject relative ("released Changed It | form"): the outer verb comes after the named object."""
    named = next((n for n, w in enumerate(words) if n > 0 and (w[:1].isupper() or w[:1].isdigit())), None)
    return next(
        (
            n
            for n, w in enumerate(words)
            if named is not None and n > named and w.isalpha() and w.islower() and w not in _FUNCTION
        ),
        None,
    )


def _outer_verb_at(words: list[str]) -> int | None:
    """Where the outer question's verb starts after a relative clause ("<subject> worked as an assistant to | die"):
    after the clause's verb, a content word straight after it or after a stranded preposition; a preposition with a
    determiner, a name or a number after it starts a complement of the clause's own verb, its noun included."""
    verb = next((n for n, w in enumerate(words) if w[:1].islower() and _looks_verb(w)), None)
    if verb is None:
        return None
    if verb == 0:  # a subject relative: "released Changed It | form", "designed the barometer | die"
        after_name = _after_named_object(words)
        if after_name is not None or not words[1:2] or words[1] not in _DETERMINERS:
            return after_name
    n = verb + 1
    while n < len(words):
        word = words[n]
        if word in _DETERMINERS - {"that"}:  # "won the league | die": the verb's object, its noun included
            n += 2
            continue
        if word in _PREPOSITIONS:
            following = words[n + 1] if n + 1 < len(words) else None
            if following is None:
                return None
            if following in _DETERMINERS:
                n += 3  # "as an assistant": the preposition, its determiner and its noun
                continue
            if following[:1].isupper() or following[:1].isdigit():
                n += 2
                continue
            return n + 1
        if word[:1].islower() and word.isalpha() and word not in _FUNCTION:
            return n
        n += 1
    return None


_WH_WORD = re.compile(r"\b(?:who|whom|whose|what|which|when|where|how)\b", re.I)
# "X was founded by an engineer who was born in which city?": a statement introduces something with "a" or "an",
# then the question asks about it. Which one it is comes first, then the question about it.
_INTRODUCED = re.compile(
    r"\b(?:a|an) (?P<noun>(?:(?!(?:a|an)\b)[\w'’-]+ ){0,3}?[a-z][\w'’-]*),? (?P<link>who|that|which|whose|"
    r"from|" + "|".join(sorted(_PARTICIPLES)) + r") (?P<rest>[^?]*)"
)


# "the man Francesca von Habsburg married": a relative clause without "that" (its subject a name, then a verb)
_REDUCED_RELATIVE = re.compile(
    rf"\b[Tt]he (?P<noun>[a-z]+) (?P<name>[A-Z][\w'’.-]*(?:\s+(?:{NAME_PARTICLE}\s+)?[A-Z][\w'’.-]*)*) (?P<verb>[a-z]+)\b"
    r"(?P<rest>[^?]*)\?$"
)
_BE_OR_HAVE = {"is", "was", "are", "were", "has", "had", "have"}
_COPULAR_QUESTION = re.compile(r"^(?:who|what|which \w+) (?:is|was|are|were)\b", re.I)


def _with_relativizer(text: str) -> str:
    """``text`` with "that" put in a relative clause written without it, where the question's own verb is elsewhere:
    "Who is the mother of the man X married?" (a copular question), "When did the man X married die?", "The man X
    married was born where?"."""
    match = _REDUCED_RELATIVE.search(text)
    if not match or match.group("noun") in _FUNCTION:
        return text
    before, rest = text[: match.start()], match.group("rest").split()
    # "When was the school X attended founded?": the question's own participle follows the clause's verb
    undergone = bool(
        re.match(r"^\s*(?:when|where|in (?:which|what) \w+|what year)\s+(?:was|were|is|are)\s+$", before, re.I)
    )
    undergone = undergone and len(rest) == 1 and rest[0] in _PARTICIPLES
    if re.search(r"\b(?:is|was|are|were)\s+$", before) and not undergone:
        return text  # "Which novel is the film X based on?": the phrase is the question's subject
    # "What is the job of the character X plays (in Y)?": a copular question has no verb of its own after the
    # phrase, so a person's verb there is a clause's, to the question's end ("the city X located in Y" is none)
    copular_question = bool(_COPULAR_QUESTION.match(before))
    person_acts = copular_question and looks_like_person(match.group("name"))
    kind_of_name = match.group("noun") in KIND_OF_NAME and not undergone
    clause = _reduced_clause(match.group("verb"), rest, kind_of_name, person_acts)
    if clause is None:
        return text
    after, stranded, present = clause
    when = bool(re.fullmatch(r"(?:in|on|during) (?:the )?\d{4}s?", " ".join(after)))  # "moved to in 1949"
    copular = copular_question and (not after or stranded and (when or person_acts))
    asked = r"^\s*(?:\w+ ){1,3}?(?:did|does|do)\b" if present else r"^\s*\w+ (?:did|does|do)\b"
    outer_verb = bool(re.match(asked, before, re.I)) and len(after) >= 1 and after[-1].islower()
    # "The man X married was the son of which judge?": the phrase is the subject, the question's verb follows it
    subject = not before.strip() and bool(after) and (after[0] in _BE_OR_HAVE or _looks_verb(after[0]))
    if not (copular or outer_verb or subject or undergone):
        return text
    return f"{text[: match.start('name')]}that {text[match.start('name') :]}"


def _reduced_clause(
    verb: str, rest: list[str], kind_of_name: bool, person_acts: bool = False
) -> tuple[list[str], bool, bool] | None:
    """(the words after a relative clause without "that", whether it leaves its preposition behind, whether its
    verb is in the present) for the verb after the clause's subject and the words after it; None when the verb
    does not start such a clause. A verb with its preposition left behind is one in the present too ("the party
    X belongs to"), and one after a kind of name ("the state X moved to in 1949": no name's kind), or a passive
    ("the man X was married to"); so is any where a person acts (``person_acts``: "the character X plays")."""
    passive = verb in ("is", "was", "are", "were") and len(rest) >= 2 and _looks_verb(rest[0])
    passive = passive and rest[1] in _PREPOSITIONS
    stranded = passive or rest[:1] != [] and rest[0] in _PREPOSITIONS
    present = bool(re.fullmatch(r"[a-z]+[^s]s", verb)) and (stranded or person_acts)
    if kind_of_name and not stranded:
        return None
    if not (verb.endswith("ed") or verb in _IRREGULAR or present or passive) or rest[:1] == ["by"]:
        return None
    return (rest[2:] if passive else rest[1:] if stranded else rest), stranded, present


# "What language is spoken where X was recorded?": "where" after a verb, no noun before it, names a place
_FREE_WHERE = re.compile(r"^(?P<outer>(?:what|which|who)\b.*\b[a-z]+(?:ed|en)) where (?P<clause>[^?]+?)\s*\?$", re.I)


def _free_where_split(question: str) -> tuple[str, str] | None:
    """("Where was X recorded?", "What language is spoken in #1?") for a place asked by a clause after "where"."""
    match = _FREE_WHERE.match(question)
    if not match or not _AUX.search(match.group("clause")):
        return None
    return _relative_question("place", "where", match.group("clause")), f"{match.group('outer')} in #1?"


def _introduced_split(question: str) -> tuple[str, str] | None:
    """("... which <noun>?", "#1 <the rest>?") for a question asked about a thing its statement introduces."""
    for match in _INTRODUCED.finditer(question):
        before, rest = question[: match.start()].strip(" ,"), match.group("rest").strip(" ?")
        if not before or _WH_WORD.search(before) or not re.search(r"\b(?:who|whom|what|which|when|where)\b", rest):
            continue  # the question word must ask about the introduced thing, after it
        link = match.group("link")
        about = {"whose": "#1's", "from": "#1 is from"}.get(link) or (
            "#1" if link in ("who", "that", "which") else f"#1 is {link}"
        )
        return f"{before} which {match.group('noun')}?", f"{about} {rest}?"
    return None


def rule_based_plan(
    question: str, max_subquestions: int = DEFAULT_MAX_SUBQUESTIONS, history: list[tuple[str, str]] | None = None
) -> tuple[list[dict[str, Any]], list[str]]:
    """Offline decomposition that keeps what the question asks.

    ``history``: earlier turns as (question, answer), oldest first; a follow-up is first rewritten
    against the last one (``resolve_follow_up``). Then, in order:

    - themes / summary questions: one sub-question routed to community reports, why / how questions
      one on passages (PPR), both with the operation ``{"op": "summarize"}``;
    - comparisons ("Which is older, A or B?"), choices ("Which singer is American, A or B?") and
      yes/no questions about two things ("Are A and B both P?", "... the same nationality?"): one
      parallel sub-question per option and a final item carrying the operation (module docstring);
    - nested questions become a progress chain, innermost first: a relative clause keeps its noun
      ("the country where X is located" -> "Which country is X in?", "the city where X was born" ->
      "In which city was X born?", "the university where X studied" -> "Which university did X
      study at?"), a role of a named thing ("the founder of X", "X's director") becomes "Who is the
      founder of X?", a birthplace ("X's city of birth") "In which city was X born?"; the phrase is
      replaced by a reference ("#1") to that sub-question's answer;
    - otherwise, a statement that introduces something with "a"/"an" and asks about it ("X was founded by
      an engineer who was born in which city?") becomes "X was founded by which engineer?" then "#1 was
      born in which city?".
    """
    question = " ".join(question.split())
    # "X played a sailor in a film; who directed that film?": a statement, then a question that refers back to it
    question = re.sub(
        rf";\s+((?:(?:{_PREPOSITION}) )?(?:who|whom|whose|what|which|when|where|how)\b)",
        lambda m: ". " + m.group(1)[:1].upper() + m.group(1)[1:],
        question,
        flags=re.I,
    )
    notes: list[str] = []
    if history:
        previous_question, previous_answer = history[-1]
        resolved = resolve_follow_up(question, previous_question, previous_answer)
        if resolved != question:
            notes.append(f"follow-up resolved against the previous turn: {resolved!r}")
            question = resolved
    operation = operation_for(question)
    if operation and operation["op"] == "summarize":
        # A reason, or a summary of one named thing, sits in the passages about it; community reports answer
        # questions about the whole corpus (its themes).
        if (WHY_QUESTION.match(question) and not looks_abstract(question)) or _names_something(question):
            item = {**single_question_plan(question, "ppr")[0], "operation": operation}
            return [item], notes + [
                "why/how question or summary of a named thing: one sub-question on passages, answered by a summary"
            ]
        item = {**single_question_plan(question, "community")[0], "kind": "abstract", "operation": operation}
        return [item], notes + ["summary question: one community sub-question, answered by a summary"]
    steps: list[str] = []
    if operation and len(operation.get("labels", [])) >= 2 and max_subquestions >= 3:
        plan, more = _operation_plan(question, operation, max_subquestions)
        return plan, notes + more

    def add(step: str) -> str:
        steps.append(decompose(step))
        return f"#{len(steps)}"

    def decompose(text: str) -> str:
        """Pull out the inner sub-questions of ``text``; returns it with references in their place."""
        text = _with_relativizer(text)
        for _ in range(max_subquestions):
            if len(steps) >= max_subquestions - 1:
                return text
            # "the city in which the company that X founded is based"; "The battle that forced X to ... was part of
            # which war?"; "the Olympics at which X won"
            inner = _innermost_relative(text) or _parsed_relative(text)
            if inner:
                start, end, step = inner
                text = f"{text[:start]}{add(step)}{text[end:]}"
                continue
            match = _RELATIVE.search(text)
            if match and not re.match(r"^\s*(?:who|which|what|where|when)\b", match.group("clause"), re.I):
                cut = _parsed_clause_end(text, match.start("rel"), "relcl")
                if cut is not None and match.start("clause") < cut < match.end():
                    clause, tail = text[match.start("clause") : cut], text[cut : match.end()]
                else:
                    clause, tail = _cut_clause(match.group("rel"), match.group("clause"), text[: match.start()])
                if clause.strip():
                    reference = add(_relative_question(match.group("noun"), match.group("rel"), clause))
                    text = f"{text[: match.start()]}{reference}{tail}{text[match.end() :]}".strip()
                    text = re.sub(r"(#\d+),\s+(?=[a-z])", r"\1 ", text)
                    continue
            match = _REDUCED.search(text)
            if match and not _is_whole(text, match):
                step = f"Which {match.group('noun')} {match.group('aux')} {match.group('name')} {match.group('rest')}?"
                text = text[: match.start()] + add(step) + text[match.end() :]
                continue
            match = _CONTAINING.search(text)
            verb = _present_of(match.group("verb")) if match and match.group("noun") not in _FUNCTION else None
            if match and verb and not _is_whole(text, match):
                # the parse may see the object go on: "the state containing the Lok Sabha constituency of X | formed"
                cut = _parsed_clause_end(text, match.start("verb"), "acl")
                end = cut if cut is not None and cut > match.end() else match.end()
                step = f"Which {match.group('noun')} {verb} {text[match.end('verb') : end].strip()}?"
                text = text[: match.start()] + add(step) + text[end:]
                continue
            match = _BY_AGENT.search(text)
            if match and _looks_verb(match.group("verb")) and not _is_whole(text, match):
                agent = match.group("agent").rstrip(" ,")
                step = f"Which {match.group('noun')} was {match.group('verb')} by {agent}?"
                text = text[: match.start()] + add(step) + text[match.start("agent") + len(agent) :]
                continue
            match = _WITH_OBJECT.search(text)
            if match and match.group("prep") == "as" and re.match(r"the (?:[a-z]+ ){1,2}of ", match.group("object")):
                match = None  # "the man known as the founder of X": a relation, read below
            if match and match.group("prep") == "as" and REFERENCE.fullmatch(match.group("object")):
                # "the person credited as #1" (#1: the editor of X) is #1: credited as the editor is the editor
                text = text[: match.start()] + match.group("object") + text[match.end() :]
                continue
            if match and _looks_verb(match.group("verb")) and not _is_whole(text, match):
                step = f"Which {match.group('noun')} was {match.group('verb')} {match.group('prep')} {match.group('object')}?"
                text = text[: match.start()] + add(step) + text[match.end() :]
                continue
            match = _SIDE_OF.search(text)
            if match and match.group("noun") in PLACE_WORDS and not _is_whole(text, match):
                step = f"Which {match.group('noun')} lies to the {match.group('side')} of {match.group('name')}?"
                text = text[: match.start()] + add(step) + text[match.end() :]
                continue
            split = _relation_of_which(text)
            if split:
                text = f"{add(split[0])} {split[1]}"
                continue
            chain = relation_chain(text)
            if chain and chain.needs_hops:  # "the A of the B of C", "C's B's A", "C's father-in-law"
                text = chain.hops(add)
                continue
            return text
        return text

    linked = _across_sentences(question, add)  # "X founded a company. Who leads that company?"
    if linked is not None:
        notes.append(f"a later sentence refers back to an earlier one: {linked!r} asked last")
    question = linked or question
    final = decompose(question)
    introduced = None if steps else _introduced_split(question) or _free_where_split(question)
    if introduced:
        steps, final = [introduced[0]], introduced[1]
    if not steps:
        return single_question_plan(question), notes + ["no nested clause found: one sub-question"]
    final = " ".join(final.split()).replace(" ?", "?")
    # "What is the award that X received?" leaves "What is #2?": the last step already asks it
    only_the_last = re.fullmatch(rf"(?:what|who|which)\s+(?:is|was|are|were)\s+#{len(steps)}\s*\??", final, re.I)
    questions = steps + ([] if only_the_last else [final if final.endswith("?") else final + "?"])
    items = [{"id": f"q{i}", "question": q, "route": "ppr", "kind": "specific"} for i, q in enumerate(questions, 1)]
    plan, more = validate_plan(items, question, max_subquestions)
    return plan, notes + [f"rule-based plan: {len(plan)} sub-questions"] + more


def _operation_plan(
    question: str, operation: dict[str, Any], max_subquestions: int
) -> tuple[list[dict[str, Any]], list[str]]:
    """One sub-question per option of a comparison / choice / yes-no about two things, then the question with the
    operation that combines their answers. Each option's question is decomposed like any other ("When did the
    director of A die?" is two hops) when the plan has room for every option's hops."""
    subs = operation_subquestions(operation)
    split = []  # (the option's inner hops, its last question with references to them)
    for _, text in subs[: max_subquestions - 1]:
        inner: list[str] = []
        split.append((inner, _decompose_into(inner, text)))
    fits = sum(len(inner) + 1 for inner, _ in split) < max_subquestions
    steps: list[str] = []
    options: list[str] = []
    for (inner, last), (_, text) in zip(split, subs):
        if fits and inner:
            text = _renumbered(last, len(steps))
            steps.extend(_renumbered(step, len(steps)) for step in inner)
        steps.append(text)
        options.append(f"q{len(steps)}")
    items: list[dict[str, Any]] = [
        {"id": f"q{n}", "question": text, "route": "ppr", "kind": "specific"} for n, text in enumerate(steps, 1)
    ]
    public = {k: v for k, v in operation.items() if k not in ("head", "aux", "kind")}
    items.append(
        {
            "id": f"q{len(items) + 1}",
            "question": question,
            "route": "ppr",
            "kind": "specific",
            "depends_on": options,
            "operation": public,
        }
    )
    plan, more = validate_plan(items, question, max_subquestions)
    return plan, [f"rule-based plan: {operation['op']} of {len(subs)} options"] + more


def _innermost_relative(text: str) -> tuple[int, int, str] | None:
    """Where a relative clause holds another ("the city in which the company that X founded is based"), the inner
    one read from the parse, which finds where it ends: (start, end) of its noun phrase in ``text`` and the
    sub-question it asks ("Which company did X found?"). None for a question with one relative clause or none."""
    if not any(w in _RELATIVE_WORDS for w in text.lower().split()[1:]):
        return None  # no relative word after the question word: nothing to parse for (the planner's hot path)
    m = parse_question(text)
    verb = _inner_clause(m)
    return None if verb is None else _clause_step(m, text, verb)


def _parsed_relative(text: str) -> tuple[int, int, str] | None:
    """A relative clause the rules cannot see the end or the noun of, read from the parse: in a statement-shaped
    question that asks last ("The battle that forced X to lift the siege of Y was part of which war?") the clause
    ends before the sentence's own verb, which no list of verbs can say; a clause may describe a name ("the
    Olympics at which X won", "the Crusade in which Y was taken"). None otherwise (the rules read those), or where
    the parse makes the clause's noun the root."""
    if not any(w in _RELATIVE_WORDS for w in text.lower().split()[1:]):
        return None
    statement = not _WH_WORD.match(text)
    m = parse_question(text)
    root = next((t for t in m.doc if t.dep_ == "ROOT"), None)
    if root is None or root.pos_ not in ("VERB", "AUX"):
        return None
    if sum(c.dep_ in ("nsubj", "nsubjpass") for c in root.children) > 1:
        return None  # two subjects: a name after the clause was read as the sentence's ("... film X was awarded")
    for verb in m.doc:
        if verb.dep_ != "relcl" or verb.head.pos_ not in ("NOUN", "PROPN"):
            continue
        # "the Olympics at which", "the Derby that" (not "the periodical X who ...": a person is no "the X")
        on_name = verb.head.text in m.names and any(c.lower_ == "the" for c in verb.head.lefts)
        on_name = on_name and not any(t.lower_ in ("who", "whom", "whose") for t in verb.subtree)
        if not (on_name or statement and max(t.i for t in verb.subtree) < root.i):
            continue
        found = _clause_step(m, text, verb)
        if found and (on_name or not _WH_WORD.search(text[: found[0]]) and _WH_WORD.search(text[found[1] :])):
            return found
    return None


def _clause_step(m: Masked, text: str, verb: Token) -> tuple[int, int, str] | None:
    """(start, end) in ``text`` of the noun phrase a relative clause (its verb ``verb``) describes, and the
    sub-question the clause asks; None where the clause has no relative word first or the parse split it oddly."""
    noun, words = verb.head, sorted(verb.subtree, key=lambda t: t.i)  # "that" hung on a stranded "to" comes late
    at = next((n for n, t in enumerate(words) if t.lower_ in _RELATIVE_WORDS - {"whose"}), None)
    if at is None or at > 1:
        return None
    rel = " ".join(t.lower_ for t in words[: at + 1])
    clause = m.span_text(words[at + 1 :])
    modifiers = [t for t in noun.lefts if t.dep_ in ("compound", "amod")]
    phrase = m.span_text([*modifiers, noun])
    first, last = noun.left_edge, words[-1]
    start, end = _char_start(m, text, first), _char_start(m, text, last) + len(m.text_of(last))
    if start < 0 or end <= start:
        return None
    return start, end, _relative_question(phrase, rel, clause)


def _parsed_clause_end(text: str, start: int, dep: str) -> int | None:
    """Where the parse ends the clause (a ``dep``: "relcl", "acl") whose first word starts at ``start`` in ``text``:
    the end of its verb's subtree, where the outer question's verb follows ("When did the country that borders
    Latvia to the north | adopt the euro?"). None where the parse does not say: the clause runs to the question's
    end (the outer participle may be read into it: "... the company that made X born?") or what follows is no
    outer verb (a title's words: "... play in Along Came | a Spider work?")."""
    m = parse_question(text)
    for verb in m.doc:
        if verb.dep_ != dep:
            continue
        words = sorted(verb.subtree, key=lambda t: t.i)
        if _char_start(m, text, words[0]) != start:
            continue
        last = max(t.i for t in words if not t.is_punct)
        if last + 1 >= len(m.doc):
            return None
        after = m.doc[last + 1]
        outer_verb = after.is_lower and after.lemma_ != "be"  # "... the film X | is a sequel to": the clause's
        outer_verb = outer_verb and (
            after.dep_ == "ROOT" or after.pos_ == "ADV" or after.head.dep_ == "ROOT" and after.dep_ in _CLAUSES
        )
        return _char_start(m, text, m.doc[last]) + len(m.text_of(m.doc[last])) if outer_verb else None
    return None


_CLAUSES = {"advcl", "xcomp", "ccomp"}


def _inner_clause(m: Masked) -> Token | None:
    """The verb of a relative clause inside another, itself holding none; both definite descriptions ("the company
    that ..."). None for one clause, none, or clauses side by side ("a series that ..., a jumper who ...")."""
    clauses = [
        t for t in m.doc if t.dep_ == "relcl" and t.head.pos_ == "NOUN" and any(c.lower_ == "the" for c in t.head.lefts)
    ]
    inside = [c for c in clauses if any(o is not c and c in o.subtree for o in clauses)]
    return next((c for c in inside if not any(o is not c and o in c.subtree for o in clauses)), None)


def _char_start(m: Masked, text: str, token: Token) -> int:
    """Where ``token`` of the masked parse starts in the original ``text`` (names were replaced by placeholders)."""
    before = m.span_text(list(token.doc[: token.i])) if token.i else ""
    return text.find(m.text_of(token), len(before) - 2 if before else 0)


_DEMONSTRATIVE = {"that", "this", "these", "those"}
_INDEFINITE = {"a", "an", "another", "one", "some"}


def _referring_phrase(token: Token) -> tuple[int, list[Token]] | None:
    """(first token index, the nouns it may end on, the longest first) of a phrase that refers back starting at
    ``token``: "that city", "this port city", "the same company". Read from the words, not the parse: the small
    model parses "that opera premiere" as one noun and "was that engineer born" with a conjunction."""
    doc, at = token.doc, token.i + 1
    if token.lower_ == "the" and at < len(doc) and doc[at].lower_ == "same":
        at += 1
    elif token.lower_ not in _DEMONSTRATIVE:
        return None
    nouns = [t for t in doc[at : at + 3] if t.pos_ in ("NOUN", "ADJ", "VERB") and t.is_alpha]
    return (token.i, nouns[::-1]) if nouns and nouns[0].i == at else None


def _is_indefinite(noun: Token) -> bool:
    return any(c.dep_ == "det" and c.lower_ in _INDEFINITE for c in noun.lefts)


def _described(noun: Token) -> Token:
    """What an earlier sentence's noun stands for: the subject it describes ("X is an opera": X), else itself ("There
    is a city": the city)."""
    if noun.dep_ == "attr" and not any(c.dep_ == "expl" for c in noun.head.children):
        return next((c for c in noun.head.children if c.dep_ in ("nsubj", "nsubjpass")), noun)
    return noun


def _antecedent(noun: Token, before: int) -> Token | None:
    """The last noun before token ``before`` written as ``noun`` ("a port city" for "that city"); for "this man" or
    "that person", the last person ("the father of X")."""
    anyone = noun.lemma_ in ("man", "woman", "person")
    for token in reversed(noun.doc[:before]):
        if token.pos_ == "NOUN" and (token.lower_ == noun.lower_ or token.lemma_ == noun.lemma_):
            return _described(token)
        if anyone and token.pos_ == "NOUN" and _is_person(token):
            return _described(token)
    return None


def _phrase_end(noun: Token) -> int:
    """The last token of the noun phrase ``noun`` heads, its relative clause included even where the parser hung
    the clause on another word ("Think of the opera house where X premiered.")."""
    end = noun.right_edge.i
    doc = noun.doc
    if end + 1 < noun.sent.end and doc[end + 1].lower_ in _RELATIVE_WORDS:
        end = next((t.i - 1 for t in doc[end + 1 : noun.sent.end] if t.text == ","), noun.sent.end - 1)
    while end > noun.i and doc[end].text in ".,;:!?":
        end -= 1
    return end


_PRONOUN_KIND = {
    **dict.fromkeys(("he", "she", "him", "his", "her"), "person"),
    **dict.fromkeys(("it", "its"), "thing"),
    "there": "place",
}


def _pronoun_antecedent(m: Masked, token: Token, before: int) -> Token | None:
    """What a pronoun refers to: a thing an earlier sentence introduced ("X founded a company. Who leads it?"), else
    the subject of the sentence before ("The Selva rises in the Brannic Mountains. Where does it reach the sea?");
    a person for "he" or "his", a place for "there", anything else for "it"."""
    kind = _PRONOUN_KIND.get(token.lower_)
    if kind is None or token.dep_ == "expl" or token.pos_ != ("ADV" if kind == "place" else "PRON"):
        return None
    if token.tag_ == "PRP$" and any(
        t.dep_ in ("nsubj", "nsubjpass") and _is_person(t) == (kind == "person")
        for t in token.doc[token.sent.start : token.i]
    ):
        return None  # its own sentence's subject: "What character makes his first appearance in X?"
    for noun in reversed(token.doc[:before]):
        if noun.pos_ == "NOUN" and _is_indefinite(noun) and _is_person(noun) == (kind == "person"):
            if kind != "place" or noun.lemma_ in PLACE_NOUNS:
                return _described(noun)
    topic = _topic(token.doc[before - 1].sent)
    if topic is None or kind == "place":
        return None
    if topic.text in m.names:  # a name agrees unless the entity tagger says otherwise
        tagged = m.written_entities().get(m.names[topic.text])
        return topic if tagged is None or (tagged == "PERSON") == (kind == "person") else None
    return topic if _is_person(topic) == (kind == "person") else None


def _is_person(token: Token) -> bool:
    """A noun (or pronoun) for a person: "director", "grandfather", "who", "he"."""
    lemma = token.lemma_.lower()
    return lemma in PERSON_NOUNS or lemma in KINSHIP_WORDS or lemma in COMPOSITIONS or lemma in ("who", "he", "she")


def _topic(sentence: Any) -> Token | None:
    """What a sentence is about: its subject, or what an imperative points at ("Think of X.", "Consider X.")."""
    words = [t for t in sentence if t.pos_ in ("NOUN", "PROPN")]
    subject = next((t for t in words if t.dep_ in ("nsubj", "nsubjpass")), None)
    if subject is None and sentence.root.pos_ == "VERB" and sentence.root.i == sentence.start:
        return next((t for t in words if t.dep_ in ("dobj", "pobj") and t.head.i <= sentence.root.i + 1), None)
    return subject


def _as_written_at(m: Masked, token: Token, last: int, said: str, phrase: bool) -> tuple[int, str]:
    """What refers back (``said``: "#1", a name or a ``phrase``) as the referring words ``token``..``last`` stood:
    "its" -> "#1's", "there" -> "in #1", "her father" -> "the father of the composer of X": (last token, text)."""
    if token.tag_ == "PRP$":
        if phrase and token.head.i > token.i:
            said = re.sub(r"^(The|A|An) ", lambda d: d.group(1).lower() + " ", said)
            return token.head.i, f"the {m.span_text(list(token.doc[token.i + 1 : token.head.i + 1]))} of {said}"
        return last, f"{said}'s"
    if token.lower_ == "there" and token.i and token.nbor(-1).pos_ != "ADP":
        return last, f"in {said}"
    return last, said


def _introduced(m: Masked, noun: Token) -> tuple[int, str]:
    """(index of the article, the words after it up to the noun) of a noun introduced with "a": "a port city" ->
    "port city"."""
    first = min(c.i for c in noun.lefts if c.dep_ == "det")
    return first, m.span_text(list(m.doc[first + 1 : noun.i + 1]))


def _asking_for(m: Masked, noun: Token, sentence: Any) -> str | None:
    """The question a statement that introduces ``noun`` asks, where it is not the statement with "which" in place of
    "a": "There is a country where X ..." -> "In which country ...?", "There is a town on Y" -> "Which town is on
    Y?", "X has a sequel" -> "What is the sequel of X?", "X had a paternal grandfather" -> "Who is the paternal
    grandfather of X?"."""
    phrase = _introduced(m, noun)[1]
    verb = noun.head
    subject = next((c for c in verb.lefts if c.dep_ == "nsubj"), None)
    if verb.lemma_ == "have" and noun.dep_ == "dobj" and subject is not None and noun.i == noun.right_edge.i:
        owner = m.span_text(list(m.doc[subject.left_edge.i : subject.right_edge.i + 1]))
        return f"{'Who' if _is_person(noun) else 'What'} is the {phrase} of {owner}?"
    there = m.doc[sentence.start]
    if there.lower_ != "there" or there.dep_ != "expl":
        return None
    after = m.span_text(list(m.doc[noun.i + 1 : sentence.end])).rstrip(" .?!")
    relative = re.match(r"^(where|in which|at which|on which|whom|who|which|that|whose|when) (.+)$", after)
    if relative:
        return _relative_question(phrase, relative.group(1), relative.group(2))
    return f"Which {phrase} {there.head.text} {after}?"


def _across_sentences(question: str, add: Callable[[str], str]) -> str | None:
    """The last sentence of a question asked in several, with what it refers back to in its place: a thing an
    earlier sentence introduces ("X was born in a city. Which river flows through that city?") becomes a hop of
    its own ("X was born in which city?", then "Which river flows through #1?"; a pronoun may refer to it: "Who
    leads it?"); a thing an earlier sentence names in full ("Think of the city where X was born. ... this
    city?") is written out. None when no sentence refers back; ``add`` makes a hop and returns its reference."""
    m = parse_question(question)
    sentences = list(m.doc.sents)
    if len(sentences) < 2:
        return None
    links: list[tuple[int, int, Token]] = []  # (first, last token) of a referring phrase, its antecedent noun
    asks_for: dict[int, Token] = {}  # sentence start -> the noun introduced there that a later one refers to
    for sentence in sentences[1:]:
        for token in sentence:
            found = _referring_phrase(token)
            first, nouns = found or (token.i, [])
            noun, antecedent = next(((n, a) for n in nouns if (a := _antecedent(n, sentence.start))), (token, None))
            if antecedent is None and (antecedent := _pronoun_antecedent(m, token, sentence.start)) is None:
                continue
            if _is_indefinite(antecedent):
                if asks_for.setdefault(antecedent.sent.start, antecedent) is not antecedent:
                    continue  # one question per sentence
            links.append((first, noun.i, antecedent))
    if not links:
        return None
    written: dict[int, tuple[int, str]] = {}  # first token -> (last token, what is written instead)
    for noun in asks_for.values():
        first, words = _introduced(m, noun)
        written[first] = (noun.i, f"which {words}")

    def text(first: int, last: int) -> str:
        out, i = "", first
        while i <= last:
            end, instead = written.get(i, (i, m.text_of(m.doc[i])))
            out += instead + m.doc[end].whitespace_
            i = end + 1
        return out.strip()

    refs: dict[int, str] = {}  # antecedent token -> the hop that answers it ("#1")
    for sentence in sentences:
        for first, last, antecedent in links:
            if sentence.start <= first < sentence.end:
                said = refs.get(antecedent.i) or text(antecedent.left_edge.i, _phrase_end(antecedent))
                phrase = antecedent.i not in refs and antecedent.text not in m.names
                written[first] = _as_written_at(m, m.doc[first], last, said, phrase)
        said = text(sentence.start, sentence.end - 1).rstrip(" .?!")
        if sentence is sentences[-1]:
            return said + "?"
        if (introduced := asks_for.get(sentence.start)) is not None:
            refs[introduced.i] = add(_asking_for(m, introduced, sentence) or said[:1].upper() + said[1:] + "?")
    return None


def _decompose_into(steps: list[str], text: str) -> str:
    """``text`` with its relation chain pulled out into ``steps`` (each hop's answer referred to as "#n")."""
    chain = relation_chain(text)
    if not chain or not chain.needs_hops:
        return text

    def add(step: str) -> str:
        steps.append(step)
        return f"#{len(steps)}"

    return " ".join(chain.hops(add).split()).replace(" ?", "?")


def _renumbered(text: str, offset: int) -> str:
    """``text`` with its references "#n" moved by ``offset`` (hops written alone, placed after earlier steps)."""
    return re.sub(r"#(\d+)", lambda match: f"#{int(match.group(1)) + offset}", text)


def _names_something(question: str) -> bool:
    """Whether the question names a particular thing (a proper noun in its parse), not the corpus as a whole."""
    return any(token.pos_ == "PROPN" for token in parse(question))


def _relation_of_which(text: str) -> tuple[str, str] | None:
    """("X was born in which city?", "is the capital of which country?") for "X was born in the capital of which
    country?" (and "In the capital of which country was X born?"): a place the question says something of, then
    what it is the relation of. None when the text only asks the relation ("#1 is the capital of which ...")."""
    match = _RELATION_OF_WHICH.search(text)
    if not match or match.group("head") not in PLACE_NOUNS:  # (a capital, a seat, a city)
        return None
    before = text[: match.start()]
    if re.match(r"\s*(?:who|what|which|where|when|how)\b", before, re.I):
        return None  # a question that asks something else too
    if not re.search(r"\b(?:in|from|at|near|to|into|on)\s+$", before, re.I) or re.fullmatch(
        rf"\s*{REFERENCE.pattern}\s+(?:is|was|are|were)\s+(?:in|at|on)?\s*", before
    ):
        return None
    place = "city" if match.group("head") in _CITY_RELATIONS else "place"
    step = f"{before}which {place}{text[match.end() :]}".strip()
    return step[:1].upper() + step[1:], f"is the {match.group('relation')} of which {match.group('noun')}?"


def _is_whole(text: str, match: re.Match) -> bool:
    """The question is only "Who/What is <the phrase>?": nothing to pull out."""
    before = text[: match.start()].strip().lower()
    after = text[match.end() :].strip(" ?")
    return (
        before in ("who is", "who was", "who are", "who were", "what is", "what was", "where is", "where was")
        and not after
    )


# --- conversation: follow-ups and small talk -----------------------------------------------------------

_LEADING = re.compile(r"^\s*(?:(?:and|so|but|also|then|ok|okay|well|now)\b[,\s]*)+", re.I)
_WHAT_ABOUT = re.compile(r"^\s*(?:and\s+)?(?:what|how)\s+about\s+(?P<x>.+?)\s*\??$", re.I)


def _main_entity(question: str) -> str | None:
    from graph_store.extraction import find_entity_mentions  # langchain loads with it: not at import

    names = [n for _, _, n in find_entity_mentions(question) if n.lower() not in ("and", "who", "what")]
    return max(names, key=len) if names else None


def _person_phrase(question: str) -> str | None:
    """A person the question names or describes: "the founder of Halvard Instruments", "Edda Morlund"."""
    from graph_store.extraction import find_entity_mentions  # langchain loads with it: not at import

    chain = relation_chain(question)
    if chain and wh_for(chain.relations[0]) == "Who":  # "the founder of Halvard Instruments"
        return chain.phrase
    people = [n for _, _, n in find_entity_mentions(question) if looks_like_person(n)]
    return people[0] if people else None


def resolve_follow_up(question: str, previous_question: str | None, previous_answer: str | None) -> str:
    """``question`` rewritten to stand alone, against the previous turn (question and answer).

    "he / she / him / her" -> the previous answer when it was a person, else the person the previous
    question named or described ("the founder of X"); "his / her" -> that person's; "it / its" -> the
    previous answer (or main entity) when it is not a person; "there" -> "in <previous place>";
    "What about Y?" -> the previous question about Y instead of its main entity; "And when?" -> the
    previous question asked with "when". A question that already stands alone comes back unchanged
    (without a leading "And").
    """
    text = " ".join(question.split())
    if not previous_question:
        return text
    answer = (
        previous_answer
        if previous_answer and not is_not_found(previous_answer) and len(previous_answer.split()) <= 8
        else None
    )
    previous_type = question_type(previous_question).type
    main = _main_entity(previous_question)
    stripped = _LEADING.sub("", text).strip()
    stripped = stripped[:1].upper() + stripped[1:] if stripped else stripped

    about = _WHAT_ABOUT.match(text)
    if about and main:
        replacement = about.group("x").strip()
        return " ".join(re.sub(re.escape(main), replacement, previous_question, count=1).split())

    person = answer if previous_type == "person" and answer else _person_phrase(previous_question) or answer
    thing = (
        answer
        if previous_type not in ("person", "date", "year", "number", "yes/no", "explanation") and answer
        else main
    )
    place = answer if previous_type == "place" and answer else thing

    def possessive(name: str | None) -> str | None:
        return None if not name else f"{name}'" if name.endswith("s") else f"{name}'s"

    def pronoun(match: re.Match) -> str:
        word = match.group(0)
        lower = word.lower()
        following = text_rest[match.end() :].lstrip()
        next_word = following.split()[0].lower().strip("?,.") if following.split() else ""
        replacement = None
        if lower in ("he", "she", "him"):
            replacement = person
        elif lower == "her":
            is_possessive = next_word and next_word not in _STOP_AFTER_HER
            replacement = possessive(person) if is_possessive else person
        elif lower in ("his", "hers"):
            replacement = possessive(person)
        elif lower == "it":
            replacement = thing
        elif lower == "its":
            replacement = possessive(thing)
        elif lower in ("they", "them"):
            replacement = answer or main
        elif lower == "their":
            replacement = possessive(answer or main)
        elif lower == "there":
            before = text_rest[: match.start()].rstrip().split()
            replacement = (
                place
                if before and before[-1].lower() in ("from", "in", "at", "to", "near")
                else (f"in {place}" if place else None)
            )
        return replacement or word

    text_rest = stripped
    resolved = re.sub(r"\b(?:he|she|him|her|his|hers|it|its|they|them|their|there)\b", pronoun, stripped, flags=re.I)
    if resolved != stripped:
        return resolved
    bare = re.fullmatch(
        r"(?P<wh>when|where|why|how|who|which|what)(?:\s+(?:was|is|did|does)\s+(?:that|this))?\s*\??", stripped, re.I
    )
    if bare:
        wh = bare.group("wh").capitalize()
        swapped = re.match(rf"^\s*(?:who|what|where|when|which)\s+(?P<rest>{LEAD_AUX}\b.+)$", previous_question, re.I)
        if swapped and previous_type != "person":
            return f"{wh} {swapped.group('rest')}"
        subject_question = re.match(r"^\s*(?:who|what)\s+(?P<rest>.+?)\??$", previous_question, re.I)
        if subject_question and answer:
            return f"{wh} was it that {answer} {subject_question.group('rest')}?"
        return f"{wh}: {previous_question.rstrip('?')}?"
    return stripped if stripped != text else text


_STOP_AFTER_HER = set(
    """in on at to from by with for of and or as than when where after before during a an the
born buried married""".split()
)

_GREETING = re.compile(
    r"^\s*(?:hi|hello|hey|hiya|howdy|greetings|good (?:morning|afternoon|evening|day)|yo)\b"
    r"(?:\s+(?:there|everyone|all|kgrag|bot))?[\s!.,?]*$",
    re.I,
)
_THANKS = re.compile(
    r"^\s*(?:(?:ok(?:ay)?|great|cool|perfect|nice)[,!. ]+)?(?:thanks|thank you|thx|cheers|"
    r"many thanks)\b[\w\s!.,]*$",
    re.I,
)
_WHO_ARE_YOU = re.compile(
    r"^\s*(?:who|what) are you\b|^\s*what can you (?:do|answer)\b|^\s*what do you do\b|"
    r"^\s*help\s*[!?.]*$|^\s*how does this work\s*\??$|^\s*how can you help\b",
    re.I,
)
_BYE = re.compile(r"^\s*(?:bye|goodbye|see you|good night)\b[\s!.,]*$", re.I)
WHAT_I_ANSWER = (
    "I answer questions about the documents in this index: who did what, where and when, "
    "questions that need several steps, comparisons, yes/no questions and summaries, "
    "each with the passages it rests on."
)


def small_talk_reply(question: str) -> str | None:
    """A short reply to greetings, thanks, "who are you" and goodbyes; None for a real question."""
    text = " ".join((question or "").split())
    if not text or len(text.split()) > 8:
        return None
    if _GREETING.match(text):
        return f"Hello! {WHAT_I_ANSWER} Ask me something about them."
    if _THANKS.match(text):
        return "You're welcome. Ask me another question about the documents whenever you like."
    if _WHO_ARE_YOU.match(text):
        return f"I am kgrag, a question-answering assistant. {WHAT_I_ANSWER}"
    if _BYE.match(text):
        return "Goodbye!"
    return None


def offline_first_plan_event(question: str) -> dict:
    """The plan event an offline run streams for the first question of a conversation: what its plan node
    computes, available without the graph stack (the CLI shows it while LangGraph loads)."""
    items, notes = rule_based_plan(question.strip())
    return plan_event("rule-based", notes, plan_records(items, turn=1))
