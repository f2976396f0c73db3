"""Relations as data: compositions of relations (kinship) and the words a sentence uses to state one.

A composed relation is a chain of simpler ones, innermost first: "the paternal grandfather of X" is the father
of the father of X, "X's father-in-law" the father of X's spouse. The planner turns each link into a hop.
"""

from __future__ import annotations

import re

COMPOSITIONS: dict[str, tuple[str, ...]] = {
    "paternal grandfather": ("father", "father"),
    "paternal grandmother": ("father", "mother"),
    "maternal grandfather": ("mother", "father"),
    "maternal grandmother": ("mother", "mother"),
    "grandfather": ("father", "father"),
    "grandmother": ("father", "mother"),
    "great-grandfather": ("father", "father", "father"),
    "father-in-law": ("spouse", "father"),
    "mother-in-law": ("spouse", "mother"),
    "brother-in-law": ("spouse", "brother"),
    "sister-in-law": ("spouse", "sister"),
    "son-in-law": ("daughter", "husband"),
    "daughter-in-law": ("son", "wife"),
    "paternal uncle": ("father", "brother"),
    "maternal uncle": ("mother", "brother"),
    "uncle": ("father", "brother"),
    "paternal aunt": ("father", "sister"),
    "maternal aunt": ("mother", "sister"),
    "aunt": ("father", "sister"),
    "stepfather": ("mother", "spouse"),
    "stepmother": ("father", "spouse"),
    "stepson": ("spouse", "son"),
    "stepdaughter": ("spouse", "daughter"),
    "grandson": ("child", "son"),
    "granddaughter": ("child", "daughter"),
    "grandchild": ("child", "child"),
    "nephew": ("sibling", "son"),
    "niece": ("sibling", "daughter"),
}


# A composed relation as written: "father-in-law", "father in law", "paternal grandfather" (longest first).
COMPOSED = re.compile(
    r"\b(?:"
    + "|".join(
        re.escape(name).replace(r"\-", r"[\s-]").replace(r"\ ", r"\s+")
        for name in sorted(COMPOSITIONS, key=len, reverse=True)
    )
    + r")s?\b",
    re.I,
)


def composition(written: str) -> tuple[str, ...] | None:
    """The chain of a composed relation as written ("Father-in-law", "paternal  grandfathers"), or None."""
    key = re.sub(r"[\s-]+", " ", written.lower()).strip()
    key = key[:-1] if key.endswith("s") and key[:-1] in _KEYS else key
    return _KEYS.get(key)


_KEYS = {re.sub(r"[\s-]+", " ", k): v for k, v in COMPOSITIONS.items()}


# "the grandfather of X on his father's side" is X's paternal grandfather
_SIDE = re.compile(
    r"\b(grand(?:father|mother|parents?))\b(.*?),?\s+on (?:his|her|their|the) (father|mother)(?:'s|’s) side\b", re.I
)


def with_side(text: str) -> str:
    """``text`` with "the grandfather of X on his father's side" written "the paternal grandfather of X"."""
    match = _SIDE.search(text)
    if not match:
        return text
    side = "paternal" if match.group(3).lower() == "father" else "maternal"
    return f"{text[: match.start()]}{side} {match.group(1)}{match.group(2)}{text[match.end() :]}"


# What a sentence says when it states a relation, as words (the reader compares their stems with a sentence's): the
# relation itself ("his father, Y") and its inverse ("X was the son of Y", "Y's daughter X"), where the answer is the
# object of the inverse word's "of" or its possessor, never the word's own subject or apposition.
_PARENT, _CHILD = {"father", "mother", "parent"}, {"son", "daughter", "child"}
_SPOUSE = {"spouse", "married", "marry", "marriage", "wife", "husband", "widow"}
STATED_BY: dict[str, tuple[set[str], set[str]]] = {
    "father": ({"father"}, _CHILD),
    "mother": ({"mother"}, _CHILD),
    "parent": (_PARENT, _CHILD),
    "son": ({"son", "child"}, _PARENT),
    "daughter": ({"daughter", "child"}, _PARENT),
    "child": (_CHILD, _PARENT),
    "spouse": (_SPOUSE, set()),
    "wife": (_SPOUSE, set()),
    "husband": (_SPOUSE, set()),
    "brother": ({"brother", "sibling"}, set()),
    "sister": ({"sister", "sibling"}, set()),
    "sibling": ({"sibling", "brother", "sister"}, set()),
}
# The relations that name whom they relate by sex: a candidate its own article calls "he" is nobody's mother.
PRONOUN_OF = {
    **dict.fromkeys(("father", "son", "husband", "brother"), "he"),
    **dict.fromkeys(("mother", "daughter", "wife", "sister"), "she"),
}
# Relations that read the same both ways ("X married Y", "X was the wife of Y", "X's brother Y"): the answer is
# whichever side of the word the question's own person is not on.
SYMMETRIC = _SPOUSE | {"brother", "sister", "sibling"}


def kinship_asked(question: str) -> str:
    """The kinship a question asks ("father", "spouse"), or "": the first such word alphabetically, so a question
    is read the same way everywhere."""
    return min((w for w in re.findall(r"[\w'-]+", question.lower()) if w in STATED_BY), default="")


# Every word that states a kinship relation: the reader reads their two sides (agent.offline.reader._kin_tie).
KINSHIP_WORDS = set().union(*(direct | inverse for direct, inverse in STATED_BY.values()))


# Attributes a hop can ask of something, besides the kinds of agent.offline.questions (person, place ... nouns).
ATTRIBUTES = set(
    """nationality citizenship occupation profession religion genre language birthplace hometown residence
spouse partner""".split()
)
