"""The MCP server, ``kgrag mcp``: an index's tools and resources for assistants that speak the Model Context
Protocol (Claude Desktop, IDE agents, LangGraph's MCP adapters), over stdio or streamable HTTP, on the official
``mcp`` SDK (the optional extra ``kgrag[mcp]``; only ``kgrag mcp`` imports this module).

Tools: ``ask`` (the answer, its confidence, citations with their passages, the sub-questions with their answers;
a progress notification as each sub-question is answered), ``search`` (ranked passages by one route),
``add_documents`` (a background job, as the HTTP service's), ``document_status`` and ``inspect_thread``.
Resources: ``kgrag://stats`` and ``kgrag://documents``. ``--read-only`` exposes no writing tool.

The HTTP service's settings, keys and limits hold here too: over HTTP every request needs one of ``api_keys``
(``Authorization: Bearer KEY``), a thread belongs to the key that started it (the same owner as at the service,
so a shared checkpointer shows a key its conversations at both doors), request bodies are limited to
``max_request_bytes``, connections to ``max_connections``, questions to ``max_question_chars``; threads idle
longer than ``thread_retention_days`` are deleted. Over stdio the caller is the user who started the process.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, Field, ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse

from graph_store.documents import dedupe
from graph_store.errors import InputError, KGRagError
from graph_store.jobs import add_job
from graph_store.settings import Settings
from graph_store.store import Job
from kgrag.api import MAX_SEARCH_K, Answer, KGRag, Step, check_question, to_documents
from kgrag.server.ask import thread_view
from kgrag.server.deps import CONVERSATION_ID, key_owner, public_error
from kgrag.server.jobs import Writers

INDEX_NAME = "kgrag"  # the one index this server serves, as its jobs name it

WRITING_TOOLS = ("add_documents", "document_status")
READ_ONLY = "this server is read-only (kgrag mcp --read-only): it does not add documents"
PROPEX_STEPS = ("facts_retrieved", "facts_filtered", "passages_ranked")


# --- what the tools return (their output schemas) ----------------------------------------------------------


class CitationOut(BaseModel):
    n: int = Field(description="the number the answer cites it by, [n]")
    title: str
    text: str = Field(description="the cited passage")
    doc_ids: list[str]
    sources: list[str] | None = Field(None, description="the documents' paths (only with expose_source_paths)")


class SubAnswer(BaseModel):
    id: str
    question: str
    rephrased: str | None = Field(description="the question with the answers it depends on filled in")
    depends_on: list[str]
    route: str = Field(description="where it was retrieved from: local, community, ppr or dense")
    status: str
    answer: str | None
    confidence: float | None


class AskResult(BaseModel):
    answer: str = Field(description="the answer as shown, with [n] citation marks")
    short_answer: str = Field(description="the answer alone")
    confidence: float = Field(description="0-1")
    offline: bool = Field(description="answered without a language model (extracted from the documents)")
    citations: list[CitationOut]
    subquestions: list[SubAnswer] = Field(description="the plan's sub-questions with their answers (PankRAG)")
    fallbacks: list[str] = Field(description="every fallback the workflow took, with its reason")
    notices: list[str] = Field(description="about the run, e.g. that the thread given had no earlier turns")
    thread: str = Field(description="give it as `thread` to ask a follow-up, or to inspect_thread")


class Passage(BaseModel):
    id: str
    kind: str = Field(description="chunk (a passage), entity, fact or report (a community summary)")
    title: str
    text: str
    score: float = Field(description="0-1, relative to the best")
    doc_ids: list[str]


class SearchResult(BaseModel):
    query: str
    route: str
    passages: list[Passage] = Field(description="best first")


class DocumentRecord(BaseModel):
    text: str
    title: str | None = None
    id: str | None = Field(None, description="a document with the id of an indexed one replaces it")


class JobProgress(BaseModel):
    step: str
    done: int
    total: int


class JobStatus(BaseModel):
    job_id: str
    status: Literal["queued", "running", "done", "failed"]
    documents: int = Field(description="documents in the request")
    progress: JobProgress | None = None
    added: int | None = None
    replaced: int | None = None
    unchanged: int | None = None
    failed_chunks: int | None = None
    notices: list[str] = []
    error: str | None = None


def ask_result(answer: Answer, expose_paths: bool) -> AskResult:
    return AskResult(
        answer=answer.answer,
        short_answer=answer.short_answer,
        confidence=answer.confidence,
        offline=answer.offline,
        citations=[
            CitationOut(
                n=c.n, title=c.title, text=c.text, doc_ids=c.doc_ids, sources=c.sources if expose_paths else None
            )
            for c in answer.citations
        ],
        subquestions=[
            SubAnswer(
                id=s.id,
                question=s.question,
                rephrased=s.rephrased,
                depends_on=s.depends_on,
                route=s.route,
                status=s.status,
                answer=s.answer,
                confidence=s.confidence,
            )
            for s in answer.subquestions
        ],
        fallbacks=answer.fallbacks,
        notices=answer.notices,
        thread=answer.thread_id,
    )


def job_status(job: Job) -> JobStatus:
    return JobStatus(job_id=job.id, status=job.status, **job.detail)


# --- the server --------------------------------------------------------------------------------------------


@dataclass
class McpState:
    """What the tools share: the index, its documents writer, the settings."""

    rag: KGRag
    settings: Settings
    read_only: bool = False
    writers: Writers = field(init=False)
    api_keys: list[bytes] = field(init=False)

    def __post_init__(self):
        self.api_keys = [k.get_secret_value().encode() for k in self.settings.api_keys]
        # Documents jobs are recorded in the index (durable, as the service's); this process applies them.
        self.writers = Writers({INDEX_NAME: self.rag})

    def caller(self, ctx: Context) -> str:
        """Who calls: over HTTP the owner of the request's key (as at the service), over stdio the local user."""
        headers = ctx.headers
        if headers is None:
            return "local"
        owner = key_owner(headers.get("authorization"), self.api_keys)
        if owner is None:  # the HTTP guard refuses such requests before they get here
            raise ToolError("missing or wrong API key")
        return owner

    async def owned_thread(self, thread: str, owner: str) -> dict | None:
        """A thread's state if it exists and is ``owner``'s; another owner's thread does not exist."""
        if not CONVERSATION_ID.match(thread):
            raise ToolError("a thread id is 1-128 letters, digits or . _ : @ -")
        snapshot = await self.rag.athread_state(thread)
        if not snapshot.values:
            return None
        if (snapshot.metadata or {}).get("owner") != owner:
            raise ToolError(f"no thread {thread!r}")
        return snapshot.values


@contextmanager
def tool_errors() -> Iterator[None]:
    """The library's errors as the tool's error, in their one line (the SDK hides any other exception's text)."""
    try:
        yield
    except KGRagError as exc:
        raise ToolError(public_error(exc)) from None


class Progress:
    """A question's progress notifications: the plan (0 of n), then each sub-question as it is answered; ProPEX
    reports its three steps."""

    def __init__(self, ctx: Context):
        self.ctx, self.done = ctx, 0
        self.total: int | None = None

    async def step(self, step: Step) -> None:
        if step.event == "plan":
            self.total = len(step.data.get("subquestions") or []) or None
        elif step.event == "subquestion_answered" or step.event in PROPEX_STEPS:
            self.done += 1
            self.total = len(PROPEX_STEPS) if step.event in PROPEX_STEPS else self.total
        else:
            return
        await self.ctx.report_progress(self.done, self.total, step.text.strip())


class KGRagMCP(MCPServer):
    """The SDK's server, saying why a tool it does not expose is refused (a read-only server's writing tools) and
    which arguments are wrong, in one line."""

    def __init__(self, *args: Any, refused: dict[str, str] | None = None, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.refused = refused or {}

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        if name in self.refused:
            raise ToolError(f"Error executing tool {name}: {self.refused[name]}")
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if not isinstance(exc.__cause__, ValidationError):
                raise
            # one line naming each bad argument, instead of pydantic's report with its links
            problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.__cause__.errors())
            raise ToolError(f"Error executing tool {name}: invalid arguments: {problems}") from None


def build_server(state: McpState) -> KGRagMCP:
    """The MCP server over one index: its tools and resources."""
    server = KGRagMCP(
        "kgrag",
        instructions="Answers multi-hop questions over an indexed document collection with a knowledge graph, "
        "citing its sources. `ask` plans sub-questions and answers them one hop after another; `search` returns "
        "ranked passages.",
        log_level="WARNING",
        refused=dict.fromkeys(WRITING_TOOLS, READ_ONLY) if state.read_only else None,
    )
    add_reading_tools(server, state)
    if not state.read_only:
        add_writing_tools(server, state)
    add_resources(server, state)

    @server.custom_route("/health", methods=["GET"])
    async def health(request: Request) -> JSONResponse:
        return JSONResponse({"status": "ok"})

    return server


def add_reading_tools(server: MCPServer, state: McpState) -> None:
    rag, settings = state.rag, state.settings

    @server.tool()
    async def ask(
        question: Annotated[str, Field(description="the question, in plain words")],
        ctx: Context,
        thread: Annotated[
            str | None, Field(description="a thread from an earlier answer, to ask a follow-up in it")
        ] = None,
        graph: Annotated[
            Literal["pankrag", "propex"],
            Field(description="pankrag plans sub-questions (multi-hop); propex ranks passages by PageRank"),
        ] = "pankrag",
    ) -> AskResult:
        """Answer a question from the indexed documents: the answer with numbered citations (each with the passage
        it cites), its confidence, and the sub-questions it was broken into with their answers. Sends a progress
        notification as each sub-question is answered."""
        owner = state.caller(ctx)
        answer = None
        with tool_errors():
            question = check_question(question, settings.max_question_chars)
            if thread is not None:
                await state.owned_thread(thread, owner)
            progress = Progress(ctx)
            thread = thread or f"mcp-{uuid.uuid4().hex[:16]}"
            async for item in rag.astream(question, thread=thread, graph=graph, metadata={"owner": owner}):
                if isinstance(item, Step):
                    await progress.step(item)
                elif isinstance(item, Answer):
                    answer = item
        assert answer is not None, "every stream ends with an answer"
        return ask_result(answer, settings.expose_source_paths)

    @server.tool()
    async def search(
        query: Annotated[str, Field(description="what to look for")],
        route: Annotated[
            Literal["ppr", "dense", "local", "community"],
            Field(
                description="ppr: Personalized PageRank over entities and passages; dense: nearest passages; "
                "local: an entity's facts and passages; community: community summaries"
            ),
        ] = "ppr",
        k: Annotated[int, Field(ge=1, le=MAX_SEARCH_K, description="passages returned")] = 5,
    ) -> SearchResult:
        """Ranked passages for a query by one retrieval route, with their scores; nothing is answered."""
        with tool_errors():
            hits = await asyncio.to_thread(rag.search, query, route=route, k=k)
        passages = [
            Passage(
                id=h["id"],
                kind=h["kind"],
                title=", ".join(h["titles"]),
                text=h["text"],
                score=h["score"],
                doc_ids=h["doc_ids"],
            )
            for h in hits
        ]
        return SearchResult(query=query, route=route, passages=passages)

    @server.tool()
    async def inspect_thread(
        thread: Annotated[str, Field(description="a thread from an answer")], ctx: Context
    ) -> dict[str, Any]:
        """A thread's latest state: the question, the plan, every sub-question with its rephrasing, evidence (with
        the retrieval score R, the dependency similarity M and the final score) and answer, the answer and its
        citations."""
        values = await state.owned_thread(thread, state.caller(ctx))
        if values is None:
            raise ToolError(f"no thread {thread!r}")
        return thread_view(thread, values, settings.expose_source_paths)


def add_writing_tools(server: MCPServer, state: McpState) -> None:
    @server.tool()
    async def add_documents(
        documents: Annotated[
            list[str | DocumentRecord],
            Field(min_length=1, description="texts, or records {text, title?, id?}"),
        ],
        ctx: Context,
    ) -> JobStatus:
        """Add documents to the index, in the background: returns the job; document_status follows it. Questions
        are answered from the index as it was until the job is done."""
        owner = state.caller(ctx)
        records = []
        for n, item in enumerate(documents):
            record = DocumentRecord(text=item) if isinstance(item, str) else item
            if not record.text.strip():
                raise ToolError(f"documents[{n}] has no text")
            records.append({**record.model_dump(), "source": f"mcp:{record.id or n}"})
        try:
            job = add_job(INDEX_NAME, owner, dedupe(to_documents(records)))
        except InputError as exc:
            raise ToolError(str(exc)) from None
        return job_status(await asyncio.to_thread(state.writers.submit, INDEX_NAME, job))

    @server.tool()
    async def document_status(
        job_id: Annotated[str, Field(description="the job add_documents returned")],
        ctx: Context,
        wait: Annotated[
            float, Field(ge=0, le=60, description="seconds to wait for the job to finish before answering")
        ] = 0,
    ) -> JobStatus:
        """A documents job: queued, running (with its progress), done (with counts) or failed (with the reason)."""
        job = await asyncio.to_thread(state.writers.get, job_id)
        if job is None or job.owner != state.caller(ctx):
            raise ToolError(f"no job {job_id!r}")
        deadline = time.monotonic() + wait
        while job is not None and job.status not in ("done", "failed") and time.monotonic() < deadline:
            await asyncio.sleep(0.2)  # the job is in the record: its state is read again
            job = await asyncio.to_thread(state.writers.get, job_id)
        assert job is not None
        return job_status(job)


def add_resources(server: MCPServer, state: McpState) -> None:
    @server.resource("kgrag://stats", name="stats", mime_type="application/json")
    async def stats() -> str:
        """The index's counts: documents, chunks, entities, facts, communities, vectors."""
        return json.dumps(await asyncio.to_thread(state.rag.stats), default=str)

    @server.resource("kgrag://documents", name="documents", mime_type="application/json")
    async def documents() -> str:
        """Every indexed document: id, title, source."""
        return json.dumps(await asyncio.to_thread(state.rag.documents))


# --- running it --------------------------------------------------------------------------------------------


def refuse(status: int, message: str) -> JSONResponse:
    """An error as the HTTP service writes it."""
    kind = "authentication_error" if status == 401 else "invalid_request_error"
    return JSONResponse({"error": {"message": message, "type": kind}}, status_code=status)


async def read_limited(receive: Any, settings: Settings) -> bytes:
    """A request's body, refused past ``max_request_bytes`` (413) or when it does not arrive within
    ``request_timeout`` (408), as at the HTTP service."""
    chunks, size = [], 0

    async def more() -> None:
        nonlocal size
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                raise ConnectionError("the client left")
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if size > settings.max_request_bytes:
                raise OverflowError
            if not message.get("more_body"):
                return

    await asyncio.wait_for(more(), timeout=settings.request_timeout)
    return b"".join(chunks)


def guard(app: Any, state: McpState) -> Any:
    """The ASGI app behind the service's API keys (401 without one; the health check excepted) and its body
    limits (413, 408). MCP messages are small: a body is read whole before the SDK sees it."""

    async def guarded(scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["path"] == "/health":
            return await app(scope, receive, send)
        authorization = dict(scope["headers"]).get(b"authorization", b"").decode("latin-1")
        if key_owner(authorization, state.api_keys) is None:
            return await refuse(401, "missing or wrong API key")(scope, receive, send)
        try:
            body = await read_limited(receive, state.settings)
        except OverflowError:
            return await refuse(413, f"request larger than {state.settings.max_request_bytes} bytes")(
                scope, receive, send
            )
        except TimeoutError:
            return await refuse(408, f"the request body did not arrive within {state.settings.request_timeout} s")(
                scope, receive, send
            )
        except ConnectionError:
            return None
        replayed = False

        async def replay() -> dict:
            nonlocal replayed
            if replayed:
                return await receive()  # after the body: the client's disconnect
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        return await app(scope, replay, send)

    return guarded


async def serve(state: McpState, transport: Literal["stdio", "http"], host: str, port: int) -> None:
    """Serve until stdin closes (stdio) or the process is stopped (HTTP)."""
    import uvicorn

    from agent.checkpoint import open_async_checkpointer
    from kgrag.server.app import prune_threads

    server = build_server(state)
    async with open_async_checkpointer(state.settings.checkpointer_url) as saver:
        state.rag.use_checkpointer(saver)
        pruner = asyncio.create_task(prune_threads(saver, state.settings.thread_retention_days))
        if not state.read_only:
            state.writers.start()  # first finishes the jobs an earlier run left recorded
        try:
            if transport == "stdio":
                await server.run_stdio_async()
                return
            app = server.streamable_http_app(
                streamable_http_path="/mcp", max_request_body_size=state.settings.max_request_bytes, host=host
            )
            config = uvicorn.Config(
                guard(app, state),
                host=host,
                port=port,
                log_level="warning",
                timeout_keep_alive=5,
                limit_concurrency=state.settings.max_connections,
            )
            await uvicorn.Server(config).serve()
        finally:
            pruner.cancel()
            state.writers.close()


def run(settings: Settings, transport: Literal["stdio", "http"], host: str, port: int, read_only: bool) -> None:
    """``kgrag mcp``: open the index (a missing one stops the start, with its reason), then serve."""
    state = McpState(KGRag(settings=settings).open(), settings, read_only)
    mode = " read-only" if read_only else ""
    if transport == "http":
        print(f"kgrag mcp: serving {settings.index_dir}{mode} on http://{host}:{port}/mcp", file=sys.stderr)
        if not settings.api_keys:
            print("kgrag mcp: warning: no api_keys configured, anyone who can reach it may use it", file=sys.stderr)
    asyncio.run(serve(state, transport, host, port))
