"""The offline reader on small hand-written evidence: answer types, ranking, "not found", combine, summaries."""

import pytest

from agent.offline.questions import question_type
from agent.offline.reader import (
    combine,
    extractive_answer,
    extractive_summary,
    is_debris,
    parse_date,
    parse_number,
    read_answer,
)
from agent.records import NOT_FOUND
from graph_store.retrieval import Evidence
from tests.helpers import chunk


@pytest.mark.parametrize(
    "question, expected, noun",
    [
        ("Who founded Brask Optics?", "person", None),
        ("Whom did Lise Vandt marry?", "person", None),
        ("Where was Edda Morlund born?", "place", None),
        ("Which country is the Marn River in?", "place", "country"),
        ("In which city was the founder of Halvard Instruments born?", "place", "city"),
        ("What city did the singer live in when he died?", "place", "city"),  # not a date: "what city" decides
        ("Which record label released her recordings?", "organisation", "label"),
        ("Which company acquired Brask Optics?", "organisation", "company"),
        ("When was Halvard Instruments founded?", "date", None),
        ("In what year was the comet discovered?", "year", "year"),
        ("How many stores are in Ostmark?", "number", None),
        ("How long is the Selva?", "number", None),
        ("What percentage of the town works there?", "number", "percent"),
        ("Which opera premiered in 1958?", "work", "opera"),
        ("Which mountain rises above Ludvik?", "place", "mountain"),
        ("What kind of university is the University of Kessel?", "organisation", "university"),
        ("What currency did Ostmark use?", "thing", "currency"),
        ("Was Edda Morlund born in Tarnholm?", "yes/no", None),
        ("Are Ana Keldor and Piet Sarandon both astronomers?", "yes/no", None),
        ("Which is older, Halvard Instruments or Nordlys Records?", "comparison", None),
        ("Why did Halvard Instruments acquire Brask Optics?", "explanation", None),
        ("What are the main themes of these documents?", "explanation", None),
        ("Lise Vandt's opera, which premiered in what year, is set in Ludvik?", "year", "year"),
        ("The label was founded in 1949 and is based where?", "place", None),
        ("How to Eat, released in which year, is a cookery book?", "year", "year"),  # "How to" is a title
    ],
)
def test_answer_type_comes_from_the_question(question, expected, noun):
    asked = question_type(question)
    assert asked.type == expected
    if noun:
        assert asked.noun == noun


def test_the_relation_cue_beats_a_more_prominent_name(embedder):
    # The chief engineer is named first and in the best-ranked chunk; the founder is named after "founded ... by".
    evidence = [
        chunk(
            1,
            "Brask Optics",
            "Brask Optics is a lens maker in Ludvik. Its chief engineer is Olaf Lind, "
            "who designed its coating machines. It was founded in 1952 by Jonas Brask.",
        ),
        chunk(2, "Olaf Lind", "Olaf Lind is an engineer from Hallin. He joined Brask Optics in 1980.", 0.8),
    ]
    reading = read_answer("Who founded Brask Optics?", evidence, embedder)
    assert reading.answer_type == "person"
    assert reading.answer == "Jonas Brask"
    assert "founded in 1952 by Jonas Brask" in reading.best.sentence and reading.best.evidence_id == "c1"
    assert [c.answer for c in reading.candidates][:2] == ["Jonas Brask", "Olaf Lind"]
    assert 0 < reading.candidates[1].confidence <= reading.best.confidence <= 1


def test_typed_candidates_by_question(embedder):
    evidence = [
        chunk(
            1,
            "Selva",
            "The Selva is a river of Ostmark, 412 kilometres long. It rises in the Brannic "
            "Mountains and reaches the Grey Sea at Tarnholm, where a bridge was built in 1904.",
        )
    ]
    assert read_answer("How long is the Selva?", evidence, embedder).answer == "412 kilometres"
    assert read_answer("When was the bridge at Tarnholm built?", evidence, embedder).answer == "1904"
    assert read_answer("Where does the Selva reach the Grey Sea?", evidence, embedder).answer == "Tarnholm"


def test_a_count_is_written_without_the_noun_the_question_counts(embedder):
    evidence = [chunk(1, "Kessel", "Kessel has 35 bakeries and 4 bridges. Its university has 12,400 students.")]
    assert read_answer("How many students does the university of Kessel have?", evidence, embedder).answer == "12,400"


def test_life_dates_after_a_name(embedder):
    evidence = [
        chunk(1, "Tomas Vey", "Tomas Vey (1925-1999) was an amateur astronomer. In 1967 he discovered a comet.")
    ]
    assert read_answer("When was Tomas Vey born?", evidence, embedder).answer == "1925"
    assert read_answer("When did Tomas Vey die?", evidence, embedder).answer == "1999"


def test_the_article_subject_behind_a_pronoun(embedder):
    evidence = [chunk(1, "Edda Morlund", "Edda Morlund was an engineer. In 1921 she founded Halvard Instruments.")]
    assert read_answer("Who founded Halvard Instruments?", evidence, embedder).answer == "Edda Morlund"


def test_never_an_entity_the_question_names(embedder):
    evidence = [chunk(1, "Edda Morlund", "Edda Morlund was born in Tarnholm. Edda Morlund studied in Kessel.")]
    reading = read_answer("Where was Edda Morlund born?", evidence, embedder)
    assert reading.answer == "Tarnholm"
    assert all("Morlund" not in c.answer for c in reading.candidates)
    only_the_subject = [chunk(1, "Edda Morlund", "Edda Morlund was an engineer and industrialist.")]
    assert read_answer("Who was Edda Morlund's teacher?", only_the_subject, embedder).candidates == []


def test_another_spelling_of_a_question_name_is_not_an_answer(embedder):
    evidence = [chunk(1, "Kim Jong-chul", "Kim Jong Chol is the son of Kim Jong-il and Ko Yong-hui.")]
    answers = [c.answer for c in read_answer("Who is the father of Kim Jong-chul?", evidence, embedder).candidates]
    assert "Kim Jong Chol" not in answers and answers[0] == "Kim Jong-il"


def test_not_found_is_said_plainly(embedder):
    evidence = [chunk(1, "Lake Orrin", "Lake Orrin is a lake in Ostmark. The town of Vessby lies on its shore.")]
    reading = read_answer("When was Lake Orrin formed?", evidence, embedder)
    assert reading.candidates == [] and reading.answer == NOT_FOUND
    assert reading.reason.startswith("not found") and "date" in reading.reason
    assert read_answer("Who designed it?", [], embedder).reason.startswith("not found")
    wrapped = extractive_answer("When was Lake Orrin formed?", evidence, embedder)
    assert (wrapped.answer, wrapped.evidence_ids, wrapped.score) == (NOT_FOUND, [], 0.0)


@pytest.mark.parametrize(
    "text, debris",
    [
        ("State Sport Year Adopted Alabama Football 1999 Alaska Dog Mushing 1972", True),
        ("Name | Born | Died", True),
        ("1901 1902 1903 1904 1905 1906", True),
        ("Alabama", True),
        ("The Selva is a river of Ostmark, 412 kilometres long.", False),
        ("In 1998 Halvard Instruments acquired Brask Optics of Ludvik.", False),
    ],
)
def test_table_rows_and_list_debris_are_recognised(text, debris):
    assert is_debris(text) is debris


def test_table_debris_is_never_an_answer(embedder):
    table = Evidence(
        id="t",
        kind="chunk",
        score=1.0,
        retriever="test",
        titles=["State sports"],
        text="State sports\nState Sport Year Adopted Alabama Football 1999 Alaska Dog Mushing 1972",
    )
    assert read_answer("Which state adopted dog mushing as its sport?", [table], embedder).candidates == []
    prose = chunk(2, "Dog mushing", "Dog mushing was adopted as the state sport of Alaska in 1972.", 0.5)
    assert read_answer("Which state adopted dog mushing as its sport?", [table, prose], embedder).answer == "Alaska"


def test_the_country_a_question_asks_for(embedder):
    evidence = [
        chunk(
            1,
            "Marn River",
            "The Marn River rises in the Kobe District and flows south through Zimbabwe into the Limpopo.",
        )
    ]
    reading = read_answer("Which country is the Marn River in?", evidence, embedder)
    assert reading.answer == "Zimbabwe"


def test_extractive_answer_is_the_best_candidate(embedder):
    evidence = [chunk(1, "Tarnholm", "The river Selva flows through Tarnholm. Tarnholm is a port city.")]
    found = extractive_answer("Which river flows through Tarnholm?", evidence, embedder)
    assert found.answer == "Selva" and found.evidence_ids == ["c1"]
    assert found.sentence == "The river Selva flows through Tarnholm." and 0 < found.score <= 1
    assert found.reading.best.answer == "Selva"


# --- comparisons, yes/no, combine -------------------------------------------------------------------------

PEOPLE = [
    chunk(1, "Edda Morlund", "Edda Morlund (1889-1962) was an engineer born in Tarnholm."),
    chunk(2, "Piet Sarandon", "Piet Sarandon (1894-1970) was an astronomer born in Kessel."),
    chunk(3, "Lise Vandt", "Lise Vandt (1901-1983) was a composer. She was married to Piet Sarandon."),
]


def test_a_comparison_is_read_per_option_and_combined(embedder):
    reading = read_answer("Who was born first, Lise Vandt or Edda Morlund?", PEOPLE, embedder)
    assert reading.answer_type == "comparison" and reading.answer == "Edda Morlund"
    assert "1889" in reading.explanation and "1901" in reading.explanation
    assert [c.answer for c in reading.candidates] == ["Edda Morlund", "Lise Vandt"]


def test_yes_no_questions(embedder):
    assert read_answer("Are Piet Sarandon and Edda Morlund both astronomers?", PEOPLE, embedder).answer == "no"
    assert read_answer("Was Edda Morlund born in Tarnholm?", PEOPLE, embedder).answer == "yes"
    assert read_answer("Was Piet Sarandon born in Tarnholm?", PEOPLE, embedder).answer == "no"


def test_combine_compares_dates_and_names_the_winner():
    older = {"op": "compare", "criterion": "older", "prefer": "min", "value_type": "date", "labels": ["A", "B"]}
    answer, explanation, confidence = combine(
        older, "Which is older, A or B?", [("A", "4 February 1948"), ("B", "1921")]
    )
    assert answer == "B" and "1948" in explanation and 0 < confidence <= 1
    assert combine(older, "", [("A", "March 1950"), ("B", "June 1950")])[0] == "A"  # same year: the month decides
    younger = {**older, "criterion": "younger", "prefer": "max"}
    assert combine(younger, "", [("A", "1889"), ("B", "1901")])[0] == "B"
    assert combine(older, "", [("A", "not found"), ("B", "not found")])[0] == NOT_FOUND
    guess = combine(older, "", [("A", "1889"), ("B", "not found")])
    assert guess[0] == "A" and guess[2] < 0.3  # one value only: a guess, said so


def test_combine_compares_numbers_with_units():
    longer = {"op": "compare", "criterion": "longer", "prefer": "max", "value_type": "number", "labels": ["A", "B"]}
    assert combine(longer, "", [("A", "412 kilometres"), ("B", "96 kilometres")])[0] == "A"
    assert combine(longer, "", [("A", "1,200 m"), ("B", "3 km")])[0] == "B"
    assert combine(longer, "", [("A", "2.5 million"), ("B", "900,000")])[0] == "A"


def test_combine_both_same_and_choose():
    both = {"op": "both", "property": "astronomers", "labels": ["A", "B"]}
    assert combine(both, "", [("A", "yes"), ("B", "yes")])[0] == "yes"
    assert combine(both, "", [("A", "yes"), ("B", "no")])[0] == "no"
    same = {"op": "same", "attribute": "country", "labels": ["A", "B"]}
    assert combine(same, "", [("A", "Norway"), ("B", "norway")])[0] == "yes"
    assert combine(same, "", [("A", "Norway"), ("B", "Sweden")])[0] == "no"
    choose = {"op": "choose", "property": "is American", "labels": ["A", "B"]}
    assert combine(choose, "", [("A", "no"), ("B", "yes")])[0] == "B"


@pytest.mark.parametrize(
    "text, value",
    [
        ("4 February 1948", (1948, 2, 4)),
        ("February 4, 1948", (1948, 2, 4)),
        ("1921", (1921, 1, 1)),
        ("the 1960s", (1960, 1, 1)),
        ("19th century", (1800, 1, 1)),
        ("AD 43", (43, 1, 1)),
    ],
)
def test_parse_date(text, value):
    assert parse_date(text) == value


@pytest.mark.parametrize(
    "text, value",
    [
        ("412 kilometres", 412000),
        ("6,960", 6960),
        ("$1.18 trillion", 1.18e12),
        ("5.1%", 5.1),
        ("twice", 2),
        ("3 km", 3000),
        ("30 cm", 0.3),
    ],
)
def test_parse_number(text, value):
    assert parse_number(text) == pytest.approx(value)


def test_extractive_summary_cites_evidence_by_position(embedder):
    evidence = [
        chunk(1, "Vessby", "Vessby is a small town on Lake Orrin.", 0.4),
        chunk(
            2,
            "Brask Optics",
            "In 1998 Brask Optics was acquired by Halvard Instruments, which wanted its "
            "coating process. The firm made camera lenses.",
        ),
    ]
    text, ids = extractive_summary(
        "Why did Halvard Instruments acquire Brask Optics?", evidence, embedder, max_sentences=2
    )
    assert text.startswith("In 1998 Brask Optics was acquired by Halvard Instruments") and "[2]" in text
    assert ids[0] == "c2" and "[1]" not in text.split("[2]")[0]
    assert extractive_summary("Why?", [], embedder) == (NOT_FOUND, [])


def test_names_keep_initials_suffixes_and_nicknames_but_not_sentence_openers(embedder):
    evidence = [
        chunk(
            1,
            "Ostmark",
            "Outside the Union, Ostmark used the Ostmark mark. Its first governor was "
            'James K. Polder. His son was Hank Polder, Jr. and his rival Eddie "The Eagle" Marsh.',
        )
    ]
    assert read_answer("What currency did Ostmark use?", evidence, embedder).answer != "Outside the Union"
    assert read_answer("Who was the first governor of Ostmark?", evidence, embedder).answer == "James K. Polder"
    assert read_answer("Who was the son of James K. Polder?", evidence, embedder).answer == "Hank Polder, Jr."
    assert read_answer("Who was the rival of Hank Polder?", evidence, embedder).answer == 'Eddie "The Eagle" Marsh'


@pytest.mark.parametrize(
    "question",
    [
        "When was Ada Lind's song Grey Harbour released?",
        "When was Orrin Tell's song Low Tide Blues released?",
        "When was Garth Vell's song Friends in Low Tides released?",
    ],
)
def test_the_first_word_of_a_question_asks_whatever_the_parse_hangs_it_on(question):
    # the small model parses "When was X's song Y released?" with "When was" as a clause of "released"; a clause's
    # first word relates to a noun before it, and the question's first word has none: it asks for a date
    assert question_type(question).type == "date"


@pytest.mark.parametrize(
    "question",
    [
        "Who played Anna Valdis in the 2004 film Tarn Hollow?",
        "Which actress played Anna Valdis in Tarn Hollow?",
        "Who portrayed Anna Valdis in the film Tarn Hollow?",
    ],
)
def test_a_cast_list_names_each_roles_actor_before_as(embedder, question):
    # "It stars A as <a description> and B as <the role>": the actor is the name before "as" and the asked role
    evidence = [
        chunk(2, "Tarn Hollow", "Tarn Hollow is a 2004 horror film written and directed by Orrin Tell."),
        chunk(
            1,
            "Tarn Hollow",
            "Tarn Hollow stars Hugo Brenn as the monster hunter Tarn, and Ingrid Hale as Anna Valdis, a princess.",
        ),
    ]
    assert read_answer(question, evidence, embedder).answer == "Ingrid Hale"


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("What is the job of Ada Lind in the series Tarn Hollow?", "CIA analyst"),
        ("What was Orrin Tell's occupation?", "novelist"),
        ("What profession did Hugo Brenn have?", "harbour pilot"),
    ],
)
def test_an_occupation_is_the_role_written_before_a_name(embedder, question, answer):
    # "stars A as CIA analyst Ada Lind": the nouns before the name say what the person does
    evidence = [
        chunk(1, "Tarn Hollow", "The series stars Ingrid Hale as CIA analyst Ada Lind, who briefs the President."),
        chunk(2, "Tarn Hollow", "She was the Democratic candidate for governor of Ostmark in 2014."),
        chunk(3, "Varre", "In 1920 novelist Orrin Tell moved to Varre, where he met harbour pilot Hugo Brenn."),
    ]
    assert read_answer(question, evidence, embedder).answer == answer


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("The town of Varre was named after whom?", "Ada Lind"),
        ("The Tarn Bridge was built for which company?", "Ostmark Steel"),
        ("In 1990 Orrin Tell played against which team?", "Tarn Tigers"),
        ("The Tarn Bridge, owned by Ostmark Steel, was designed by whom?", "Hugo Brenn"),
    ],
)
def test_a_preposition_before_the_question_word_asks_for_its_object(embedder, question, answer):
    # "named after whom?" asks what "after" names, wherever the question puts it
    evidence = [
        chunk(1, "Varre", "Varre, home of Hugo Brenn, was named after Ada Lind, the wife of its first mayor."),
        chunk(2, "Tarn Bridge", "In 1901 the Tarn Bridge was built for Ostmark Steel by Ingrid Hale."),
        chunk(3, "Orrin Tell", "In 1990 Orrin Tell played for the Varre Rovers against the Tarn Tigers."),
        chunk(
            4, "Tarn Bridge", "The bridge was opened by Ada Lind after Hugo Brenn had designed it for Ostmark Steel."
        ),
    ]
    assert read_answer(question, evidence, embedder).answer == answer


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("What sport did the Varre Rovers club play?", "water polo"),
        ("What genre of music does the Tarn band Grimveil play?", "doom metal"),
        ("Which sport was played by the Varre Rovers club?", "water polo"),
        ("What cuisine does the Ostmark restaurant Hale House serve?", "seafood"),
        ("What sport does Orrin Tell play professionally?", "rugby league"),
    ],
)
def test_a_sport_or_a_genre_is_the_kind_the_evidence_says_its_subject_is(embedder, question, answer):
    # "X was a water polo club", "X is a rugby league footballer": the nouns before what X is say which kind
    evidence = [
        chunk(
            1, "Varre Rovers", "The Varre Rovers were an amateur water polo club based in Tarn, founded by Ada Lind."
        ),
        chunk(2, "Varre Rovers", "The club won the Ostmark Cup in 1921 under coach Hugo Brenn."),
        # (the small model tags "Grimveil" as a common noun: a capitalised subject is a name all the same)
        chunk(3, "Grimveil", "Grimveil is a Vallian doom metal band from Tarn, who formed at Lind College."),
        chunk(4, "Hale House", "Hale House is a seafood restaurant in Ostmark, opened by Ingrid Hale in 1990."),
        chunk(5, "Orrin Tell", "Orrin Tell is a Vallian professional rugby league footballer for the Tarn Tigers."),
    ]
    assert read_answer(question, evidence, embedder).answer == answer


def test_a_kind_of_the_subject_does_not_answer_another_question_about_it(embedder):
    # "X is a drama film" says its genre, not which award it won
    evidence = [
        chunk(1, "Tarn Hollow", "Tarn Hollow is a 2004 drama film directed by Orrin Tell."),
        chunk(2, "Tarn Hollow", "The film won the Golden Heron at the Varre Film Festival."),
    ]
    assert read_answer("What award did the film Tarn Hollow win?", evidence, embedder).answer == "Golden Heron"


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("Ada Lind wrote the first Vallian book on what subject?", "child medicine"),
        ("The Tarn Falls can be found in a forest of which trees?", "pine trees"),
        ("Orrin Tell's proof makes heavy use of which axiom?", "axiom of choice"),
    ],
)
def test_a_question_asked_in_place_is_answered_by_what_the_evidence_writes_there(embedder, question, answer):
    # the words before the question word ("a book on", "a forest of") are written in the evidence before the answer
    evidence = [
        chunk(1, "Ada Lind", "Ada Lind (1650 in Tarn - 1704 in Varre) was a Vallian physician and botanist."),
        chunk(2, "Ada Lind", "She is known for writing the first Vallian book on child medicine."),
        chunk(
            3, "Tarn Falls", "The Tarn Falls were formed by the Ost River. They can be found in a forest of pine trees."
        ),
        chunk(4, "Orrin Tell", "Orrin Tell proved it in 1990; his proof makes heavy use of the axiom of choice."),
    ]
    assert read_answer(question, evidence, embedder).answer == answer


def test_a_relative_which_after_a_preposition_asks_nothing_in_place(embedder):
    # "in the city of which X is a suburb": "which" relates a clause; the question asks with its first word
    evidence = [
        chunk(1, "Tarn", "Tarn is a wealthy suburb of Varre."),
        chunk(2, "Varre Rovers", "In 1921 the Varre Rovers won the Ostmark Cup in the city of Lindholm."),
    ]
    question = "Which trophy did the Varre Rovers win in the city of which Tarn is a suburb?"
    assert read_answer(question, evidence, embedder).answer == "Ostmark Cup"


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("Which city were the rock bands on the album Red Tide from?", "Lindgrad"),
        ("The folk bands on the album Red Tide came from which city?", "Lindgrad"),
        ("In which town was the ship Varenna built?", "Tarnholm"),
    ],
)
def test_the_noun_before_a_name_says_what_it_is_whatever_the_tagger_says(embedder, question, answer):
    # "featuring rock bands Aquarium, ...": a band, though the tagger takes "Aquarium" for a place
    evidence = [
        chunk(
            1,
            "Red Tide",
            "Red Tide is a 1986 double album featuring Vallian rock bands Aquarium, Kino and Alisa, all from Lindgrad.",
        ),
        chunk(2, "Red Tide", "It also features the folk bands Ostrava and Selma, who came from Lindgrad as well."),
        chunk(3, "Varenna", "The ship Varenna was built in Tarnholm for the harbour pilot Vessby in 1901."),
    ]
    assert read_answer(question, evidence, embedder).answer == answer


def test_a_kin_noun_before_a_name_gives_its_sex(embedder):
    # "his two brothers Jonas Tell and ...": a man is nobody's mother, not even a weak candidate for one
    evidence = [
        chunk(1, "Orrin Tell", "Orrin Tell (1544-1606) was a duke of Varre, the son of Philip Tell and Greta Vell."),
        chunk(
            2,
            "Orrin Tell",
            "After his mother's death he shared the duchy with his two brothers Jonas Tell and Erik Tell.",
        ),
    ]
    reading = read_answer("Who was the mother of Orrin Tell?", evidence, embedder, k=6)
    assert reading.answer == "Greta Vell"
    assert "Jonas Tell" not in [c.answer for c in reading.candidates]
