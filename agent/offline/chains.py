"""Nested relations read from a question's parse: "the A of the B of C", "C's B's A", kinship compositions.

``relation_chain`` finds the outermost noun phrase that names something through relations ("the place of birth
of the performer of song Changed It", "Edda Morlund's paternal grandfather"); ``Chain.hops`` turns it into
sub-questions, innermost first, each asking for one relation of the answer before it. A composed relation
("father-in-law") is expanded by the table in ``agent.offline.relations``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agent.offline.gazetteer import country_of_demonym
from agent.offline.parsing import Masked, masked_parse
from agent.offline.questions import ALL_NOUNS, PERSON_NOUNS, REFERENCE, WORK_NOUNS, name_spans
from agent.offline.relations import ATTRIBUTES, COMPOSED, KINSHIP_WORDS, STATED_BY, composition, with_side

if TYPE_CHECKING:
    from spacy.tokens import Token

# "the city of Tarnholm", "the river Selva": a kind of place before its name is the name, not a relation of it.
KIND_OF_NAME = set(
    """city town village province state county region district island river lake sea ocean mountain country
kingdom republic municipality borough parish valley peninsula bay desert forest""".split()
)
# Parts of a place named after it ("the greater area of X", "the valley of X"): asked about with the place
_PARTS_OF_A_PLACE = {"valley", "area", "suburbs", "outskirts", "vicinity"}
# Nouns that point through to the noun after them: "the name of the director of X" is the director of X, "the
# composer of the music of X" the composer of X (a work's music, score or lyrics are its own).
TRANSPARENT = {"name", "names", "title", "identity", "music", "score", "soundtrack", "lyrics"}
# A bare noun after "of" that completes the relation: "place of birth", "date of death", "country of origin".
_NOUN_TAGS = {"NN", "NNS"}
_BEFORE_KIND = {"of", "the", "a", "an", "'s", "’s"}


@dataclass
class Chain:
    relations: list[str]  # outermost first, compositions expanded ("father", "spouse" for "father-in-law")
    inner: str  # what the innermost relation is of: "film Harbour Lights", "Edda Morlund", "#1"
    keep_outer: bool  # the question asks for the outermost relation itself ("Who is the A of ...?")
    before: str  # the question's text before the phrase and after it
    after: str
    phrase: str  # the phrase as written ("the founder of Halvard Instruments")

    @property
    def needs_hops(self) -> bool:
        return len(self.relations) >= (2 if self.keep_outer else 1)

    def hops(self, add: Callable[[str], str]) -> str:
        """The final question; ``add`` is given each sub-question, innermost first, and returns the reference
        ("#n") that stands for its answer in the next."""
        relations = list(reversed(self.relations))  # innermost first
        kept = relations.pop() if self.keep_outer else None
        subject = self.inner
        for relation in relations:
            subject = add(f"{wh_for(relation)} is the {relation} of {subject}?")
        phrase = f"the {kept} of {subject}" if kept else subject
        return " ".join(f"{self.before}{phrase}{self.after}".split()).replace(" ?", "?")


def wh_for(relation: str) -> str:
    head = re.sub(r"^co-", "", relation.split(" of ")[0].split()[-1].lower())  # a co-founder is a founder
    return "Who" if head in PERSON_NOUNS or head in STATED_BY or head.rstrip("s") in PERSON_NOUNS else "What"


def _is_name(m: Masked, token: Token) -> bool:
    return token.text in m.names or bool(REFERENCE.fullmatch(token.text))


def _name_phrase(m: Masked, token: Token) -> tuple[str, int] | None:
    """(the text of a name with what it is: "film Harbour Lights", "the film X"; the index of its last word),
    or None if ``token`` does not name something."""
    if _is_name(m, token):
        return m.span_text(_name_tokens(m, token)), token.i
    named = [c for c in token.children if _is_name(m, c) and c.dep_ in ("appos", "compound", "npadvmod", "nmod")]
    if token.tag_ in _NOUN_TAGS and named and named[-1].i > token.i:  # "the film Xalor" with "film" as the head
        return m.span_text([t for t in token.subtree if t.dep_ not in ("case", "punct") and t.i <= named[-1].i]), named[
            -1
        ].i
    if named and named[-1].i == token.i - 1 and _name_before(m, token) is None:
        # "film Xalor work?": the parser took the verb for a noun (not "the Xalor performer": his, not Xalor; not
        # "the Norwegian king": a person's place or people)
        return None if _from_place_or_people(m, token, named[-1]) else _name_phrase(m, named[-1])
    return None


def _name_tokens(m: Masked, name: Token) -> list[Token]:
    """The words of a name with what it is and its "the" where the parser hung them elsewhere."""
    tokens = [t for t in name.subtree if t.dep_ not in ("case", "punct") and t.i <= name.i]
    first = min(t.i for t in tokens)
    kind = m.doc[first - 1] if first > 1 else None
    if kind is not None and kind.tag_ in _NOUN_TAGS and kind.text.islower() and m.doc[first - 2].lower_ in _BEFORE_KIND:
        tokens.append(kind)  # "of film Xalor" parsed with "film" elsewhere: what the name is belongs to it
        first -= 1
    # "the Xalor study": the parser gave "the" to the verb (in "the Xalor performer" it is the performer's)
    owner = _name_before(m, name.head)
    if first > 0 and m.doc[first - 1].lower_ == "the" and (owner is None or owner.i != name.i):
        tokens.append(m.doc[first - 1])
    return tokens


def _name_before(m: Masked, token: Token) -> Token | None:
    """The name written before a person's role as whose it is: "the Xalor performer" (the performer of Xalor); not
    before kin ("the Vandt brothers" are brothers named Vandt) nor a kind of thing ("the Xalor franchise" is X)."""
    role = token.lemma_.lower()
    if role not in PERSON_NOUNS or role in KINSHIP_WORDS:
        return None
    name = next(
        (
            c
            for c in token.lefts
            if c.dep_ == "compound" and _is_name(m, c) and c.i > 0 and m.doc[c.i - 1].lower_ == "the"
        ),
        None,
    )
    return None if name is None or _place_or_people(m, name) else name


def _place_or_people(m: Masked, name: Token) -> bool:
    """Whether a name before a role says where the person is from: "the Philadelphia singer", "the Swedish
    director" (by the entity recogniser on the question as written, and the demonyms)."""
    written = m.names.get(name.text, name.text)
    if country_of_demonym(written):
        return True
    return m.written_entities().get(written) in ("GPE", "LOC", "NORP")


def _from_place_or_people(m: Masked, noun: Token, name: Token) -> bool:
    """Whether a name before a person's noun says where the person is from ("the Norwegian king")."""
    return noun.lemma_.lower() in PERSON_NOUNS and _place_or_people(m, name)


def _relation_word(m: Masked, token: Token) -> str | None:
    """The relation a noun names ("director", "first wife", "father-in-law"), or None for other nouns."""
    if token.i in m.kin:
        return m.kin[token.i]
    if token.tag_ not in _NOUN_TAGS or not token.text.isalpha() or not token.text.islower():
        return None
    if any(c.dep_ == "det" and c.lower_ in ("a", "an", "one", "every", "each") for c in token.children):
        return None  # "a member of X" says what something is, it does not name one
    if not _known_relation(token.text):
        return None  # "the lens of X", "the end of X": a part or a moment, not something a hop can name
    modifiers = [c for c in token.lefts if c.dep_ in ("amod", "compound") and c.text.islower() and c.text.isalpha()]
    return " ".join([m.text_of(c) for c in modifiers] + [token.text])


def _known_relation(noun: str) -> bool:
    singular = noun[:-1] if noun.endswith("s") else noun
    return any(word in ALL_NOUNS or word in STATED_BY or word in ATTRIBUTES for word in (noun, singular)) or (
        noun in TRANSPARENT
    )


def _of_object(m: Masked, token: Token) -> Token | None:
    """What "<token> of ..." is of: the parser's object of "of", or, when the small model lost it (no object, or
    a name swallowed as a compound of the next word: "the director of Xalor die?"), the first name or noun after
    "of" in the sentence's order."""
    # "the rapper behind the album X" is its rapper as "the rapper of" is; "the novel behind the film X" is what
    # the film is based on, not a novel of the film
    # "the sequel to X", "the successor to X" name their relation with "to"
    through = ("of", "to") if token.lemma_.lower() in WORK_NOUNS else ("of", "to", "behind")
    of = next((c for c in token.children if c.dep_ == "prep" and c.lower_ in through), None)
    following = token.doc[token.i + 1] if token.i + 1 < len(token.doc) else None
    if of is None and following is not None and following.dep_ == "prep" and following.lower_ in through:
        of = following  # "the musician behind the album X attend?": the small model hung "behind" on the verb
    if of is None:
        return None
    pobj = next((c for c in of.children if c.dep_ == "pobj"), None)
    if pobj is not None:
        found = _parsed_object(m, pobj)
        if found is not None:
            return found
    for after in token.doc[of.i + 1 :]:
        if _is_name(m, after):
            return after
        if after.tag_ in ("DT", "PRP$", "JJ", "CD") or after.dep_ in ("det", "amod", "nummod"):  # "the 1971 album"
            continue
        if after.tag_ in _NOUN_TAGS:
            following = after.doc[after.i + 1] if after.i + 1 < len(after.doc) else None
            return following if following is not None and _is_name(m, following) else after
        break
    return pobj


def _parsed_object(m: Masked, pobj: Token) -> Token | None:
    """The object of "of" as parsed, mended where the small model is known to go wrong; None when it has none."""
    if not _is_name(m, pobj):
        swallowed = [c for c in pobj.lefts if _is_name(m, c) and c.dep_ in ("compound", "nmod", "amod")]
        owned = _name_before(m, pobj) is not None  # "of the Xalor performer": the performer is the object
        # (not "of the former Czech president": a person's place or people before the noun)
        swallowed = [c for c in swallowed if not _from_place_or_people(m, pobj, c)]
        if swallowed and pobj.tag_ not in ("NNP", "NNPS") and not pobj.text.istitle() and not owned:
            return swallowed[-1]  # "of Xalor die": the name is the object, "die" the question's verb
    following = pobj.doc[pobj.i + 1] if pobj.i + 1 < len(pobj.doc) else None
    if pobj.tag_ in _NOUN_TAGS and pobj.text.islower() and following is not None and _is_name(m, following):
        return following  # "of the song X born?": the parser made "X born" a clause of "song"; X is the object
    return pobj if pobj.tag_ in _NOUN_TAGS | {"NNP", "NNPS", "PRP"} else None


def _chain_at(m: Masked, token: Token) -> tuple[list[str], str, int] | None:
    """(relations outermost first, the innermost name, the index of the phrase's last word) of the noun phrase
    headed by ``token``, or None when it names nothing through a relation."""
    relation = _relation_word(m, token)
    if relation is None:
        return None
    if _named_after(m, token):
        return None
    # "X's performer"; "the X performer": a name before the relation is whose it is, as a possessive is
    owner = next((c for c in token.children if c.dep_ == "poss"), None) or _name_before(m, token)
    relation, target, ends_at = _completed(m, token, relation)
    if owner is not None:
        target = owner
    if target is None:
        return None
    last = ends_at if owner is not None else None  # "X's father", "X's city of birth": it ends on the relation
    if token.text in TRANSPARENT and token.i not in m.kin:
        name = _name_phrase(m, target)
        return _chain_at(m, target) or (([], name[0], name[1]) if name else None)
    name = _name_phrase(m, target)
    possessor = next((c for c in target.children if c.dep_ == "poss" and _is_name(m, c)), None)
    if name is None and possessor is not None and _owns_the_phrase(m, possessor, relation, target):
        # "the composer of film X's birthday / nationality": the possessive is the whole phrase's (a film has
        # no birthday); a person after it is the name's ("the father of X's husband"), and so is what a person
        # or a relation that is no person's has ("the population of footballer X's hometown")
        name = _name_phrase(m, possessor)
        return ([relation], name[0], name[1]) if name else None
    if name is not None:
        if owner is None and _names_itself(token, relation, name[0]):
            return None
        return [relation], name[0], last if last is not None else name[1]
    return _outer(relation, _chain_at(m, target), target, last)


def _owns_the_phrase(m: Masked, possessor: Token, relation: str, target: Token) -> bool:
    """Whether "the <relation> of X's <target>" is the possessive of the whole phrase: a person's relation of a
    name that does not say it is a person's ("film X"), and a target that is no person."""
    phrase = _name_phrase(m, possessor)
    a_person = phrase is not None and phrase[0].split()[0].lower() in PERSON_NOUNS  # "footballer Ivo Marrak"
    return wh_for(relation) == "Who" and not a_person and wh_for(target.text) == "What"


def _named_after(m: Masked, token: Token) -> bool:
    """Whether a name follows the relation word, saying who it is: "X's husband Emil Stavre", "X's band the
    Grey Tides"."""
    after = list(m.doc[token.i + 1 : token.i + 3])
    named = after[1:] if after and after[0].lower_ == "the" else after[:1]
    return bool(named) and named[0].text in m.names


def _names_itself(token: Token, relation: str, name: str) -> bool:
    """Whether "the <kind> of <name>" is the name itself: "the city of Tarnholm" is Tarnholm; "the country of #1"
    (a painter) and "the largest city of X" are hops ("head of state of #1", no determiner, is one relation)."""
    if token.text in ("port", "harbour", "harbor") and relation == token.text:
        return True  # "the port of #1" is the city's port, named after it: the next hop asks about it so
    if token.text in _PARTS_OF_A_PLACE:
        return True  # "the greater area of #1", "the valley of #1": the place's own, asked about with it
    reference = REFERENCE.fullmatch(name) and any(c.dep_ == "det" for c in token.children)
    return token.text in KIND_OF_NAME and not reference and " " not in relation


def _outer(
    relation: str, inner: tuple[list[str], str, int] | None, target: Token, last: int | None
) -> tuple[list[str], str, int] | None:
    """The chain of ``relation`` around the chain of what it is of; "the composer of the music of X" goes
    through "music" to X."""
    if inner is None or not inner[0] and target.text not in TRANSPARENT:
        return None
    return [relation] + inner[0], inner[1], last if last is not None else inner[2]


def _completed(m: Masked, token: Token, relation: str) -> tuple[str, Token | None, int]:
    """(the relation with a bare noun after "of" that completes it: "place of birth", "date of death"; what
    it is of; the index of the relation's last word)."""
    target = _of_object(m, token)
    if target is None or target.tag_ not in _NOUN_TAGS or not target.text.islower() or not target.text.isalpha():
        return relation, target, token.i
    if any(c.dep_ in ("det", "poss") for c in target.children) or _name_phrase(m, target):
        return relation, target, token.i
    return f"{relation} of {target.text}", _of_object(m, target) or _of_object_after(token, target), target.i


def _of_object_after(token: Token, completed: Token) -> Token | None:
    """The second "of" of "the place of birth of X" when the parser hangs it on the first noun."""
    preps = [c for c in token.children if c.dep_ == "prep" and c.lower_ == "of" and c.i > completed.i]
    return next((c for p in preps for c in p.children if c.dep_ == "pobj"), None)


def _expand(relations: list[str]) -> list[str]:
    """Composed relations replaced by their chains (outermost first)."""
    out: list[str] = []
    for relation in relations:
        chain = composition(relation)
        out += list(reversed(chain)) if chain else [relation]
    return out


def _asks_for(m: Masked, token: Token, last: int) -> bool:
    """``token`` is what the question asks for: "Who/What is <token>?", not "What nationality is <token>?"."""
    head = token.head
    if head.lemma_ != "be" or token.dep_ not in ("attr", "nsubj", "nsubjpass"):
        return False
    if last + 1 < len(token.doc) and token.doc[last + 1].tag_ == "POS":
        return False  # "What was the founder of X's profession?" asks for what the phrase owns
    words = [t for t in token.doc[last + 1 :] if not t.is_punct]
    if words and words[-1].tag_ == "IN":
        return False  # "Who was the director of X an assistant to?", "... married to?": a stranded preposition's object
    # "Who/What is the A of ...?", "Where is the headquarters of ...?" (not "When was the A of ... born?")
    ends = all(t.is_punct for t in token.doc[last + 1 :])
    return any(
        c.tag_ in ("WP", "WP$")
        and c.dep_ in ("attr", "nsubj")
        or c.tag_ == "WRB"
        and c.lower_ in ("where", "when")
        and ends
        for c in head.children
        if c.i != token.i
    )


def _clausal(token: Token) -> set[int]:
    """The question's own words the parser hung on a relation noun ("Why did [the director of X] die?" with
    "director" as the root), and its wh-phrase ("Whom did [...] marry?", "What instrument did [...] play?")."""
    return {
        t.i
        for c in token.children
        if c.dep_ in ("advmod", "aux", "auxpass", "neg", "punct")
        or any(w.tag_ in ("WP", "WDT", "WRB") for w in c.subtree)
        and c.i < token.i
        for t in c.subtree
    }


def relation_chain(text: str) -> Chain | None:
    """The outermost chain of relations in ``text`` (see the module docstring), or None."""
    text = with_side(text)
    kin = [(m.start(), m.end(), "parent") for m in COMPOSED.finditer(text)]
    # "co-founder" is one relation word, which the parser splits at the hyphen ("co", "-", "founder")
    kin += [(m.start(), m.end(), m.group(1)) for m in re.finditer(r"\bco-([a-z]+)\b", text, re.I)]
    m = masked_parse(text, name_spans(text), kin)
    found = [(token, _chain_at(m, token)) for token in m.doc]
    chains = [(token, chain) for token, chain in found if chain and chain[0]]
    if not chains:
        return None
    # the outermost: the one whose phrase holds the most relations ("X's husband's mother", not "X's husband")
    token, (relations, inner, last) = max(chains, key=lambda c: (len(c[1][0]), -c[0].i))
    relations = _expand(relations)
    keep = _asks_for(m, token, last)
    clausal = _clausal(token)
    first = min(t.i for t in token.subtree if t.i not in clausal)
    quotes = sum(t.tag_ in ("``", "''") for t in m.doc[first : last + 1])  # the model tags either way round
    if quotes % 2 and last + 1 < len(m.doc) and m.doc[last + 1].text in ("'", '"', "’", "”"):  # or as a possessive
        last += 1  # "the director of 'Tic Tac'": the title's closing quote is the phrase's, not the question's
    before = m.span_text([t for t in m.doc if t.i < first])
    after = m.span_text([t for t in m.doc if t.i > last])
    space = " " if m.doc[last].whitespace_ or after[:1].isalnum() else ""
    phrase = m.span_text([t for t in m.doc if first <= t.i <= last])
    return Chain(relations, inner, keep, before + " " if before else "", space + after if after else "", phrase)
