"""The library API: one object per index, over the same code the CLI and the service use.

    from kgrag import KGRag

    rag = KGRag("my-index")                       # settings as keywords, else KGRAG_* variables, kgrag.toml
    rag.index("examples/corpus")                  # a folder, a .txt/.md file, a JSON/JSONL corpus
    rag.insert(["Mira Holt founded Brotzeit.", {"title": "Lindau", "text": "Lindau is a town."}])
    answer = rag.ask("Which river flows through the city where the founder of Halvard Instruments was born?")
    print(answer.answer, answer.confidence, [c.title for c in answer.citations])
    follow_up = rag.ask("And when was she born?", thread=answer.thread_id)
    for event in rag.stream("Where was Ana Keldor born?", graph="propex"):
        ...                                       # Step (a workflow step), Token (answer text), then Answer

Async: ``aask`` and ``astream``. Settings are resolved once, when the object is made.
"""

from __future__ import annotations

import re
import threading
import uuid
from collections.abc import AsyncGenerator, Callable, Generator, Iterable
from contextlib import aclosing, closing
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_core.callbacks import UsageMetadataCallbackHandler
from langchain_core.messages import AIMessageChunk
from langchain_core.outputs import LLMResult

from agent.context import Context
from agent.events import describe_event
from agent.resources import ResourcePool, Resources
from graph_store.errors import InputError
from graph_store.settings import Settings, load_settings

if TYPE_CHECKING:
    from graph_store.documents import Document
    from graph_store.store import Decision, Job

GRAPHS = ("pankrag", "propex")
SEARCH_ROUTES = ("ppr", "dense", "local", "community")
MAX_SEARCH_K = 50


@dataclass
class Citation:
    n: int
    title: str
    text: str
    doc_ids: list[str]
    sources: list[str]
    evidence_id: str
    kind: str


@dataclass
class SubQuestion:
    id: str
    question: str
    rephrased: str | None
    depends_on: list[str]
    route: str
    status: str
    answer: str | None
    confidence: float | None
    supporting_sentence: str | None
    candidates: list[dict]  # alternatives considered: {answer, confidence, sentence, evidence_id, assumes}
    evidence: list[dict]  # with retrieval_score (R), dependency_similarity (M) and the final score
    notes: dict[str, str]


@dataclass
class Answer:
    answer: str  # as shown: with the supporting sentence and numbered citations [n]
    short_answer: str  # the answer alone
    confidence: float
    offline: bool  # no language model configured
    extractive: bool  # the answer was extracted from the documents (offline, or the model's answer was unusable)
    citations: list[Citation]
    subquestions: list[SubQuestion]
    thread_id: str
    graph: str
    planner: str | None = None
    fallbacks: list[str] = field(default_factory=list)  # every fallback the workflow took, with its reason
    review: dict | None = None  # set when the run stopped for a plan review (ask(..., review_plan=True))
    # the model's part: input_tokens, output_tokens, model_calls, reported (False: the endpoint sent no counts)
    usage: dict = field(default_factory=dict)
    notices: list[str] = field(default_factory=list)  # about the run, not the answer (e.g. a named thread was new)

    def __str__(self) -> str:
        return self.answer

    def sources(self) -> tuple[list[Citation], list[Citation]]:
        """The citations the answer's text cites (its [n] marks), and the others: retrieved, not cited."""
        marked = {int(n) for n in re.findall(r"\[(\d+)\]", self.answer)}
        return [c for c in self.citations if c.n in marked], [c for c in self.citations if c.n not in marked]

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class Step:
    """One step of the workflow as it runs: ``event`` names it, ``data`` holds it, ``text`` reads it."""

    event: str
    data: dict
    text: str


@dataclass
class Token:
    text: str


def _drafted(chunk: tuple) -> bool:
    """A piece of the final answer as the model writes it (not the finished answer the node adds to the state)."""
    message, meta = chunk
    return meta.get("langgraph_node") == "answer" and isinstance(message, AIMessageChunk) and bool(message.content)


class ModelUsage(UsageMetadataCallbackHandler):
    """The model's tokens for one answer, and how many of its calls came back without token counts (a server
    may send none, even when asked in a stream): those are "not reported", not zero."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = self.unreported = 0

    def on_llm_end(self, response: LLMResult, **kwargs: Any) -> None:
        super().on_llm_end(response, **kwargs)
        reported = any(
            getattr(getattr(g, "message", None), "usage_metadata", None) for gs in response.generations for g in gs
        )
        with self._lock:
            self.calls += 1
            self.unreported += not reported

    def summary(self) -> dict:
        """input_tokens, output_tokens, model_calls and whether the endpoint reported the tokens."""
        counted = list(self.usage_metadata.values())
        tokens = {
            "input_tokens": sum(c.get("input_tokens", 0) for c in counted),
            "output_tokens": sum(c.get("output_tokens", 0) for c in counted),
        }
        return {**tokens, "model_calls": self.calls, "reported": not self.calls or self.unreported < self.calls}


def answer_from_state(values: dict, thread_id: str, graph: str, usage: dict | None = None) -> Answer:
    """The typed answer from a graph's final state."""
    records = [values["subquestions"][sid] for sid in values.get("plan", [])] if graph == "pankrag" else []
    # a sub-question's fallback says whose it is: the final answer may well have come from the model
    fallbacks = [f"sub-question {r['id']}: {n}" for r in records for n in (r.get("notes") or {}).values()]
    fallbacks += list((values.get("notes") or {}).values())
    if values.get("planner") == "fallback":
        fallbacks.insert(0, values["plan_notes"][0])
    return Answer(
        answer=values.get("answer") or "",
        short_answer=values.get("short_answer") or "",
        confidence=float(values.get("confidence") or 0.0),
        offline=bool(values.get("offline")),
        extractive=values.get(
            "extractive",
            bool(values.get("offline")) or bool({"final_answer", "answer"} & set(values.get("notes") or {})),
        ),
        citations=[
            Citation(c["n"], ", ".join(c["titles"]), c["text"], c["doc_ids"], c["sources"], c["evidence_id"], c["kind"])
            for c in values.get("citations", [])
        ],
        subquestions=[
            SubQuestion(
                r["id"],
                r["question"],
                r.get("rephrased"),
                r["depends_on"],
                r["route"],
                r["status"],
                r.get("answer"),
                r.get("confidence"),
                r.get("supporting_sentence"),
                r.get("candidates", []),
                r.get("evidence", []),
                r.get("notes", {}),
            )
            for r in records
        ],
        thread_id=thread_id,
        graph=graph,
        planner=values.get("planner"),
        fallbacks=fallbacks,
        usage=usage or {},
    )


def conversation_view(thread_id: str, values: dict, expose_paths: bool = True) -> dict:
    """A conversation's latest state as JSON: its last question and answer, the plan, every sub-question with its
    evidence, the final ranking, citations and the messages as role and text (the CLI's inspect --json and the
    service's GET /v1/threads/{id})."""
    return {
        "thread_id": thread_id,
        "turn": values.get("turn"),
        "question": values.get("asked"),
        "answer": values.get("answer"),
        "short_answer": values.get("short_answer"),
        "confidence": values.get("confidence"),
        "offline": values.get("offline"),
        "extractive": values.get("extractive"),
        "plan": values.get("plan", []),
        "planner": values.get("planner"),
        "plan_notes": values.get("plan_notes", []),
        "subquestions": list(values.get("subquestions", {}).values()),
        "evidence": values.get("evidence", []),
        "citations": [
            {k: v for k, v in c.items() if k != "sources" or expose_paths} for c in values.get("citations", [])
        ],
        "messages": [
            {"role": m.type, "content": m.content if isinstance(m.content, str) else str(m.content)}
            for m in values.get("messages", [])
        ],
    }


_NOT_WORDS = re.compile(r"[\x00-\x1f\x7f-\x9f\s]+")  # control characters say nothing: a NUL-only question is empty


def to_documents(items: Iterable[str | dict | Any]) -> list[Document]:
    """Texts (str), records ({"text", "title"?, "id"?, "source"?}) or Document objects as Documents, cleaned of
    control characters; InputError for anything else, or for none."""
    from graph_store.documents import Document, clean_text, clean_title

    docs = []
    for n, item in enumerate(items, 1):
        if isinstance(item, Document):
            docs.append(item)
        elif isinstance(item, str):
            docs.append(Document(text=clean_text(item), source=f"insert#{n}"))
        elif isinstance(item, dict) and isinstance(item.get("text"), str):
            docs.append(
                Document(
                    text=clean_text(item["text"]),
                    title=clean_title(str(item.get("title") or "")),
                    source=clean_title(str(item.get("source") or f"insert#{n}")),
                    id=clean_title(str(item.get("id") or "")),
                )
            )
        else:
            raise InputError(f"document {n}: give a text, a record with a 'text' string, or a Document")
    if not docs:
        raise InputError("no documents given")
    return docs


def check_question(question: Any, max_chars: int, what: str = "question") -> str:
    """A question (or a search query: ``what``) with words in it, within ``max_question_chars``; InputError
    otherwise."""
    if not isinstance(question, str) or not _NOT_WORDS.sub("", question):
        raise InputError(f"the {what} is empty")
    if not question.isascii():
        try:
            question.encode("utf-8")
        except UnicodeEncodeError:
            raise InputError(f"the {what} is not valid Unicode text (it holds a lone surrogate)") from None
    if len(question) > max_chars:
        raise InputError(
            f"the {what} has {len(question):,} characters, over the limit of {max_chars:,} (max_question_chars)"
        )
    return question.strip()


class KGRag:
    """An index and the workflows that answer from it.

    ``KGRag(index_dir, **settings)``: settings not given come from ``KGRAG_*`` variables, ``kgrag.toml`` or
    the defaults (offline). ``checkpointer``: a LangGraph saver to keep conversations in (default: the
    settings' checkpointer, SQLite in the index folder).
    """

    def __init__(
        self,
        index_dir: str | Path | None = None,
        *,
        settings: Settings | None = None,
        config_file: str | Path | None = None,
        checkpointer: Any = None,
        **overrides: Any,
    ):
        if settings is None:
            settings = load_settings(config_file=config_file, index_dir=index_dir, **overrides)
        elif index_dir is not None or overrides:
            settings = settings.replace(**overrides, **({"index_dir": Path(index_dir)} if index_dir else {}))
        self.settings = settings
        self._pool = ResourcePool(settings)
        self._checkpointer = checkpointer  # a saver given by the caller, used for every call
        self._saver_context: Any = None  # the SQLite saver of the sync calls, opened at the first one
        self._own_saver: Any = None
        self._jobs_record: Any = None  # graph_store.store.Store, opened by the first job
        self._lock = threading.Lock()
        self._compiled: dict[str, Any] = {}  # graph name -> its workflow compiled without a saver (_graph)

    # --- documents --------------------------------------------------------------------------------

    def _writer(self, progress: bool | Callable[[str, int, int], None] | None):
        from graph_store.index import KnowledgeIndex

        return KnowledgeIndex(self.settings, progress=progress if progress is not None else False, create=True)

    def index(
        self,
        path: str | Path | None = None,
        *,
        progress: bool | Callable[[str, int, int], None] | None = None,
        reextract: bool = False,
    ):
        """Index a .txt/.md file, a folder of them or a JSON/JSONL corpus (only new or changed documents are
        processed); without a path, finish whatever is pending (an interrupted build or delete, failed chunks).
        ``progress``: True for progress bars, or a function (step, done, total). Returns an IndexSummary."""
        from graph_store.documents import LoadReport, load_documents

        report = LoadReport()
        docs = load_documents(path, report) if path is not None else None  # check the input before the index
        index = self._writer(progress)
        try:
            summary = (
                index.add_documents(docs, reextract=reextract)
                if docs is not None
                else index.refresh(reextract=reextract)
            )
        finally:
            index.close()
        summary.notices = [f"skipped {s}" for s in report.skipped] + report.notices + summary.notices
        return summary

    def insert(
        self, documents: Iterable[str | dict | Any], *, progress: bool | Callable[[str, int, int], None] | None = None
    ):
        """Index texts (str), records ({"text", "title"?, "id"?, "source"?}) or Document objects."""
        docs = to_documents(documents)
        index = self._writer(progress)
        try:
            return index.add_documents(docs)
        finally:
            index.close()

    def delete(self, doc_ids: Iterable[str]):
        """Delete documents by id, with what only they supported. Returns an IndexSummary."""
        index = self._writer(False)
        try:
            return index.delete_documents(doc_ids)
        finally:
            index.close()

    # --- documents jobs: recorded in the index, applied by its next writer (graph_store/jobs.py) ----------

    def record_job(self, job: Job) -> Job:
        """Record a documents job (``graph_store.jobs.add_job`` / ``delete_job``) in the index; ``run_jobs`` (or
        any later write) applies it. Returns the job as recorded."""
        return self._record().create_job(job)

    def job(self, job_id: str) -> Job | None:
        """A recorded job of this index, or None."""
        return self._pool.get().index.store.get_job(job_id)  # read-only: a read-only index still says

    def run_jobs(self):
        """Apply and build the documents jobs recorded in the index, if there are any (every write does this
        first). Returns an IndexSummary, or None when no job was waiting."""
        if not self.unfinished_jobs():
            return None
        index = self._writer(False)
        try:
            return index.run_jobs()
        finally:
            index.close()

    def unfinished_jobs(self) -> list[Job]:
        """The recorded jobs not done or failed yet, oldest first (none for a reader of shared generations: the
        jobs are in the record of the machine that indexes)."""
        index = self._pool.get().index
        if index.shared_reader:
            return []
        return index.store.unfinished_jobs()  # read-only: a service on a read-only index starts

    def fail_queued_jobs(self, reason: str) -> list[str]:
        """Fail the recorded jobs no writer has started, with ``reason``; their ids."""
        from graph_store.jobs import fail_queued

        return fail_queued(self._record(), reason)

    def _record(self):
        """The index's record, opened for writing once (jobs are recorded there, whatever the state of the derived
        files, and without the index's write lock: a build may hold it for minutes). Answering never opens it."""
        with self._lock:
            if self._jobs_record is None:
                from graph_store.manifest import require_index
                from graph_store.store import open_store

                require_index(self.settings.index_dir)
                self._jobs_record = open_store(self.settings.record, Path(self.settings.index_dir) / "index.sqlite")
            return self._jobs_record

    def stats(self) -> dict:
        from graph_store.index import KnowledgeIndex

        index = KnowledgeIndex(self.settings, progress=False, create=False)
        try:
            return index.stats()
        finally:
            index.close()

    def documents(self) -> list[dict]:
        """Every document: id, title, source."""
        resources = self._resources()
        return [{"id": i, "title": t, "source": s} for i, t, s in resources.index.store.documents()]

    def graph_snapshot_store(self):
        """The read-only store of the index's current generation (entities, facts, passages), as the web page's
        graph viewer reads it. Loads the retrievers when they are not loaded yet: from async code, call it on a
        thread."""
        return self._resources().retrievers.store

    # --- entity decisions: the merges a person reviews (graph_store/resolution.py) ------------------------

    def proposals(self, limit: int | None = None, offset: int = 0) -> tuple[list[dict], int]:
        """The open merge proposals of the served generation, best first (``limit`` of them from ``offset``), and
        how many there are: both names (``a``, ``b``), their entity ids and types, the score, the reasons and the
        evidence ({"a": [passage], "b": [...]}: where each name appears, each passage {"chunk", "title", "text"}).
        From async code, call it on a thread."""
        import json

        store = self.graph_snapshot_store()
        every = store.proposals()
        proposals = every[offset : None if limit is None else offset + limit]
        types = {
            e.id: e.type
            for e in store.entities_by_id(sorted({p.a_id for p in proposals} | {p.b_id for p in proposals}))
        }
        return [
            {
                "a": p.a_name,
                "b": p.b_name,
                "a_id": p.a_id,
                "b_id": p.b_id,
                "a_type": types.get(p.a_id, ""),
                "b_type": types.get(p.b_id, ""),
                "score": p.score,
                "reasons": json.loads(p.reasons),
                "evidence": json.loads(p.evidence),
            }
            for p in proposals
        ], len(every)

    def decisions(self, in_force: bool = False) -> list[Decision]:
        """The entity decisions in the record, oldest first (``in_force``: not the undone ones)."""
        return self._pool.get().index.store.decisions(in_force)

    def check_decisions(self, decisions: list[Decision]) -> None:
        """InputError with the reason when one of ``decisions`` names no entity of the served generation, merges two
        names of one entity or is no merge or reject (the writer checks them again when it records them)."""
        from graph_store.index import check_decision

        store = self.graph_snapshot_store()
        for decision in decisions:
            check_decision(store, decision)

    def split_decisions(self, name: str, who: str = "", why: str = "") -> list[Decision]:
        """The rejections that take ``name`` out of the entity it is merged into in the served generation."""
        from graph_store.index import split_decisions

        return split_decisions(self.graph_snapshot_store(), name, who, why)

    # --- questions --------------------------------------------------------------------------------

    def open(self) -> KGRag:
        """Open the index now rather than at the first question, so that a missing or unreadable index fails
        here, with its reason (``kgrag serve`` checks every index this way before it starts). Returns self."""
        self._resources()
        return self

    def use_checkpointer(self, saver: Any) -> None:
        """Keep conversations in ``saver`` (a LangGraph checkpointer) from now on, as if it had been given to the
        constructor. The caller owns it and closes it; the HTTP service hands every index its async saver."""
        self._checkpointer = saver

    def _resources(self, index_dir: str | None = None, chat_model: str | None = None) -> Resources:
        return self._pool.latest(index_dir, chat_model)

    def _saver(self):
        """The saver of sync calls: the one given, else the settings' own (sync) one. Async calls open an async
        saver of their own for each call (a SQLite saver has no async methods; an async one is bound to its loop)."""
        if self._checkpointer is not None:
            return self._checkpointer
        with self._lock:
            if self._saver_context is None:
                from agent.checkpoint import open_checkpointer

                self._saver_context = open_checkpointer(self.settings.checkpointer_url)
                self._own_saver = self._saver_context.__enter__()
        return self._own_saver

    def _prepare(
        self, question: Any, thread: str | None, graph: str, knobs: dict, metadata: dict | None = None
    ) -> tuple[Any, dict, Context, str]:
        if graph not in GRAPHS:
            raise InputError(f"unknown graph {graph!r}; choose one of {', '.join(GRAPHS)}")
        resume = knobs.pop("resume", None)
        context = self.run_context(**knobs)  # an existing index, before any thread is stored
        assert context.resources is not None
        context.resources.load_in_background()  # the retrievers load while the question is planned
        thread = thread or uuid.uuid4().hex[:12]
        if resume is not None:
            from langgraph.types import Command

            inputs: Any = Command(resume=resume["plan"] if resume.get("plan") is not None else True)
        elif isinstance(question, list):  # chat messages, the last one the user's question
            inputs = {"messages": question}
        else:
            inputs = {"question": check_question(question, self.settings.max_question_chars)}
        # No graph-level max_concurrency: LangGraph's own streaming tasks need a slot too (1 deadlocks); the
        # chat client bounds concurrent model calls by the setting.
        config = {"configurable": {"thread_id": thread}, "metadata": dict(metadata or {})}
        return inputs, config, context, thread

    def run_context(self, **knobs: Any) -> Context:
        """The context of one run (agent/context.py) for a workflow you compile and run yourself, as
        ``graph.invoke(inputs, config, context=rag.run_context(mode="no_rerank"))``: the knobs checked, and the
        index as it is now (its newest complete generation). kgrag/integrations/langgraph.py uses it."""
        unknown = sorted(set(knobs) - set(Context.knobs()))
        if unknown:
            raise InputError(f"unknown run setting(s) {', '.join(unknown)}; known: {', '.join(Context.knobs())}")
        context = Context.of(**{k: v for k, v in knobs.items() if v is not None})
        resources = self._resources(context.index_dir, context.chat_model)
        return Context.of(resources, **context.as_dict())

    def search(self, query: str, *, route: str = "ppr", k: int = 5, fact_filter: bool = True) -> list[dict]:
        """Evidence for ``query`` by one retrieval route (ppr, dense, local, community), best first, without the
        workflow: dicts with id, kind (chunk, entity, fact, report), text, score (0-1, relative to the best),
        doc_ids, titles, sources (the documents' origins) and route. ``fact_filter``: ProPEX's LLM fact filter on
        the ppr route, when a chat model is configured."""
        if route not in SEARCH_ROUTES:
            raise InputError(f"unknown route {route!r}; choose one of {', '.join(SEARCH_ROUTES)}")
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_SEARCH_K:
            raise InputError(f"k must be a whole number from 1 to {MAX_SEARCH_K}")
        query = check_question(query, self.settings.max_question_chars, what="query")
        resources = self._resources()
        evidence, _ = resources.retrieve(route, query, "specific", k, fact_filter=fact_filter)
        sources = resources.retrievers.store.document_sources(
            {d for e in evidence for d in e.doc_ids}
        )  # the generation answered from
        return [
            {
                **e.model_dump(include={"id", "kind", "text", "score", "doc_ids", "titles"}),
                "sources": [sources.get(d, "") for d in e.doc_ids],
                "route": route,
            }
            for e in evidence
        ]

    def retrieve(self, question: str, **knobs: Any) -> dict:
        """The PankRAG workflow up to its final ranking, without writing the answer: the plan, every sub-question
        with its evidence and sub-answer, and ``evidence``, the fused ranking the answer would be written from.
        Returns the state's values; nothing is kept. ``knobs`` as for ``ask``."""
        from langgraph.checkpoint.memory import InMemorySaver

        inputs, config, context, _ = self._prepare(question, None, "pankrag", dict(knobs))
        compiled = self._graph("pankrag", InMemorySaver())  # interrupting before the answer needs a checkpointer
        compiled.invoke(inputs, config, context=context, interrupt_before=["answer"])
        return compiled.get_state(config).values

    async def aretrieve(self, question: str, **knobs: Any) -> dict:
        """``retrieve`` for asyncio."""
        from langgraph.checkpoint.memory import InMemorySaver

        inputs, config, context, _ = self._prepare(question, None, "pankrag", dict(knobs))
        compiled = self._graph("pankrag", InMemorySaver())
        await compiled.ainvoke(inputs, config, context=context, interrupt_before=["answer"])
        return (await compiled.aget_state(config)).values

    def _graph(self, graph: str, saver: Any):
        """The workflow with ``saver``: compiled once per graph, then copied with each call's saver (compiling took
        0.1-0.4 s, as long as a whole offline answer's retrieval on a million passages)."""
        compiled = self._compiled.get(graph)
        if compiled is None:
            from agent.graph import build_pankrag_graph, build_propex_graph

            compiled = self._compiled[graph] = (build_propex_graph if graph == "propex" else build_pankrag_graph)()
        return compiled.copy({"checkpointer": saver})

    def stream(
        self,
        question: str | list,
        *,
        thread: str | None = None,
        graph: str = "pankrag",
        metadata: dict | None = None,
        **knobs: Any,
    ) -> Generator[Step | Token | Answer, None, None]:
        """The workflow's steps as they happen, the answer's tokens (with a model), then the Answer.
        ``knobs``: any run configuration (mode, route_policy, alpha_specific, top_k_ppr, review_plan, ...);
        ``metadata`` is stored with the thread's checkpoints."""
        named = thread is not None and isinstance(question, str) and "resume" not in knobs
        inputs, config, context, thread = self._prepare(question, thread, graph, dict(knobs), metadata)
        usage = ModelUsage()
        config["callbacks"] = [usage]
        saver = self._saver()
        compiled = self._graph(graph, saver)
        for _, mode, chunk in compiled.stream(
            inputs, config, context=context, stream_mode=["custom", "messages"], subgraphs=True
        ):
            if mode == "custom":
                yield Step(chunk.get("event", ""), chunk, describe_event(chunk) or "")
            elif _drafted(chunk):
                yield Token(str(chunk[0].content))
        yield self._answer(compiled.get_state(config), thread, graph, usage, saver, named)

    async def astream(
        self,
        question: str | list,
        *,
        thread: str | None = None,
        graph: str = "pankrag",
        metadata: dict | None = None,
        **knobs: Any,
    ) -> AsyncGenerator[Step | Token | Answer, None]:
        """``stream`` for asyncio (needs an async checkpointer when one is given; SQLite is opened for you)."""
        named = thread is not None and isinstance(question, str) and "resume" not in knobs
        inputs, config, context, thread = self._prepare(question, thread, graph, dict(knobs), metadata)
        usage = ModelUsage()
        config["callbacks"] = [usage]
        if self._checkpointer is not None:
            async for item in self._astream(
                self._graph(graph, self._checkpointer), inputs, config, context, thread, graph, usage, named
            ):
                yield item
            return
        from agent.checkpoint import open_async_checkpointer

        async with open_async_checkpointer(self.settings.checkpointer_url) as saver:
            compiled = self._graph(graph, saver)
            async for item in self._astream(compiled, inputs, config, context, thread, graph, usage, named):
                yield item

    async def _astream(self, compiled, inputs, config, context, thread, graph, usage, named):
        async for _, mode, chunk in compiled.astream(
            inputs, config, context=context, stream_mode=["custom", "messages"], subgraphs=True
        ):
            if mode == "custom":
                yield Step(chunk.get("event", ""), chunk, describe_event(chunk) or "")
            elif _drafted(chunk):
                yield Token(str(chunk[0].content))
        yield self._answer(await compiled.aget_state(config), thread, graph, usage, compiled.checkpointer, named)

    @staticmethod
    def _answer(snapshot, thread: str, graph: str, usage: ModelUsage, saver: Any = None, named: bool = False) -> Answer:
        """The run's Answer; ``named``: the caller gave the thread, so a thread with no earlier turn is said to be
        new (a mistyped id would otherwise answer as if it were the conversation meant)."""
        tokens = usage.summary()
        if snapshot.next and snapshot.tasks and snapshot.tasks[0].interrupts:  # stopped for a plan review
            answer = answer_from_state({**snapshot.values, "answer": "", "short_answer": ""}, thread, graph, tokens)
            answer.review = snapshot.tasks[0].interrupts[0].value
        else:
            answer = answer_from_state(snapshot.values, thread, graph, tokens)
        notice = getattr(saver, "notice", None)  # agent.checkpoint.FallbackSaver: conversations kept in memory only
        if notice:
            answer.fallbacks.append(notice)
        if named and sum(m.type == "human" for m in snapshot.values.get("messages", [])) == 1:
            answer.notices.append(f"conversation {thread!r} had no earlier turns: answered as a new conversation")
        return answer

    def ask(self, question: str | list, *, thread: str | None = None, graph: str = "pankrag", **knobs: Any) -> Answer:
        """Answer a question (a follow-up when ``thread`` names an earlier answer's thread)."""
        with closing(self.stream(question, thread=thread, graph=graph, **knobs)) as events:
            return next(item for item in events if isinstance(item, Answer))

    async def aask(
        self, question: str | list, *, thread: str | None = None, graph: str = "pankrag", **knobs: Any
    ) -> Answer:
        # closed here, not left to the garbage collector: an abandoned stream keeps its saver (and the thread of
        # an aiosqlite connection, which holds the process open at exit) until asyncio tries to close it
        async with aclosing(self.astream(question, thread=thread, graph=graph, **knobs)) as events:
            async for item in events:
                if isinstance(item, Answer):
                    return item
        raise AssertionError("the stream ended without an answer")

    def resume(self, thread: str, plan: list[dict] | None = None, **knobs: Any) -> Answer:
        """Continue a run stopped for a plan review: ``plan`` None keeps the plan, else the edited sub-questions."""
        return self.ask("", thread=thread, resume={"plan": plan}, **knobs)

    def thread(self, thread_id: str, graph: str = "pankrag") -> dict | None:
        """A conversation's latest state (plan, sub-questions with evidence, answer, messages), or None."""
        state = self._graph(graph, self._saver()).get_state({"configurable": {"thread_id": thread_id}})
        return state.values or None

    async def athread_state(self, thread_id: str, graph: str = "pankrag"):
        """A conversation's latest checkpoint, for asyncio: LangGraph's StateSnapshot, whose ``values`` are empty
        when there is no such thread and whose ``metadata`` holds what ``astream(metadata=...)`` stored with it.
        Needs an async checkpointer when one is set (SQLite is opened for you otherwise)."""
        config = {"configurable": {"thread_id": thread_id}}
        if self._checkpointer is not None:
            return await self._graph(graph, self._checkpointer).aget_state(config)
        from agent.checkpoint import open_async_checkpointer

        async with open_async_checkpointer(self.settings.checkpointer_url) as saver:
            return await self._graph(graph, saver).aget_state(config)

    def close(self) -> None:
        self._pool.close()
        if self._jobs_record is not None:
            self._jobs_record.close()
            self._jobs_record = None
        if self._saver_context is not None:
            self._saver_context.__exit__(None, None, None)
            self._saver_context = self._own_saver = None

    def __enter__(self) -> KGRag:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
