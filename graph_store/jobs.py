"""Documents jobs: changes to an index accepted by the HTTP service, kept in the index's record until applied.
Entity decisions sent to the service (merge, reject, split, undo: graph_store/resolution.py) are jobs too, as
they rebuild the derived state as a document does; what is said here of documents jobs holds for them.

Who owns a recorded job: the index, not the process that accepted it. The service records a job (``queued``,
with its payload: the documents, or the ids to delete) before it answers 202, so neither a kill nor a stop
loses it. Every writer of the index (the service's writer thread, the service when it starts again,
``kgrag index``/``delete``/``repair``, the library's ``index``/``insert``/``delete``) first applies the recorded
jobs, oldest first, and builds, and only then makes its own change: a job accepted before a command is
applied before it.

A job is applied once: the transaction that writes its change also sets it ``running`` and drops its payload
(graph_store/store: ``add_documents(..., job=...)``). A writer that finds a job ``running`` (its process
stopped during the build) only finishes the build, and notes the job as recovered. The build ends every job it
was for ``done``, or ``failed`` with the reason (its change stays in the record and the next build publishes
it). A job whose own change cannot be made (a delete of an unknown id) fails alone. The service fails the
jobs still queued when another process holds the index for longer than ``write_lock_timeout``.
"""

from __future__ import annotations

import dataclasses
import time
import uuid

from graph_store.documents import Document
from graph_store.errors import public_message
from graph_store.store import Decision, Job, Record

RECOVERED = "the process running this job stopped before it finished; the next writer of the index finished it"
PROGRESS_EVERY = 0.5  # seconds between progress writes to a job (the first and the last step always)


def new_job_id() -> str:
    return uuid.uuid4().hex[:16]


def add_job(index: str, owner: str, documents: list[Document]) -> Job:
    """A job adding these documents (ids, titles and sources as given, so any writer adds the same)."""
    return Job(
        new_job_id(),
        index,
        owner,
        "add",
        payload={"documents": [dataclasses.asdict(d) for d in documents]},
        detail={"documents": len(documents)},
    )


def delete_job(index: str, owner: str, doc_ids: list[str]) -> Job:
    """A job deleting these documents."""
    return Job(new_job_id(), index, owner, "delete", payload={"ids": doc_ids}, detail={"document": ", ".join(doc_ids)})


def decide_job(index: str, owner: str, decisions: list[Decision]) -> Job:
    """A job recording these entity decisions (merges and rejections; a split is rejections)."""
    return Job(
        new_job_id(),
        index,
        owner,
        "decide",
        payload={"decisions": [dataclasses.asdict(d) for d in decisions]},
        detail={"decisions": len(decisions)},
    )


def undo_job(index: str, owner: str, decision_id: int | None) -> Job:
    """A job undoing one entity decision (the latest in force when ``decision_id`` is None)."""
    return Job(new_job_id(), index, owner, "undo", payload={"decision": decision_id}, detail={"decision": decision_id})


def decisions_of(job: Job) -> list[Decision]:
    return [Decision(**fields) for fields in job.payload["decisions"]]


def documents_of(job: Job) -> list[Document]:
    return [Document(**fields) for fields in job.payload["documents"]]


def finish(record: Record, jobs: list[Job], error: Exception | None = None) -> None:
    """End the jobs a build was for: done (with the index's failed chunks), or failed with the reason."""
    failed_chunks = len(record.failed_chunks())
    for job in jobs:
        current = record.get_job(job.id) or job
        detail = {k: v for k, v in current.detail.items() if k != "progress"}
        if error is None:
            record.update_job(job.id, "done", {**detail, "failed_chunks": failed_chunks})
        else:
            reason = f"{public_message(error)}; the change is recorded and the next build of the index publishes it"
            record.update_job(job.id, "failed", {**detail, "error": reason})


def fail_queued(record: Record, reason: str) -> list[str]:
    """Fail every job still queued (not one a writer has started meanwhile); their ids."""
    failed = []
    for job in record.unfinished_jobs():
        if job.status == "queued" and record.update_job(job.id, "failed", {**job.detail, "error": reason}, "queued"):
            failed.append(job.id)
    return failed


class ProgressRecorder:
    """A build's progress, written to the detail of the jobs it is for (what ``GET /v1/jobs/{id}`` shows)."""

    def __init__(self, record: Record, jobs: list[Job]):
        self.record, self.jobs, self._last = record, jobs, 0.0

    def __call__(self, step: str, done: int, total: int) -> None:
        now = time.monotonic()
        if 0 < done < total and now - self._last < PROGRESS_EVERY:
            return
        self._last = now
        for job in self.jobs:
            current = self.record.get_job(job.id) or job
            progress = {"step": step, "done": done, "total": total}
            self.record.update_job(job.id, "running", {**current.detail, "progress": progress}, "running")
