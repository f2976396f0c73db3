"""What an offline question asks: its answer type (``question_type``) and the operation it asks for
(``operation_for``: a comparison, a choice, a yes/no about two things, a summary), with the sub-questions
each operation needs (``operation_subquestions``). The planner and the reader both start from here.

Operations (the plan item's ``depends_on`` are its inputs, in ``labels`` order; ``agent.offline.reader.combine``
computes the answer from their readings):

- ``{"op": "compare", "criterion": "older", "prefer": "min"|"max", "value_type": "date"|"number",
  "labels": [A, B]}``: each input reads a date or number of one option; the answer names the option
  with the least ("min": older, earlier, first, smaller) or greatest ("max") value.
- ``{"op": "choose", "property": "American", "labels": [A, B]}``: each input is a yes/no reading
  ("Is A American?"); the answer names the option that has the property.
- ``{"op": "both", "property": "film directors", "labels": [A, B]}``: yes when every input says yes.
- ``{"op": "same", "attribute": "nationality", "labels": [A, B]}``: each input reads the attribute of
  one option; yes when the values agree.
- ``{"op": "yes_no", "labels": [A]}``: one yes/no reading passed on.
- ``{"op": "summarize"}``: a themes / summary question: one sub-question routed to community
  reports; a why / how question: one sub-question on passages (PPR); both answered by
  ``agent.offline.reader.extractive_summary``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from agent.plans import looks_abstract

YES, NO = "yes", "no"


PERSON_NOUNS = set(
    """person people man woman men women actor actress singer writer author novelist poet director
player president king queen emperor prince princess artist musician composer politician architect astronomer
engineer founder cofounder leader producer wife husband spouse father mother son daughter brother sister child
children parent sibling member scientist painter coach manager ceo executive officer minister governor mayor
chancellor senator judge bishop pope saint lyricist rapper guitarist drummer vocalist frontman footballer
cricketer boxer wrestler athlete owner inventor discoverer designer creator performer character chairman
chairwoman dancer comedian host presenter journalist editor publisher philosopher physicist chemist
mathematician economist historian biologist explorer general admiral commander soldier monarch ruler
successor predecessor""".split()
)


PLACE_NOUNS = set(
    """place city town village country state province county region district river lake sea ocean
island continent mountain location capital area territory municipality borough neighbourhood neighborhood
suburb street port nation kingdom birthplace hometown valley peninsula bay waterfall desert forest
township parish commune prefecture canton republic colony empire archipelago strait gulf coast shore
headquarters""".split()
)


ORG_NOUNS = set(
    """company corporation firm band group team club university college school label party
organisation organization association publisher network channel airline manufacturer institution agency
league army navy business brand studio society union church order dynasty newspaper""".split()
)


WORK_NOUNS = set(
    """film movie song album book novel opera play series show episode game poem painting single
work programme program documentary sitcom musical symphony magazine journal comic manga anime ballet
sculpture franchise soundtrack publication periodical""".split()
)


DATE_NOUNS = {
    "year": "year",
    "date": "date",
    "day": "date",
    "month": "date",
    "century": "date",
    "decade": "date",
    "era": "date",
}


NUMBER_NOUNS = set(
    """number amount population percentage percent proportion share total count length height
size distance depth width weight capacity snowfall rainfall precipitation temperature elevation altitude speed
budget revenue cost salary income attendance debt price value age score""".split()
)


CATEGORY_NOUNS = {"person": PERSON_NOUNS, "place": PLACE_NOUNS, "organisation": ORG_NOUNS, "work": WORK_NOUNS}


# Descriptors that say a name is a person without naming a category noun ("an American astronomer" says it).
OCCUPATION = re.compile(r"(?:ist|ian|er|or|ess|ant|ent)$")


# Name shapes: a word in the name that says its category.
SHAPE_WORDS = {
    "place": set(
        """river lake mount mountains mountain island islands county city town village province state
        district sea ocean bay valley falls street avenue road park square bridge airport port harbour harbor
        republic kingdom township parish peninsula coast beach desert forest hills""".split()
    ),
    "event": set(
        """war battle siege revolution election olympics championship championships cup festival treaty
        act award prize tournament games rebellion massacre crisis expedition""".split()
    ),
    "organisation": set(
        """university college school academy institute records company corporation inc ltd
        llc co group party association society club fc band orchestra church council committee foundation
        bank airlines airways agency museum league federation union ministry department press studios
        entertainment network channel""".split()
    ),
}


AUXILIARY = r"(?:is|was|are|were|did|does|do|has|had|have|can|could|will|would|should|shall|may|might|must)"


_WH_START = re.compile(
    rf"^\s*(?:(?:and|so|but|also|then|in|on|at|from|to|for|by|of|with|during|since|until)\s+)*"
    rf"(?:(?:which|what|whose)\b|who\b|whom\b|when\b|where\b|why\b|how\b|{AUXILIARY}\b)",
    re.I,
)


_DATE_Q = re.compile(
    r"^(?:.*\b)?(?:when|what (?:year|date|day|month|century|decade)|which (?:year|date|day|month|"
    r"century|decade)|since when|until when|how long ago)\b|\bwhen\s*\??$",
    re.I,
)


_NUMBER_Q = re.compile(
    r"\bhow (?:many|much|long|old|tall|high|far|big|large|deep|wide|heavy|often|fast)\b|"
    r"\bwhat (?:is |was |are |were )?(?:the )?(?:percentage|percent|proportion|amount|number|"
    r"population|total|share|length|height|size|distance|depth|area|capacity)\b",
    re.I,
)


_COUNTED = re.compile(r"\bhow many (?:more |different |of the )?((?:[a-z-]+ ){0,1}[a-z-]+)", re.I)


_EXPLAIN_Q = re.compile(
    r"^\s*(?:(?:and|so|but)\s+)?(?:why\b|how come\b|how (?:do|does|did|is|are|was|were|can|could|has|have)"
    r"\b(?! many| much)|what (?:are|were) (?:the )?(?:main|major|key|common|recurring)\b|"
    r"summari[sz]e\b|give (?:me )?an overview\b|what (?:is|was) the (?:reason|purpose|cause)\b)",
    re.I,
)


_NOUN_AFTER_WH = re.compile(
    r"\b(?:which|what)\s+(?:(?:is|was|are|were)\s+)?(?:(?:the|a|an)\s+)?"
    r"(?:(?:kind|type|sort|form|name|names)\s+of\s+(?:the\s+|a\s+|an\s+)?)?"
    r"((?:[a-z][\w'’-]*\s+){0,2}[a-z][\w'’-]*)",
    re.I,
)


_NOT_NOUNS = set(
    """is was are were did does do has had have can could will would should the a an of in on at to
from by for that this these those it its his her their he she they there kind type sort name""".split()
)


@dataclass(frozen=True)
class QuestionType:
    """What a question asks for: a type, the noun of a "which X", whether a number keeps its unit."""

    type: str  # person|place|organisation|date|year|number|work|thing|yes/no|comparison|explanation|other
    noun: str | None = None
    focus: str = ""  # the sentence of the question that asks (a long question may state facts first)
    counted: str | None = None  # "stores" in "how many stores": its number is written without the unit


def focus_sentence(question: str) -> str:
    """The part of a question that asks: the last sentence that starts with (or ends on) a question word."""
    text = " ".join(question.split())
    parts = [p.strip() for p in re.split(r"(?<=[.?!])\s+(?=[A-Z])", text) if p.strip()]
    for part in reversed(parts):
        if _WH_START.match(part) or re.search(r"\b(?:who|what|when|where|which|whom|how)\s*\?\s*$", part, re.I):
            return part
    return parts[-1] if parts else text


def _noun_category(noun: str) -> str | None:
    for word in reversed(noun.lower().split()):
        word = word.rstrip("s") if word.rstrip("s") in ALL_NOUNS and word not in ALL_NOUNS else word
        if word in DATE_NOUNS:
            return DATE_NOUNS[word]
        for category, nouns in CATEGORY_NOUNS.items():
            if word in nouns:
                return category
        if word in NUMBER_NOUNS:
            return "number"
    return None


ALL_NOUNS = PERSON_NOUNS | PLACE_NOUNS | ORG_NOUNS | WORK_NOUNS | NUMBER_NOUNS | set(DATE_NOUNS)


def _which_noun(focus: str) -> str | None:
    """The noun of "which river", "what kind of university", "the name of the airport", "city of birth"."""
    first = None
    for start in re.finditer(r"\b(?:which|what)\b", focus, re.I):
        match = _NOUN_AFTER_WH.match(focus, start.start())
        if not match:
            continue
        words = [w for w in match.group(1).split() if not w[:1].isupper()]  # not a name ("What was Gisvi's city")
        words = [w.lower() for w in words]
        while words and words[0] in _NOT_NOUNS:
            words.pop(0)
        if words and words[0] in ("for", "about", "with", "by", "in", "on", "at", "from", "to", "as", "of"):
            continue  # "starred in what for seven years": no noun follows the question word
        words = [w for w in words if w not in _NOT_NOUNS]
        if not words:
            continue
        for word in words:  # the head noun: the first known noun, else the first word of the first match
            singular = word[:-1] if word.endswith("s") and word[:-1] in ALL_NOUNS else word
            if singular in ALL_NOUNS:
                return singular
        first = first or words[0]
    return first


_LEADING_WH = re.compile(
    r"^\s*(?:(?:and|so|but|also|then)\s+)?(?:(?:in|on|at|from|to|for|by|of|with|during|since|until|"
    r"into|under|after|before|between)\s+)?(?P<wh>which|what|whose|whom|who|when|where|how)\b",
    re.I,
)


_HOW_WORD = re.compile(
    r"\s+(?:many|much|long|old|tall|high|far|big|large|deep|wide|heavy|often|fast|did|does|do|is|"
    r"was|were|are|can|could|has|have|had|would|will|should|come)\b"
)


# A question word inside a statement: "... based in what state?", "... released in which year".
_INNER_WH = re.compile(
    r"\b(?P<wh>what|which)\s+(?=[a-z])(?!.*\b(?:what|which)\s+[a-z])|"
    r"\b(?P<wh2>when|where|who|whom|what)\s*\??\s*$"
)


_TRAILING_WH = re.compile(r"\b(?P<wh>who|whom|what|when|where|which)\s*\??\s*$", re.I)


def question_type(question: str) -> QuestionType:
    """The answer type a question asks for (see the module docstring).

    The question word decides first ("What city did X live in when he died?" asks for a city, not a
    date); a question word at the end counts too ("... and is based where?").
    """
    focus = focus_sentence(question)
    lowered = focus.lower().strip()
    operation = operation_for(question)
    if operation and operation["op"] in ("compare", "choose"):
        return QuestionType("comparison", focus=focus)
    if operation and operation["op"] in ("both", "same", "yes_no"):
        return QuestionType("yes/no", focus=focus)
    if operation and operation["op"] == "summarize" or _EXPLAIN_Q.match(lowered):
        return QuestionType("explanation", focus=focus)
    lead = _LEADING_WH.match(lowered)
    if lead and lead.group("wh") == "how" and not _HOW_WORD.match(lowered[lead.end() :]):
        lead = None  # "How to Eat, released in which year, ...": a title, not a question word
    lead = lead or _TRAILING_WH.search(lowered)
    # "X, a 2016 film, is a remake of Y, released in which year?": the question word is inside
    inner = None if lead else _INNER_WH.search(lowered)
    if not lead and not inner and re.match(rf"^\s*(?:and\s+)?{AUXILIARY}\b", lowered):
        return QuestionType("yes/no", focus=focus)
    found = lead or inner
    wh = (found.group("wh") or found.groupdict().get("wh2") or "") if found else ""
    if wh == "how" or _NUMBER_Q.search(lowered) and wh in ("what", "which", ""):
        if _NUMBER_Q.search(lowered):
            count = _COUNTED.search(lowered)
            counted = count.group(1).split()[-1] if count else None
            if counted in ("years", "year"):
                return QuestionType("number", noun="years", focus=focus)
            noun = _which_noun(focus) if wh in ("what", "which") else None
            return QuestionType("number", noun=noun or _money_or_percent(lowered), focus=focus, counted=counted)
        return QuestionType("explanation" if wh == "how" else "other", focus=focus)
    if wh == "when":
        return QuestionType("date", focus=focus)
    if wh in ("who", "whom", "whose"):
        return QuestionType("person", focus=focus)
    if wh == "where":
        if re.search(
            r"\b(?:stud(?:y|ied)|educated|graduat\w*|doctorates?|degrees?|attend(?:ed)?|enrolled|school(?:ed|ing)?)\b",
            lowered,
        ):
            return QuestionType("organisation", noun="university", focus=focus)  # "Where did X study?": a school
        return QuestionType("place", focus=focus)
    if wh in ("what", "which"):
        noun = _which_noun(focus)
        if noun and noun not in ("name", "title", "term"):
            category = _noun_category(noun)
            if category == "year" or re.search(r"\b(?:what|which) year\b", lowered):
                return QuestionType("year", noun=noun, focus=focus)
            if category == "number":
                return QuestionType("number", noun=noun, focus=focus)
            if category:
                return QuestionType(category, noun=noun, focus=focus)
            if noun not in ("is", "was", "are", "were"):
                return QuestionType("thing", noun=noun, focus=focus)
    return QuestionType("other", focus=focus)


def _money_or_percent(lowered: str) -> str | None:
    if re.search(r"\b(?:percentage|percent|proportion|share)\b", lowered):
        return "percent"
    if re.search(
        r"\b(?:debt|cost|costs|worth|revenue|budget|price|paid|pay|spent|earn|earned|gross|grossed|"
        r"salary|fund|funding|money|dollars)\b",
        lowered,
    ):
        return "money"
    return None


def looks_like_person(name: str) -> bool:
    words = name.split()
    return (
        2 <= len(words) <= 4
        and all(w[:1].isupper() for w in words)
        and not ({w.lower() for w in words} & set().union(*SHAPE_WORDS.values()))
        and not re.search(r"\b[IVX]+$|\d", name)
    )


WHY_QUESTION = re.compile(
    r"^\s*(?:(?:and|so|but)\s+)?(?:why\b|how come\b|how (?:do|does|did|is|are|was|were|can|could|has|have)\b"
    r"(?! many\b| much\b)|what (?:is|was|were|are) the (?:reason|reasons|purpose|cause|causes)\b|"
    r"explain\b|describe\b)",
    re.I,
)


def asks_explanation(question: str) -> bool:
    """Why / how / themes / summary questions: answered by a summary, not a span."""
    return looks_abstract(question) or bool(WHY_QUESTION.match(question))


# criterion word -> (prefer, value type)
CRITERIA = {
    **{w: ("min", "date") for w in "older oldest elder eldest earlier earliest first sooner".split()},
    **{w: ("max", "date") for w in "younger youngest newer newest later latest last recent".split()},
    **{
        w: ("max", "number")
        for w in """larger largest bigger biggest longer longest taller tallest higher highest
        more most greater greatest heavier heaviest deeper deepest wider widest populous""".split()
    },
    **{w: ("min", "number") for w in "smaller smallest shorter shortest lower lowest fewer fewest less least".split()},
}


_CRITERION = re.compile(r"\b(" + "|".join(sorted(CRITERIA, key=len, reverse=True)) + r")\b", re.I)


EVENT_VERB = re.compile(
    r"\b(born|founded|formed|established|built|created|released|published|opened|made|written|"
    r"started|launched|discovered|completed|introduced|premiered|incorporated|designed|invented|"
    r"constructed|produced|recorded|first aired|aired|debuted|elected|died|signed)\b",
    re.I,
)


_NUMBER_QUESTION = {
    "larger": "How large is {}?",
    "largest": "How large is {}?",
    "bigger": "How big is {}?",
    "biggest": "How big is {}?",
    "smaller": "How large is {}?",
    "smallest": "How large is {}?",
    "longer": "How long is {}?",
    "longest": "How long is {}?",
    "shorter": "How long is {}?",
    "shortest": "How long is {}?",
    "taller": "How tall is {}?",
    "tallest": "How tall is {}?",
    "higher": "How high is {}?",
    "highest": "How high is {}?",
    "lower": "How high is {}?",
    "lowest": "How high is {}?",
    "deeper": "How deep is {}?",
    "deepest": "How deep is {}?",
    "wider": "How wide is {}?",
    "widest": "How wide is {}?",
    "heavier": "How heavy is {}?",
    "heaviest": "How heavy is {}?",
    "populous": "What is the population of {}?",
}


LEAD_AUX = r"(?:is|was|are|were|did|does|do|has|had|have)"


_PERSONISH = set(
    "who person people man woman actor actress singer writer author director player musician composer "
    "artist politician athlete".split()
)


def _strip_option(text: str) -> str:
    text = text.strip(" ,;:?.").strip()
    return re.sub(r"^(?:the|a|an)\s+(?=[A-Z\"“])", "", text)  # "the Pterocarya"; "The Exies" is a name


def _options(focus: str) -> tuple[str, str, str] | None:
    """(head, A, B) of "head, A or B?" / "head A or B?" / "Is A or B older?" (B's tail goes to head)."""
    text = focus.strip().rstrip("?").strip()
    match = re.match(r"^(?P<head>.+?)\s*[,:]\s*(?P<a>[^,:]+?),?\s+or\s+(?P<b>[^,:]+?)$", text)
    if match and re.match(r"^(?:which|who|what|whose)\b", match.group("head"), re.I):
        return match.group("head"), _strip_option(match.group("a")), _strip_option(match.group("b"))
    match = re.match(
        rf"^(?P<head>(?:which|who|what)\b.*?\b(?:{_CRITERION.pattern}))\s+(?P<a>.+?)\s+or\s+(?P<b>.+)$", text, re.I
    )
    if match:
        return match.group("head"), _strip_option(match.group("a")), _strip_option(match.group("b"))
    match = re.match(
        rf"^(?P<aux>{LEAD_AUX})\s+(?P<a>.+?)\s+or\s+(?P<b>.+?)\s+(?P<rest>(?:{_CRITERION.pattern}|born|founded|formed|"
        rf"established|released)\b.*)$",
        text,
        re.I,
    )
    if match:
        return (
            f"{match.group('aux')} {match.group('rest')}",
            _strip_option(match.group("a")),
            _strip_option(match.group("b")),
        )
    return None


def _name_prefix(text: str) -> tuple[str, str] | None:
    """A name at the start of ``text`` and what follows it: "Sathish Kalathil both film directors"."""
    from graph_store.extraction import find_entity_mentions  # langchain loads with it: not at import

    stripped = re.sub(r"^(?:the\s+)", "", text.strip(), flags=re.I)
    mentions = find_entity_mentions(stripped)
    if mentions and mentions[0][0] == 0:
        end = mentions[0][1]
        while True:  # "Pick Me Up" is found as one name; "Lise Vandt's" keeps its 's
            more = [m for m in mentions if 0 < m[0] - end <= 1]
            if not more:
                break
            end = more[0][1]
        return stripped[:end].strip(), stripped[end:].strip(" ,")
    return None


def operation_for(question: str) -> dict[str, Any] | None:
    """The operation a question asks for (see the module docstring), or None for a plain question."""
    focus = focus_sentence(" ".join(question.split()))
    if asks_explanation(focus):
        return {"op": "summarize"}
    options = _options(focus)
    if options:
        head, a, b = options
        criterion = _CRITERION.search(head)
        if criterion:
            word = criterion.group(1).lower()
            prefer, value_type = CRITERIA[word]
            if word in ("more", "most", "fewer", "fewest", "less", "least") and not re.search(
                r"\b(?:more|most|fewer|fewest|less|least)\s+[a-z]", head, re.I
            ):
                value_type = "number"
            return {
                "op": "compare",
                "criterion": word,
                "prefer": prefer,
                "value_type": value_type,
                "labels": [a, b],
                "head": head,
            }
        prop = re.sub(rf"^(?:which|who|what|whose)(?:\s+(?!{LEAD_AUX}\b)[a-z]+)?\s+", "", head, flags=re.I)
        return {"op": "choose", "property": prop.strip(), "labels": [a, b], "head": head}
    text = focus.strip().rstrip("?").strip()
    lead = re.match(rf"^(?P<aux>{LEAD_AUX})\s+(?P<rest>.+)$", text, re.I)
    if not lead:
        return None
    rest = lead.group("rest")
    same = re.search(r"\b(?:of |in |from |at |on )?the same (?P<attr>[a-z]+(?: [a-z]+)?)\b", rest, re.I)
    pair_text = rest
    if same:
        pair_text = rest[: same.start()]
    both = re.match(r"^both\s+(?:(?P<noun>[a-z][a-z ]*?),\s+)?(?P<pair>.+)$", pair_text, re.I)
    if both:  # "Are both magazines, A and B, British publications?"
        pair_text = both.group("pair")
    pair = None
    first = _name_prefix(pair_text)
    if first and first[1].lower().startswith("and "):
        second = _name_prefix(first[1][4:])
        if second:
            pair = (first[0], second[0], second[1])
    if not pair:
        return None
    a, b, tail = pair
    tail = re.sub(r"^(?:both|also|each)\s+", "", tail.strip(" ,"), flags=re.I).strip()
    if same:
        return {"op": "same", "attribute": same.group("attr").lower().split()[-1], "labels": [a, b], "property": tail}
    if re.search(r"\bboth\b", focus, re.I) or tail:
        noun = both.group("noun") if both and both.group("noun") else ""
        return {"op": "both", "property": tail or noun, "labels": [a, b], "aux": lead.group("aux").lower()}
    return None


def _singular_phrase(phrase: str) -> str:
    words = phrase.split()
    if words and words[-1].endswith("s") and not words[-1].endswith("ss") and len(words[-1]) > 3:
        words[-1] = words[-1][:-3] + "y" if words[-1].endswith("ies") else words[-1][:-1]
    phrase = " ".join(words)
    if (
        words
        and words[0].lower() not in ("a", "an", "the", "in", "of", "from", "at", "on")
        and (len(words) > 1 or words[0][:1].islower())
    ):
        phrase = ("an " if phrase[:1].lower() in "aeiou" else "a ") + phrase
    return phrase


def operation_subquestions(operation: dict[str, Any]) -> list[tuple[str, str]]:
    """(label, sub-question) for each option of an operation, in label order."""
    op, labels = operation.get("op"), operation.get("labels") or []
    out = []
    for label in labels:
        if op == "compare":
            head = operation.get("head", "")
            if operation.get("value_type") == "number":
                template = _NUMBER_QUESTION.get(operation.get("criterion", ""))
                noun = re.search(r"\b(?:more|most|fewer|fewest|less|least)\s+([a-z]+)", head, re.I)
                question = (
                    template.format(label)
                    if template
                    else f"How many {noun.group(1)} does {label} have?"
                    if noun
                    else f"How many does {label} have?"
                )
            else:
                verb = EVENT_VERB.search(head)
                personish = bool(re.match(r"^\s*who\b", head, re.I)) or any(
                    w in _PERSONISH for w in head.lower().split()[:3]
                )
                # "Which is older, A or B?" says nothing of what A is: a person is born, a thing founded
                verb_text = verb.group(1).lower() if verb else ("born" if personish else "born or founded")
                question = f"When was {label} {verb_text}?"
        elif op == "choose":
            prop = operation.get("property", "")
            aux = re.match(rf"^({LEAD_AUX})\s+(.*)$", prop, re.I)
            question = f"{aux.group(1).capitalize()} {label} {aux.group(2)}?" if aux else f"Does {label} {prop}?"
        elif op == "both":
            question = (
                f"{operation.get('aux', 'is').capitalize() if operation.get('aux') in ('is', 'was') else 'Is'} "
                f"{label} {_singular_phrase(operation.get('property', ''))}?"
            )
            if operation.get("aux") in ("are", "were"):
                question = f"{'Was' if operation['aux'] == 'were' else 'Is'} {label} {_singular_phrase(operation.get('property', ''))}?"
        elif op == "same":
            attribute = operation.get("attribute", "")
            if attribute in ("nationality", "citizenship"):
                question = f"What nationality is {label}?"
            elif attribute in ("state", "country", "city", "county", "province", "region", "town", "continent"):
                question = f"Which {attribute} is {label} in?"
            else:
                question = f"What is the {attribute} of {label}?"
        elif op == "yes_no":
            question = operation.get("question") or f"Is {label} {operation.get('property', '')}?"
        else:
            continue
        out.append((label, " ".join(question.split())))
    return out
