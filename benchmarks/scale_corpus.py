"""A synthetic corpus for the scale benchmark (benchmarks/scale.py corpus): made-up people, places, companies and
films with fixed facts about each, one short document per entity, and multi-hop questions with known answers.

The world is drawn first: every person has a birthplace, a birth year, an employer and a spouse; every film a
director, a year, a studio and a shooting place; every company a founder, a founding year and a seat; every place
the region it lies in. Who is picked for a role follows a Zipf popularity per kind (a few places are the birthplace
of many, most of few), so entity degrees follow a power law as in benchmarks/scale.py's ppr graphs. Then each
entity gets one document (its name as the title, 60-120 words): sentences stating its own facts ("Tarvo Melin was
born in Kessholm in 1931.", "He worked for Dorvane Press."), some facts of the entities it names (the second hop
of a question is then also found next to the first, as in real corpora), and neutral filler sentences. The offline
extractor finds the names (capitalised spans, quoted film titles) and a fact between adjacent names.

Questions (questions.jsonl): "Where was the director of film Z born?", "Where was the founder of O born?"
(two hops: the film's or the company's document names the person, the person's own document says where they were
born) and "Who directed the film Z?" (one hop), each with its answer and the documents that support it.
Everything is deterministic in ``seed``; every text is made here.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

SYLLABLES = (
    "ka ri mo ta ve lo sa ne du pi ra to mi le ko va si nu de ba "
    "lin dor mar ven tis kel bra sten vol har mel ost run gal fer ket"
).split()
FIRST_NAMES = [  # made up, each with the pronoun its documents use
    (name, "he" if i % 2 == 0 else "she")
    for i, name in enumerate(
        "Tarvo Ilse Oskan Mirela Bertil Annika Sven Liva Ruben Edda Kasimir Nora Aldo Ylva Teodor Signe Matti Hedda "
        "Janek Rosa Viggo Elin Casper Dagny Lorens Maja Anton Greta Ivo Britt Felix Tove Gunnar Alva Henrik Selma "
        "Konrad Vera Emil Ingrid Otto Lotte Rasmus Frida Ebbe Karin Leon Astrid Nils Sanna".split()
    )
]
PLACE_ENDINGS = "holm by stad ford vik borg dal mark".split()
COMPANY_KINDS = "Instruments Press Records Shipping Foundry Studios Mills Textiles Optics Works".split()
KINDS = ("person", "place", "company", "film")
SHARES = (0.45, 0.15, 0.15, 0.25)  # of the entities
ZIPF = 0.9  # popularity exponent, as the ppr graph's
FILLER = (
    "The archive of the period holds letters, ledgers and a few photographs.",
    "Little of the early correspondence has survived.",
    "The details given here follow the local records of the time.",
    "Contemporary accounts differ on several minor points.",
    "The main building was restored twice during the last century.",
    "A short account of these years appeared in a regional almanac.",
    "The surviving documents are kept in a small municipal collection.",
    "Several of the original drawings were lost in a fire.",
    "The name is still used for a street and a small square.",
    "It was mentioned in a travel guide of the same decade.",
    "The work attracted modest attention at first and wider interest later.",
    "The exact dates are uncertain because the parish books are incomplete.",
    "The collection also includes maps, receipts and a printed programme.",
    "Its history is told in a short pamphlet sold at the station.",
    "The later years are less well documented than the early ones.",
)


@dataclass
class World:
    """Every entity's name and facts, as arrays indexed by entity number (kinds in blocks: people first)."""

    names: list[str]
    kind: np.ndarray  # index into KINDS
    born_in: np.ndarray  # person -> place
    year: np.ndarray  # person: birth; film: release; company: founding
    employer: np.ndarray  # person -> company
    spouse: np.ndarray  # person -> person
    director: np.ndarray  # film -> person
    studio: np.ndarray  # film -> company
    shot_in: np.ndarray  # film -> place
    founder: np.ndarray  # company -> person
    seat: np.ndarray  # company -> place
    region: np.ndarray  # place -> place
    studied_in: np.ndarray  # person -> place
    star: np.ndarray  # film -> person
    co_star: np.ndarray  # film -> person
    owner: np.ndarray  # company -> company (its later owner)
    near: np.ndarray  # place -> place
    pronoun: np.ndarray  # person: 0 he, 1 she


def _word(number: int, syllables: int) -> str:
    """A made-up word for ``number`` (< len(SYLLABLES) ** syllables), distinct numbers giving distinct words."""
    parts = []
    for _ in range(syllables):
        number, digit = divmod(number, len(SYLLABLES))
        parts.append(SYLLABLES[digit])
    return "".join(parts).capitalize()


def _scattered(j: int, size: int) -> int:
    """A bijection of range(size) that scatters consecutive numbers (so neighbours do not share their first part)."""
    step = 1_000_003  # a prime: coprime with every size used here
    return (j * step + size // 3) % size


def _names(kind: str, count: int) -> list[str]:
    """``count`` distinct names of ``kind``: people "First Surname", places "Stem"+ending, companies "Stem Kind",
    films "Word Word" (up to 2.3M, 373k, 467k and 1.7M of them)."""
    s = len(SYLLABLES)
    if kind == "person":
        size = len(FIRST_NAMES) * s**3
        picks = [_scattered(j, size) for j in range(count)]
        return [f"{FIRST_NAMES[p % len(FIRST_NAMES)][0]} {_word(p // len(FIRST_NAMES), 3)}" for p in picks]
    if kind == "place":
        size = len(PLACE_ENDINGS) * s**3
        picks = [_scattered(j, size) for j in range(count)]
        return [_word(p // len(PLACE_ENDINGS), 3) + PLACE_ENDINGS[p % len(PLACE_ENDINGS)] for p in picks]
    if kind == "company":
        size = len(COMPANY_KINDS) * s**3
        picks = [_scattered(j, size) for j in range(count)]
        return [f"{_word(p // len(COMPANY_KINDS), 3)} {COMPANY_KINDS[p % len(COMPANY_KINDS)]}" for p in picks]
    size = s**4
    return [f"{_word(p // s**2, 2)} {_word(p % s**2, 2)}" for p in (_scattered(j, size) for j in range(count))]


ROLES = (
    "born_in",
    "year",
    "employer",
    "spouse",
    "director",
    "studio",
    "shot_in",
    "founder",
    "seat",
    "region",
    "studied_in",
    "star",
    "co_star",
    "owner",
    "near",
)
SHE = {name for name, pronoun in FIRST_NAMES if pronoun == "she"}


def make_world(entities: int, seed: int = 0) -> World:
    rng = np.random.default_rng(seed)
    counts = [max(2, int(entities * share)) for share in SHARES[:-1]]
    counts.append(max(2, entities - sum(counts)))
    starts = np.concatenate([[0], np.cumsum(counts)])
    names: list[str] = []
    for kind, count in zip(KINDS, counts):
        names += _names(kind, count)

    def popular(kind: str, size: int) -> np.ndarray:
        """``size`` entities of ``kind`` drawn by Zipf popularity (ranks in no particular order of number)."""
        k = KINDS.index(kind)
        weights = 1.0 / np.arange(1, counts[k] + 1) ** ZIPF
        rank_to_entity = rng.permutation(counts[k])
        return starts[k] + rank_to_entity[rng.choice(counts[k], size, p=weights / weights.sum())]

    world = World(
        names,
        np.repeat(np.arange(len(KINDS)), counts),
        pronoun=np.array([n.split()[0] in SHE for n in names], dtype=np.int8),
        **{role: np.full(len(names), -1, dtype=np.int64) for role in ROLES},
    )
    person, place, company, film = (np.arange(starts[k], starts[k + 1]) for k in range(len(KINDS)))
    world.born_in[person] = popular("place", len(person))
    world.year[person] = rng.integers(1890, 1990, len(person))
    world.employer[person] = popular("company", len(person))
    world.spouse[person] = person[(np.arange(len(person)) + rng.integers(1, len(person), len(person))) % len(person)]
    world.director[film] = popular("person", len(film))
    world.year[film] = rng.integers(1920, 2020, len(film))
    world.studio[film] = popular("company", len(film))
    world.shot_in[film] = popular("place", len(film))
    world.founder[company] = popular("person", len(company))
    world.year[company] = rng.integers(1850, 2000, len(company))
    world.seat[company] = popular("place", len(company))
    world.studied_in[person] = popular("place", len(person))
    world.star[film] = popular("person", len(film))
    world.co_star[film] = popular("person", len(film))
    world.owner[company] = popular("company", len(company))
    world.near[place] = popular("place", len(place))
    regions = place[: max(1, len(place) // 100)]  # a place in the first hundredth is also a region
    world.region[place] = rng.choice(regions, len(place))
    return world


def _film(world: World, e: int) -> str:
    return f'"{world.names[e]}"'


def _facts(world: World, e: int, rng: np.random.Generator) -> list[str]:
    """The sentences stating entity ``e``'s own facts, then a few of the entities it names."""
    n, kind = world.names, KINDS[world.kind[e]]
    if kind == "person":
        he = "She" if world.pronoun[e] else "He"
        own = [
            f"{n[e]} was born in {n[world.born_in[e]]} in {world.year[e]}.",
            f"{he} studied in {n[world.studied_in[e]]} and worked for {n[world.employer[e]]} for many years.",
            f"{he} married {n[world.spouse[e]]}.",
        ]
        near = [f"{n[world.employer[e]]} is based in {n[world.seat[world.employer[e]]]}."]
    elif kind == "film":
        d = world.director[e]
        own = [
            f"{_film(world, e)} is a {world.year[e]} film directed by {n[d]}.",
            f"The film was produced by {n[world.studio[e]]} and shot in {n[world.shot_in[e]]}.",
            f"It starred {n[world.star[e]]} and {n[world.co_star[e]]}.",
        ]
        near = [
            f"{n[d]} was born in {n[world.born_in[d]]}.",
            f"{n[world.studio[e]]} is based in {n[world.seat[world.studio[e]]]}.",
        ]
    elif kind == "company":
        f = world.founder[e]
        own = [
            f"{n[e]} was founded by {n[f]} in {world.year[e]}.",
            f"The company is based in {n[world.seat[e]]}.",
        ]
        if world.owner[e] != e:
            own.append(f"It was later bought by {n[world.owner[e]]}.")
        near = [f"{n[f]} was born in {n[world.born_in[f]]} in {world.year[f]}."]
    else:
        own = [f"{n[e]} is a town in {n[world.region[e]]}."] if world.region[e] != e else [f"{n[e]} is a region."]
        if world.near[e] != e:
            own.append(f"It lies near {n[world.near[e]]}.")
        near = [f"{n[world.region[e]]} is a region with several small towns."] if world.region[e] != e else []
    return own + [s for s in near if rng.random() < 0.4]


def document(world: World, e: int, rng: np.random.Generator) -> dict:
    sentences = _facts(world, e, rng)
    target = int(rng.integers(60, 121))
    words = sum(len(s.split()) for s in sentences)
    for i in rng.permutation(len(FILLER)):
        if words >= target - 6:
            break
        sentences.append(FILLER[i])
        words += len(FILLER[i].split())
    return {"id": f"e{e:07d}", "title": world.names[e], "text": " ".join(sentences)}


SHAPES = ("film-director-born", "company-founder-born", "film-director-born", "company-founder-born", "film-director")


def questions(world: World, count: int, seed: int = 0) -> list[dict]:
    """``count`` questions (two hops for 4 in 5; titles unquoted, as 2Wiki writes them) with their answers and supporting documents."""
    rng = np.random.default_rng(seed + 1)
    n = world.names
    films = np.flatnonzero(world.kind == KINDS.index("film"))
    companies = np.flatnonzero(world.kind == KINDS.index("company"))
    out = []
    for i in range(count):
        shape = SHAPES[i % len(SHAPES)]
        if shape == "company-founder-born":
            c = int(rng.choice(companies))
            f = int(world.founder[c])
            q, a, support = f"Where was the founder of {n[c]} born?", n[world.born_in[f]], [c, f]
        else:
            z = int(rng.choice(films))
            d = int(world.director[z])
            if shape == "film-director-born":
                q, a, support = f"Where was the director of film {n[z]} born?", n[world.born_in[d]], [z, d]
            else:
                q, a, support = f"Who directed the film {n[z]}?", n[d], [z]
        out.append(
            {
                "id": f"q{i:04d}",
                "question": q,
                "answer": a,
                "shape": shape,
                "supporting": [f"e{s:07d}" for s in support],
            }
        )
    return out


def write_corpus(out: Path, passages: int, seed: int = 0, n_questions: int = 100) -> dict:
    """corpus.jsonl (one document per entity), questions.jsonl and meta.json in ``out``; the meta returned."""
    out.mkdir(parents=True, exist_ok=True)
    world = make_world(passages, seed)
    rng = np.random.default_rng(seed + 2)
    with (out / "corpus.jsonl").open("w") as fh:
        for e in range(len(world.names)):
            fh.write(json.dumps(document(world, e, rng)) + "\n")
    with (out / "questions.jsonl").open("w") as fh:
        for q in questions(world, n_questions, seed):
            fh.write(json.dumps(q) + "\n")
    meta = {
        "passages": len(world.names),
        "seed": seed,
        "questions": n_questions,
        "per_kind": {k: int((world.kind == i).sum()) for i, k in enumerate(KINDS)},
    }
    (out / "meta.json").write_text(json.dumps(meta, indent=2))
    return meta
