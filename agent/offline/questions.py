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

import functools
import re
from dataclasses import dataclass
from typing import Any

from agent.offline.gazetteer import place_kinds
from agent.offline.parsing import Masked, masked_parse, parse
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
successor predecessor filmmaker screenwriter playwright sculptor photographer cinematographer""".split()
)


PLACE_NOUNS = set(
    """place city town village country state province county region district river lake sea ocean
island continent mountain location capital area territory municipality borough neighbourhood neighborhood
suburb street port nation kingdom birthplace hometown valley peninsula bay waterfall desert forest
township parish commune prefecture canton republic colony empire archipelago strait gulf coast shore
headquarters stadium arena venue seat""".split()
)


ORG_NOUNS = set(
    """company corporation firm band group team club university college school label party
organisation organization association publisher network channel airline manufacturer institution agency
league army navy business brand studio society union church order dynasty newspaper developer body authority
board council committee ministry department commission federation confederation foundation""".split()
)


WORK_NOUNS = set(
    """film movie song album book novel opera play series show episode game poem painting single
work programme program documentary sitcom musical symphony magazine journal comic manga anime ballet
sculpture franchise soundtrack publication periodical sequel prequel remake adaptation drama comedy thriller""".split()
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


# A nationality is answered by a nationality word or a country ("American", "Norway").
NATIONALITY_NOUNS = {"nationality", "citizenship", "ethnicity"}


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


REFERENCE = re.compile(r"#\d+")  # a sub-question's answer: "#1"


AUXILIARY = r"(?:is|was|are|were|did|does|do|has|had|have|can|could|will|would|should|shall|may|might|must)"


_WH_START = re.compile(
    rf"^\s*(?:(?:and|so|but|also|then|in|on|at|from|to|for|by|of|with|during|since|until)\s+)*"
    rf"(?:(?:which|what|whose)\b|who\b|whom\b|when\b|where\b|why\b|how\b|{AUXILIARY}\b)",
    re.I,
)


_EXPLAIN_Q = re.compile(
    r"^\s*(?:(?:and|so|but)\s+)?(?:why\b|how come\b|how (?:do|does|did|is|are|was|were|can|could|has|have)"
    r"\b(?! many| much)|what (?:are|were) (?:the )?(?:main|major|key|common|recurring)\b|"
    r"summari[sz]e\b|give (?:me )?an overview\b|what (?:is|was) the (?:reason|purpose|cause)\b)",
    re.I,
)


@dataclass(frozen=True)
class QuestionType:
    """What a question asks for: a type, the noun of a "which X", whether a number keeps its unit."""

    type: str  # person|place|organisation|date|year|number|work|thing|yes/no|comparison|explanation|cause|other
    noun: str | None = None
    focus: str = ""  # the sentence of the question that asks (a long question may state facts first)
    counted: str | None = None  # "stores" in "how many stores": its number is written without the unit
    plural: bool = False  # "What actresses ...": the answer is every name the evidence lists with the first


def focus_sentence(question: str) -> str:
    """The part of a question that asks: the last sentence that starts with (or ends on) a question word."""
    text = " ".join(question.split())
    parts = [p.strip() for p in re.split(r"(?<=[.?!])(?<!\b[A-Z]\.)\s+(?=[A-Z])", text) if p.strip()]  # not "H. C."
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


# --- names in a question, and its parse ------------------------------------------------------------


_NICKNAMED = re.compile(
    r"\b[A-Z][\w.'’-]*(?: [A-Z][\w.'’-]*)* [\"“][A-Z][^\"”]{1,30}[\"”] [A-Z][\w.'’-]*(?: [A-Z][\w.'’-]*)*"
)


@functools.lru_cache(maxsize=4096)
def whole_word(name: str) -> re.Pattern:
    return re.compile(rf"(?<!\w){re.escape(name)}(?!\w)")


# The small words between a name's capitalised ones ("Rukn al-Dawla", "Otto von Bismarck", "Rio de Janeiro")
NAME_PARTICLE = r"(?:al|el|bin|ibn|bint|ben|von|van|der|den|de|da|di|du|del|della|dos|das|la|le)"
_PARTICLES = re.compile(rf"(?:\s{NAME_PARTICLE}){{1,2}}[\s-]|\s[dl]['’]")  # "Seigneur d'Aubry" too
# Abbreviations a name starts with ("St. Louis", "Mt. Hood", "Dr. Goldfoot"; a person's title is left out of an
# answer by agent.offline.reader._strip_title)
_ABBREVIATIONS = {"St", "Ste", "Mt", "Ft", "Dr", "Mr", "Mrs", "Ms", "Prof"}


def mentions_with_initials(text: str) -> list[tuple[int, int, str]]:
    """Names with their middle initials: "James K" + "Polk" -> "James K. Polk"."""
    return list(_mentions_with_initials(text))


@functools.lru_cache(maxsize=20000)  # the reader asks for each sentence's names several times
def _mentions_with_initials(text: str) -> tuple[tuple[int, int, str], ...]:
    from graph_store.extraction import find_entity_mentions  # langchain loads with it: not at import

    found = find_entity_mentions(text)  # one mention per name: a name said twice is found at each place
    mentions = list({(m.start(), m.end(), name) for _, _, name in found for m in whole_word(name).finditer(text)})
    mentions = mentions or found
    for nick in _NICKNAMED.finditer(text):  # 'Eddie "The Eagle" Edwards' is one name
        name = re.sub(r"(?<=\w{3})\.$", "", nick.group(0))  # the sentence's full stop is not part of it
        mentions = [m for m in mentions if not nick.start() <= m[0] < nick.end()] + [
            (nick.start(), nick.start() + len(name), name)
        ]
    merged: list[tuple[int, int, str]] = []
    for start, end, name in sorted(mentions, key=lambda m: (m[0], -m[1])):  # the longest of names starting together
        if merged and start < merged[-1][1]:
            continue  # inside the name before it ("Jr" of "Hank Williams, Jr.")
        gap = text[merged[-1][1] : start] if merged else ""
        # "Ville- d' Avray": a hyphenated name written with a space after the hyphen; "Rukn al-Dawla", "Salman bin
        # Hamad", "Otto von Bismarck": a name's small words between its capitalised ones
        if merged and (re.fullmatch(r"-\s(?:[a-z]{1,3}['’]\s?)?", gap) or _PARTICLES.fullmatch(gap)):
            first = merged.pop()
            start, name = first[0], text[first[0] : end]
        abbreviated = merged and re.fullmatch(r"\.\s", text[merged[-1][1] : start])
        if abbreviated and (re.search(r"\b[A-Z]$", merged[-1][2]) or merged[-1][2] in _ABBREVIATIONS):
            first = merged.pop()  # "James K" + "Polk", "St" + "Louis", "Dr" + "Goldfoot"
            start, name = first[0], text[first[0] : end]
        suffix = re.match(r",?\s(?:Jr|Sr)\b\.?|,?\s(?:II|III|IV)\b", text[end:])  # "Hank Williams, Jr.", not "Sri"
        if suffix:
            end += suffix.end()
            name = text[start:end]
        merged.append((start, end, name))
    return tuple(merged)


# "Nighthawks (1981)", "Brand (play)", "Ealdgyth (daughter of Ælfgar, Earl of Mercia)": which one is meant
_DISAMBIGUATION = re.compile(r" \((?:\d{4}|[a-z]+)(?: [a-z]+)?\)| \([a-z]+ of [A-ZÀ-Þ][^()]*\)")


def name_spans(text: str) -> list[tuple[int, int]]:
    """Character spans of the names and references in a question (a possessive 's left outside)."""
    spans = [m.span() for m in REFERENCE.finditer(text)]
    for start, end, name in mentions_with_initials(text):
        lead = re.match(rf"{AUXILIARY}\b\s*", name, re.I)
        if lead and not text[:start].strip():  # "Does Lise Vandt ...": the question's verb is not the name's
            start, name = start + lead.end(), name[lead.end() :]
            if not name:
                continue
        first = not text[:start].strip() or re.search(r"[.?!]\s+$", text[:start])
        if first and " " not in name and common_word(text, start):
            continue  # "Think of the father of X.": a sentence's first word, capitalised as every one is
        if name.endswith(("'s", "’s")):
            end -= 2
        modifier = re.match(r"(?:-[a-z]+)?\s+(?:[a-z]+-language\s+)?([a-z]+)\s+(?=[A-Z\"“\d])", text[end:])
        if modifier and _work_kind(modifier.group(1)) == "one":
            continue  # "the 1974 Soviet film The Straw Hat": what kind of film, the title follows
        if re.search(r"\b[A-Z]\.[A-Z]$", text[start:end]) and text[end : end + 1] == ".":
            end += 1  # "U.S.A.": its last full stop is the name's, not the sentence's
        if text[:start].strip() and not re.search(r"[.?!]\s+$", text[:start]):
            start = title_start(text, start)
        if start > 0 and text[start - 1] in '"“' and text[end : end + 1] in ('"', "”"):
            start, end = start - 1, end + 1  # a quoted title with its quotes: the parser reads one word
        end = _proper_tail(text, end)
        which = _DISAMBIGUATION.match(text, end)
        if which:  # "Nighthawks (1981)", "Brand (play)": which one is part of the name
            end = which.end()
        if not any(s <= start < e for s, e in spans):
            spans.append((start, end))
    return _whole_titles(text, sorted(spans))


def _proper_tail(text: str, end: int) -> int:
    """Where a name ending at ``end`` ends with the lowercase words after it the parser reads as proper nouns
    ("film Aldri annet enn bråk": a title in a language that capitalises only its first word). Only words that run
    to the sentence's end, two or more and none of English's small words, are worth a parse."""
    tail = re.match(r"((?: [^\W\d_]+)+)\s*[?.!]?\s*$", text[end:])
    words = tail.group(1).split() if tail else []
    if (
        len(words) < 2
        or not all(w.islower() for w in words)
        or set(words) & (_TITLE_WORDS | _SMALL_LEADS | _VERB_WORDS)
    ):
        return end
    for token in parse(text):
        if token.idx < end + 1:
            continue
        if (
            token.idx != end + 1
            or token.tag_ not in ("NNP", "NNPS")
            or not token.text.isalpha()
            or token.text[0].isupper()
        ):
            break
        end = token.idx + len(token.text)
    return end


def title_start(text: str, start: int) -> int:
    """Where the title whose capitalised words start at ``start`` begins: with the small word before them,
    capitalised as a title's first word ("film The Salt Road", "of Where Mountains Float", "By the Beautiful
    Sea"), which the mention finder leaves out."""
    lead = _TITLE_LEAD.search(text[:start])
    return lead.start() if lead and lead.group(1).lower() in _TITLE_WORDS | _SMALL_LEADS else start


def common_word(text: str, start: int) -> bool:
    """Whether the word at ``start`` is parsed as a verb, adverb or other common word (not a name)."""
    token = next((t for t in parse(text) if t.idx == start), None)
    return token is not None and token.pos_ in ("VERB", "AUX", "ADV", "ADP", "DET", "PRON", "SCONJ", "CCONJ", "INTJ")


# A title after the kind of work it is runs on over small words between its capitalised ones ("film Drive a
# Crooked Road", "film Holiday in Tyrol") and starts with its number ("film 45 Fathers"). "and" joins two titles
# after a plural ("films X and Y"), so it is part of a title only after a singular ("song Love and Theft").
_TITLE_WORDS = {"a", "an", "the", "of", "in", "on", "at", "to", "for", "with", "from", "by", "and", "or"}
_VERB_WORDS = {"is", "was", "are", "were", "be", "been", "do", "does", "did", "has", "had", "have"}
_SMALL_LEADS = {"where", "when", "what", "who", "why", "how", "if", "as", "into", "under", "over", "after", "before"}
_TITLE_LEAD = re.compile(r"\b([A-Z][a-z]*)(?: (?:the|a|an))? $")


# Ranks a name is written with ("Duke Casimir I", "Archduke Anton"), and that alone before "of <place>" are a title
# ("Duke of Legnica", "Prince of Tuscany"), not a name.
RANKS = set(
    """king queen emperor empress prince princess duke duchess archduke archduchess count countess earl lord lady
baron baroness marquess marquis margrave viscount sultan shah emir caliph khan tsar czar pope bishop dauphin dauphine
infante infanta elector electress landgrave burgrave margravine landgravine marchioness tsarina abbot abbess
seigneur""".split()
)
# The ranks only a woman holds: a name written with one is a woman's, with any other rank a man's ("King Ramiro I").
FEMALE_RANKS = set(
    """queen empress princess duchess archduchess countess lady baroness dauphine infanta electress margravine
landgravine marchioness tsarina abbess""".split()
)
# A relative after a name says which one is meant ("Bertha, daughter of Lothair II"): part of the name, as a style
KIN_STYLE = r", (?:the )?(?:son|daughter|wife|husband|widow) of "
# A noble's style after the name, as a pattern (its group: "Prince of Anhalt-Bernburg" in "Victor Amadeus, Prince of
# Anhalt-Bernburg"); the reader writes a hop's answer with it and leaves its place out of the question's names.
_RANK = "(?i:" + "|".join(sorted(RANKS)) + ")"
STYLE = (  # "Duke of Cleves", "8th Earl of Castlehaven", "9th Baron Willoughby of Parham", "Seigneur d'Aubigny",
    # "2nd Baroness Clifton" (a peerage named without "of" is written with its number)
    rf", ((?:\d+(?:st|nd|rd|th) )?{_RANK}(?: [A-ZÀ-Þ][\w'-]+)? (?:of |d['’])[A-ZÀ-Þ][\w'-]+(?:[ -][A-ZÀ-Þ][\w'-]+)*"
    rf"|\d+(?:st|nd|rd|th) {_RANK} [A-ZÀ-Þ][\w'-]+)"
)


def _whole_titles(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for start, end in spans:
        number = re.search(r"\b([a-z]+)\s+(\d[\d,]*)\s+$", text[:start])
        if number and _work_kind(number.group(1)):
            start = number.start(2)
        if out:
            kind = _work_kind(_word_before(text, out[-1][0]))
            gap = text[out[-1][1] : start].split()
            small = 1 <= len(gap) <= 2 and set(gap) <= _TITLE_WORDS
            joined = small and (kind == "one" or not {"and", "or"} & set(gap))
            if kind and joined:
                out[-1] = (out[-1][0], end)
                continue
            # "the cinematographer of Dr. Goldfoot and the Girl Bombs": one work of one relation, not two
            of_one = re.search(r"\b([a-z]+) of (?:the )?$", text[: out[-1][0]])
            # "the screenwriter of Woman Without a Face", "the director of Salad by the Roots": the last name after
            # a person's relation runs on over small words too (not in a yes/no question: "Is the author of X from
            # Y?")
            if (
                joined
                and of_one
                and of_one.group(1) in PERSON_NOUNS
                and not re.search(r"[A-Z\d]", text[end:])
                and not re.match(AUXILIARY + r"\b", text, re.I)
            ):
                out[-1] = (out[-1][0], end)
                continue
            one = kind == "one" or bool(of_one and of_one.group(1) in ALL_NOUNS and not of_one.group(1).endswith("s"))
            if one and text[out[-1][1] : start] == " and the ":
                out[-1] = (out[-1][0], end)
                continue
            if _says_which_one(text[out[-1][1] : start], text[start:end]):
                out[-1] = (out[-1][0], end)
                continue
        out.append((start, end))
    return out


def _says_which_one(gap: str, name: str) -> bool:
    """Whether ``name``, after ``gap``, is the style or relative that says which one the name before is: "Bertha,
    daughter of Lothair II", "Geoffrey III, Count of Perche", "George Stewart, 9th Seigneur d'Aubigny", "Alexander
    Lloyd, 2nd Baron Lloyd" (numbered, without "of")."""
    if re.fullmatch(KIN_STYLE, gap):
        return True
    style = re.match(r"(\w+) (?:of |d['’])", name)
    ordinal = re.fullmatch(r", (?:\d+(?:st|nd|rd|th) )?", gap)  # ", 3rd Duke of X"
    if ordinal and ordinal.group(0) != ", ":
        style = style or re.match(r"(\w+) [A-ZÀ-Þ]", name)
    return bool(ordinal and style and style.group(1).lower() in RANKS)


def _word_before(text: str, at: int) -> str:
    before = re.search(r"\b([a-z]+)\s+(?:\d[\d,]*\s+)?$", text[:at])
    return before.group(1) if before else ""


def _work_kind(word: str) -> str | None:
    """ "one" for a kind of work ("film"), "many" for its plural ("films"), None for other words."""
    return "one" if word in WORK_NOUNS else "many" if word.endswith("s") and word[:-1] in WORK_NOUNS else None


def name_kinds(text: str) -> set[str]:
    """The nouns that say what a named thing is, written before its name: "film" in "the director of film X",
    "city" in "the city Tarnholm". They belong to the name, not to the relation asked."""
    kinds = set()
    for start, _ in name_spans(text):
        before = re.search(r"(?:^|\b(?:of|the|a|an|'s|’s)\s+)([a-z]+)\s+$", text[:start])
        if before and _singular(before.group(1)) in ALL_NOUNS:
            kinds.add(before.group(1))
    return kinds


def parse_question(text: str) -> Masked:
    """The parse of a question with its names masked (``agent.offline.parsing.masked_parse``)."""
    return masked_parse(text, name_spans(text))


# The question words, and nouns that point through to the noun after them ("what kind of university", "the name
# of the airport").
QUESTION_WORDS = {"which", "what", "whose", "who", "whom", "when", "where", "how"}
_THROUGH = {"kind", "kinds", "type", "types", "sort", "form", "name", "names", "title", "term"}
_STUDY = {"study", "educate", "graduate", "attend", "enrol", "enroll", "school", "train"}


def _question_word(doc: Any) -> Any | None:
    """The word that asks: the first question word outside relative and adverbial clauses ("What city did X live
    in when he died?" asks with "What"), else the first one ("X, released in which year, ..."); not a relative
    pronoun ("an engineer who ...") nor "How to"."""
    found = []
    first = next((t.i for t in doc if not t.is_punct and t.lower_ not in ("and", "so", "but")), 0)
    for token in doc:
        if token.lower_ not in QUESTION_WORDS or token.tag_ not in ("WDT", "WP", "WP$", "WRB"):
            continue
        if token.lower_ == "how" and token.i + 1 < len(doc) and doc[token.i + 1].lower_ == "to":
            continue  # "How to Eat": a title
        clause = next((a for a in token.ancestors if a.dep_ in ("relcl", "acl", "advcl")), None)
        after = doc[token.i + 1] if token.i + 1 < len(doc) else token
        determiner = token.dep_ == "det" or after.tag_ in ("NN", "NNS", "NNP", "NNPS", "JJ")  # "which German musician"
        # (the sentence's first word has no noun before it to relate to: the parse that hangs "When was X's song Y
        # released?" as a clause is wrong, and it asks unless another question word follows outside a clause)
        if (
            clause is not None
            and not determiner
            and token.i != first
            and min(t.i for t in clause.subtree) >= token.i - 1
        ):
            continue  # it opens the clause: a relative pronoun, not a question word
        found.append((token, clause is not None))
    return next((t for t, inside in found if not inside), found[0][0] if found else None)


def _asked_noun(m: Masked, wh: Any) -> tuple[Any, str] | None:
    """(the head noun, the noun phrase's words) a "what/which" question asks for: "which river", "which Bollywood
    actress", "what is the place of birth of ...", "what kind of university"; None when it asks for no noun ("X
    turns into what?", "What is X?")."""
    run = _nouns_after(m, wh)
    noun = run[-1] if run else None
    if noun is None and wh.head.lemma_ == "be" and wh.dep_ in ("attr", "nsubj", "nsubjpass"):
        noun = _noun_of_copula(m, wh)
        run = [c for c in noun.lefts if c.dep_ == "compound" and c.tag_ in ("NN", "NNS")] + [noun] if noun else []
    while noun is not None and noun.lower_ in _THROUGH:
        of = next((c for c in noun.children if c.dep_ == "prep" and c.lower_ == "of"), None)
        through = next((c for c in of.children if c.dep_ == "pobj"), None) if of is not None else None
        if through is None or through.tag_ not in ("NN", "NNS"):
            return None if noun.lower_ in ("name", "names", "title", "term") else (noun, noun.lower_)
        noun, run = through, [through]
    return (noun, " ".join(t.lower_ for t in run)) if noun is not None else None


def _nouns_after(m: Masked, wh: Any) -> list[Any]:
    """The nouns right after the question word, past names and adjectives: "which Xalor actress"."""
    run: list[Any] = []
    for token in wh.doc[wh.i + 1 :]:
        common = token.tag_ in ("NN", "NNS") or token.tag_ in ("NNP", "NNPS") and token.text.islower()
        if common and token.text not in m.names:  # an unknown lowercase word may be tagged proper ("judoka")
            run.append(token)
        elif run or not (token.text in m.names or token.tag_ in ("JJ", "JJS", "RBS", "DT", "CD")):  # "which 1946 drama"
            break
    return run


def _noun_of_copula(m: Masked, wh: Any) -> Any:
    """The common noun the question word is equated with: "what is the place of birth of ..." -> place."""
    others = [c for c in wh.head.children if c.dep_ in ("nsubj", "attr", "nsubjpass") and c.i != wh.i]
    return next((c for c in others if c.tag_ in ("NN", "NNS") and c.text not in m.names), None)


def _singular(word: str) -> str:
    word = word.lower()
    return word[:-1] if word.endswith("s") and word[:-1] in ALL_NOUNS else word


def question_type(question: str) -> QuestionType:
    """The answer type a question asks for (see the module docstring), from the question's parse: the question
    word decides ("who" a person, "when" a date, "where" a place, "how many" a number), or the noun it asks for
    ("which river", "what is the place of birth of ...", "what nationality").
    """
    focus = focus_sentence(question)
    lowered = focus.lower().strip()
    operation = operation_for(question)
    if operation and operation["op"] in ("compare", "choose"):
        return QuestionType("comparison", focus=focus)
    if operation and operation["op"] in ("both", "same", "yes_no"):
        return QuestionType("yes/no", focus=focus)
    if CAUSE_OF_DEATH.match(focus):
        return QuestionType("cause", noun="death", focus=focus)
    if operation and operation["op"] == "summarize" or _EXPLAIN_Q.match(lowered):
        return QuestionType("explanation", focus=focus)
    masked = parse_question(focus)
    doc = masked.doc
    wh = _question_word(doc)
    if wh is None:
        return QuestionType("yes/no" if _verb_first(doc) else "other", focus=focus)
    word = wh.lower_
    if word == "how":
        return _how_type(wh, focus, lowered, masked.names)
    if word == "when":
        return QuestionType("date", focus=focus)
    if word in ("who", "whom", "whose"):
        return QuestionType("person", focus=focus)
    if word == "where":
        if any(t.lemma_.lower() in _STUDY for t in doc) or re.search(r"\b(?:degrees?|doctorates?)\b", lowered):
            return QuestionType("organisation", noun="university", focus=focus)  # "Where did X study?": a school
        return QuestionType("place", focus=focus)
    return _type_of_asked_noun(masked, wh, focus, lowered)


def _verb_first(doc: Any) -> bool:
    """Whether a question without a question word starts with its verb ("Is X ...?", "Did X ...?"): a yes/no one."""
    first = next((t for t in doc if not t.is_punct and t.lower_ not in ("and", "so", "but")), None)
    return first is not None and (
        first.tag_ in ("VBZ", "VBD", "VBP", "MD")
        and first.i == first.head.i
        or (first.dep_ in ("aux", "auxpass") and first.i < first.head.i)
    )


def _capitalised_kind(masked: Masked, wh: Any) -> str | None:
    """ "Which Olympics ...?", "Which Crusade ...?": a capitalised kind read as a name is the noun asked for."""
    doc = masked.doc
    after = doc[wh.i + 1] if wh.i + 1 < len(doc) else None
    kind = masked.names.get(after.text, "") if after is not None else ""
    following = doc[after.i + 1] if after is not None and after.i + 1 < len(doc) else None
    if kind.isalpha() and following is not None and (following.pos_ in ("AUX", "VERB") or following.is_punct):
        return _singular(kind.lower())
    return None


def _type_of_asked_noun(masked: Masked, wh: Any, focus: str, lowered: str) -> QuestionType:
    """The type a "which X" / "what X" question asks for, by the category of its noun X."""
    asked = _asked_noun(masked, wh)
    if asked is None:
        kind = _capitalised_kind(masked, wh)
        return QuestionType("thing", noun=kind, focus=focus) if kind is not None else QuestionType("other", focus=focus)
    noun_token, phrase = asked
    category = _noun_category(phrase)  # "debt load": the word of the phrase that has a category
    noun = next((w for w in reversed(phrase.split()) if _noun_category(w) == category), noun_token.lower_)
    noun = _singular(noun)
    # "In which part of East London ...", "In what area of Korr ...": where (not "In which part of the film")
    located = wh.i > 0 and wh.doc[wh.i - 1].lower_ in ("in", "at", "from", "into", "to")
    of_a_name = any(t.text in masked.names for t in noun_token.subtree)
    if noun in ("part", "area", "section", "portion") and located and of_a_name:
        category = "place"
    elif noun == "area" and any(c.dep_ == "prep" and c.lower_ == "of" for c in noun_token.children):
        category = "number"  # "the area of X" is a measure, "which area" a place
    if category == "year":
        return QuestionType("year", noun=noun, focus=focus)
    if category == "number":
        return QuestionType("number", noun=_money_or_percent(lowered) or noun, focus=focus)
    if noun in NATIONALITY_NOUNS:
        return QuestionType("nationality", noun=noun, focus=focus)
    return QuestionType(category or "thing", noun=noun, focus=focus, plural=noun_token.tag_ == "NNS")


def _how_type(wh: Any, focus: str, lowered: str, names: dict[str, str]) -> QuestionType:
    """ "how many/much X" and "how long/old/tall ..." ask for a number; "how did ..." for an explanation. What is
    counted may be written as a name ("How many TEUs ...")."""
    after = wh.doc[wh.i + 1] if wh.i + 1 < len(wh.doc) else None
    if after is None or after.tag_ not in ("JJ", "JJR", "RB", "RBR"):
        return QuestionType("explanation", focus=focus)
    if after.lower_ in ("many", "much"):
        counted = after.head if after.head.tag_ in ("NNS", "NN") and after.head.i > after.i else None
        if counted is not None and counted.lower_ in ("year", "years"):
            return QuestionType("number", noun="years", focus=focus)
        written = names.get(after.head.text) if after.head.i == after.i + 1 else None
        return QuestionType(
            "number",
            noun=_money_or_percent(lowered),
            focus=focus,
            counted=counted.lower_ if counted is not None else written.lower() if written else None,
        )
    return QuestionType("number", noun=_money_or_percent(lowered), focus=focus)


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
    place, _, region = name.rpartition(", ")
    if place and place_kinds(region):
        return False  # "Milan, Italy", "Columbus, Ohio": a place and its region
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


# "Why did X die?", "How did X die?", "What was the cause of death of X?": a fact (an illness, an accident), a span
CAUSE_OF_DEATH = re.compile(
    r"^\s*(?:(?:why|how) (?:did|does|do) .+ die\b|what (?:is|was) (?:the )?cause of (?:\w+ )?death\b)", re.I
)


def asks_explanation(question: str) -> bool:
    """Why / how / themes / summary questions: answered by a summary, not a span."""
    if CAUSE_OF_DEATH.match(focus_sentence(question)):
        return False
    return looks_abstract(question) or bool(WHY_QUESTION.match(question))


# "lived longer", "had a shorter life", "died younger": compared by the years between birth and death
_LIFESPAN = re.compile(r"\b(?:lived|life|died)\s+(?:a\s+)?(longer|shorter|younger|older)\b", re.I)


# criterion word -> (prefer, value type)
CRITERIA = {
    **{w: ("min", "date") for w in "older oldest elder eldest earlier earliest first sooner".split()},
    **{w: ("max", "date") for w in "younger youngest newer newest later latest last recent recently".split()},
    # an adverb after "more" / "most" is the criterion, not an amount: "released more recently"
    **{
        f"{degree} {w}": (prefer, "date")
        for degree in ("more", "most")
        for w, prefer in (("recently", "max"), ("recent", "max"))
    },
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
    # the head ends at its first comma; a title may hold more ("Duck, You Sucker!", "OSS 117: Cairo, Nest of Spies")
    match = re.match(r"^(?P<head>[^,:]+?)\s*[,:]\s*(?P<a>.+?),?\s+or\s+(?P<b>.+?)$", text)
    if match and re.match(r"^(?:which|who|what|whose)\b", match.group("head"), re.I):
        return match.group("head"), _strip_option(match.group("a")), _strip_option(match.group("b"))
    match = re.match(
        rf"^(?P<head>(?:which|who|what)\b.*?\b(?:{_CRITERION.pattern}))\s+(?P<a>.+?)\s+or\s+(?P<b>.+)$", text, re.I
    )
    if match:
        return match.group("head"), _strip_option(match.group("a")), _strip_option(match.group("b"))
    pair = _pair_with_and(text)
    if pair:
        return pair
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


# what two options are, written before their names: "the films A and B", "the two films, A and B"
_KIND_BEFORE_NAMES = re.compile(r"^(?:the\s+)?(?P<kind>[a-z]+s),?\s+(?=[A-Z\"“])")


def _pair_with_and(text: str) -> tuple[str, str, str] | None:
    """(head, A, B) of a comparison that names its options with "and": "Which of A and B was born first",
    "Who was born first out of A and B", "Between A and B, who died later"."""
    wh = r"(?:which|who|what)\b"
    forms = (
        rf"^(?P<wh>{wh})(?:\s+one)?\s+of\s+(?:the\s+two,?\s+)?(?P<pair>.+?)\s+(?P<rest>(?:{LEAD_AUX}|came|died|lived)\b.*)$",
        rf"^(?P<wh>{wh}.*?\b(?:{_CRITERION.pattern}))\s*,?\s+(?:out of|between|among|of)\s+(?P<pair>.+)$",
        rf"^(?:between|of|out of)\s+(?P<pair>.+?),\s*(?P<wh>{wh}.*)$",
    )
    for form in forms:
        match = re.match(form, text, re.I)
        if not match or not _CRITERION.search(text.replace(match.group("pair"), " ")):
            continue  # a comparison says by what, outside the options' names
        kind = _KIND_BEFORE_NAMES.match(match.group("pair"))  # "the films A and B"
        pair = match.group("pair")[kind.end() :] if kind else match.group("pair")
        first = _name_prefix(pair)
        if first and first[1].lower().startswith("and "):
            a, b = first[0], first[1][4:]
        else:
            a, _, b = pair.partition(" and ")
        if a and b:
            words = [match.group("wh"), kind.group("kind") if kind else "", match.groupdict().get("rest") or ""]
            head = " ".join(w for w in words if w)
            return head, _strip_option(a), _strip_option(b)
    return None


def _name_prefix(text: str) -> tuple[str, str] | None:
    """A name at the start of ``text`` and what follows it: "Sathish Kalathil both film directors"."""
    from graph_store.extraction import find_entity_mentions  # langchain loads with it: not at import

    stripped = re.sub(r"^(?:the\s+)", "", text.strip())  # "The Salt Road" keeps its article
    mentions = find_entity_mentions(stripped)
    if mentions and title_start(stripped, mentions[0][0]) == 0:  # "The Salt Road", "Where Mountains Float"
        mentions[0] = (0, *mentions[0][1:])
    if mentions and mentions[0][0] == 0:
        end = mentions[0][1]
        while True:  # "Pick Me Up" is found as one name; "Lise Vandt's" keeps its 's
            more = [m for m in mentions if 0 < m[0] - end <= 1]
            if not more:
                break
            end = more[0][1]
        return stripped[:end].strip(), stripped[end:].strip(" ,")
    return None


# "the directors of films A and B", "both the composers of the songs A and B": a relation of each of two options
_RELATION_OF_PAIR = re.compile(
    r"^(?:both\s+)?(?:the\s+)?(?P<rel>[a-z]+)\s+of\s+(?:the\s+)?(?:(?P<kind>[a-z]+)\s+)?(?=[A-Z\"“#\d])"
)
# "Which film has the director who died first", "whose director was born earlier": a relation of each option
_OPTION_RELATION = re.compile(r"\b(?:has|had|with|whose)\s+(?:the\s+)?(?P<rel>[a-z]+)\b")


def _singular_word(word: str) -> str:
    return word[:-1] if word.endswith("s") and not word.endswith("ss") else word


def _is_relation_noun(word: str) -> bool:
    from agent.offline.relations import STATED_BY  # relations imports nothing from here; kept local to be clear

    singular = _singular_word(word)
    return singular in PERSON_NOUNS or singular in STATED_BY


def _option_relation(head: str) -> str | None:
    """The relation a choice asks of each option: "director" in "Which film has the director who died first"."""
    match = _OPTION_RELATION.search(head)
    return match.group("rel") if match and _is_relation_noun(match.group("rel")) else None


def _pair_of(text: str, same: bool) -> tuple[str, str, str, str | None, str] | None:
    """(A, B, what follows them, the relation of each asked about, what they are) of "A and B ..." in a yes/no
    question: "the directors of films A and B", "films A and B have the directors ...", and for "the same",
    "the founder of X and the wife of Y"."""
    phrase = r"(?:the )?[a-z]+ of (?:[a-z]+ )?[A-Z\"“]"  # "the founder of X", "director of film X"
    phrases = re.fullmatch(rf"(?P<a>{phrase}.*?) and (?P<b>{phrase}.*)", text.strip())
    of_options = _RELATION_OF_PAIR.match(text)
    relation, kind = None, ""
    if of_options and _is_relation_noun(of_options.group("rel")):
        # "the directors of films A and B": the relation of each option is compared, not the options
        relation, kind = _singular_word(of_options.group("rel")), of_options.group("kind") or ""
        text = text[of_options.end() :]
    kind_first = _KIND_BEFORE_NAMES.match(text)
    if kind_first and not relation:  # "films A and B have the directors ...": what the options are
        kind, text = kind_first.group("kind"), text[kind_first.end() :]
    first = _name_prefix(text)
    lowercase_run = re.match(r"((?:[^\W\d_]+ )+)and (?=[A-Z\"“#\d])", first[1] + " ") if first else None
    if first and lowercase_run and lowercase_run.group(1).islower():  # "Guai ai vinti and B": a title goes on
        first = (f"{first[0]} {lowercase_run.group(1).strip()}", first[1][lowercase_run.end(1) :])
    second = _name_prefix(first[1][4:]) if first and first[1].lower().startswith("and ") else None
    if first and second:
        a, b, tail = first[0], second[0], second[1]
    elif same and phrases:  # "Are the founder of X and the wife of Y of the same ...": hops for each
        a, b, tail, relation = (
            phrases.group("a"),
            re.sub(r"\s+(?:have|has|had|share)$", "", phrases.group("b")),
            "",
            None,
        )
    else:
        return None
    tail = re.sub(r"^(?:both|also|each)\s+", "", tail.strip(" ,"), flags=re.I).strip()
    has = re.match(r"^(?:[a-z]+s\s+)?(?:have|has|had)\s+(?:the\s+|their\s+)?(?P<rel>[a-z]+)\b", tail)
    if has and not relation and _is_relation_noun(has.group("rel")):  # "A and B have the directors from ..."
        relation, tail = _singular_word(has.group("rel")), ""
    return a, b, tail, relation, kind


def operation_for(question: str) -> dict[str, Any] | None:
    """The operation a question asks for (see the module docstring), or None for a plain question."""
    focus = focus_sentence(" ".join(question.split()))
    if asks_explanation(focus):
        return {"op": "summarize"}
    options = _options(focus)
    if options:
        head, a, b = options
        relation = _option_relation(head)
        criterion = _CRITERION.search(head)
        if criterion:
            word = criterion.group(1).lower()
            prefer, value_type = CRITERIA[word]
            if word in ("more", "most", "fewer", "fewest", "less", "least") and not re.search(
                r"\b(?:more|most|fewer|fewest|less|least)\s+[a-z]", head, re.I
            ):
                value_type = "number"
            lived = _LIFESPAN.search(head)
            if lived:  # "Who lived longer", "Who died younger": the years between birth and death
                value_type, prefer = "lifespan", "max" if lived.group(1).lower() in ("longer", "older") else "min"
            return {
                "op": "compare",
                "criterion": word,
                "prefer": prefer,
                "value_type": value_type,
                "labels": [a, b],
                "head": head,
                **({"relation": relation} if relation else {}),
            }
        prop = re.sub(rf"^(?:which|who|what|whose)(?:\s+(?!{LEAD_AUX}\b)[a-z]+)?\s+", "", head, flags=re.I)
        return {"op": "choose", "property": prop.strip(), "labels": [a, b], "head": head}
    text = focus.strip().rstrip("?").strip()
    lead = re.match(rf"^(?P<aux>{LEAD_AUX})\s+(?P<rest>.+)$", text, re.I)
    if not lead:
        return None
    rest = lead.group("rest")
    # "... of the same nationality?", "... share a nationality?"
    same = re.search(
        r"\b(?:(?:of |in |from |at |on )?the same|(?<=share )an?) (?P<attr>[a-z]+(?: [a-z]+)?)\b", rest, re.I
    )
    pair_text = rest
    if same:
        pair_text = rest[: same.start()]
    both = re.match(r"^both\s+(?:(?P<noun>[a-z][a-z ]*?),\s+)?(?P<pair>.+)$", pair_text, re.I)
    if both:  # "Are both magazines, A and B, British publications?"
        pair_text = both.group("pair")
    pair = _pair_of(pair_text, bool(same))
    if not pair:
        return None
    a, b, tail, relation, kind = pair
    if same:
        attribute = same.group("attr").lower().split()[-1]
        return {
            "op": "same",
            "attribute": attribute,
            "labels": [a, b],
            "property": tail,
            **({"relation": relation, "kind": kind} if relation else {}),
        }
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


def _quoted_if_needed(name: str) -> str:
    """ "Guai ai vinti", "Duck, You Sucker!": quoted, so that a title's lowercase words and commas stay in it (a
    style's comma is a name's already)."""
    rest = name.split()[1:]
    lowercase = rest and name[:1].isupper() and all(w.isalpha() and w.islower() for w in rest)
    return f'"{name}"' if lowercase or re.search(r"[,:]", re.sub(STYLE, "", name)) else name


def operation_subquestions(operation: dict[str, Any]) -> list[tuple[str, str]]:
    """(label, sub-question) for each option of an operation, in label order."""
    op, labels = operation.get("op"), operation.get("labels") or []
    relation = operation.get("relation")
    kind = _singular_word(operation.get("kind") or "")
    out = []
    for name in labels:
        written = _quoted_if_needed(name)
        # "the director of film A": the planner splits it into its own hop (agent.offline.chains)
        label = f"the {relation} of {kind + ' ' if kind else ''}{written}" if relation else written
        if op == "compare" and operation.get("value_type") == "lifespan":  # two dates per option, birth first
            out += [(name, f"When was {label} born?"), (name, f"When did {label} die?")]
            continue
        if op == "compare":
            question = _compare_question(operation, label)
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
            of_person = re.match(r"(?:the )?([a-z]+) of ", label)  # an option written "the founder of X"
            person = bool(relation) or bool(of_person and _singular_word(of_person.group(1)) in PERSON_NOUNS)
            question = _same_question(operation.get("attribute", ""), label, person)
        elif op == "yes_no":
            question = operation.get("question") or f"Is {label} {operation.get('property', '')}?"
        else:
            continue
        out.append((name, " ".join(question.split())))
    return out


def _compare_question(operation: dict[str, Any], label: str) -> str:
    """The question that reads one option's value for a comparison: its date or its number."""
    head = operation.get("head", "")
    if operation.get("value_type") == "number":
        template = _NUMBER_QUESTION.get(operation.get("criterion", ""))
        noun = re.search(r"\b(?:more|most|fewer|fewest|less|least)\s+([a-z]+)", head, re.I)
        if template:
            return template.format(label)
        return f"How many {noun.group(1)} does {label} have?" if noun else f"How many does {label} have?"
    verb = EVENT_VERB.search(head)
    if verb:
        verb_text = verb.group(1).lower()
    elif operation.get("relation") in PERSON_NOUNS:
        verb_text = "born"  # "Which film has the director who is older": the director's age, not the film's
    elif any(_singular(w) in WORK_NOUNS for w in re.findall(r"[a-z]+", head.lower())) or re.search(
        r"\bc[oa]me out\b", head, re.I
    ):
        verb_text = "released"  # a work comes out when it is released ("Which film came out first")
    elif re.match(r"^\s*who\b", head, re.I) or any(w in _PERSONISH for w in head.lower().split()[:3]):
        verb_text = "born"
    else:
        verb_text = "born or founded"  # "Which is older, A or B?" says nothing of what A is
    return f"When did {label} die?" if verb_text == "died" else f"When was {label} {verb_text}?"


def _same_question(attribute: str, label: str, of_a_person: bool) -> str:
    """The question that reads one option's attribute for "the same <attribute>"."""
    if attribute in ("nationality", "citizenship"):
        return f"What nationality is {label}?"
    if of_a_person and attribute == "country":
        return f"Which country is {label} from?"
    if attribute in ("state", "country", "city", "county", "province", "region", "town", "continent"):
        return f"Which {attribute} is {label} in?"
    return f"What is the {attribute} of {label}?"
