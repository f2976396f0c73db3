"""Documents jobs in the service: each is recorded in its index's record before the 202, then applied in the
background by the index's writer thread (graph_store/jobs.py says who applies a recorded job, and when).

A writer thread applies every job recorded in its index (``KGRag.run_jobs``) when a job is submitted, and once
when the service starts: the jobs a stopped or killed service left are finished or applied then. When the
service stops it takes no new job (503), finishes the build it is running, and leaves the jobs still queued in
the record for the next start.
"""

from __future__ import annotations

import logging
import threading

from fastapi import HTTPException

from graph_store.errors import IndexBusyError, KGRagError
from graph_store.store import Job
from kgrag.api import KGRag

log = logging.getLogger("kgrag.server")
STOPPING = "the service is stopping and takes no new documents jobs; send the request again once it is back"


class Writers:
    """One writer thread per index: documents and entity decision jobs to an index are applied one build after
    another, never interleaved, while queries go on answering from the last complete state."""

    def __init__(self, indexes: dict[str, KGRag]):
        self._indexes = indexes
        self._wake = {name: threading.Event() for name in indexes}
        self._threads: list[threading.Thread] = []
        self.stopping = False

    def start(self) -> None:
        """Start the writers; each first finishes the jobs its index holds from an earlier run."""
        for name, rag in self._indexes.items():
            self._wake[name].set()
            thread = threading.Thread(target=self._write, args=(name, rag), name=f"kgrag-writer-{name}", daemon=True)
            thread.start()
            self._threads.append(thread)

    def submit(self, name: str, job: Job) -> Job:
        """Record ``job`` in the index named ``name`` and wake its writer; 503 once the service is stopping."""
        if self.stopping:
            raise HTTPException(503, STOPPING)
        recorded = self._indexes[name].record_job(job)
        self._wake[name].set()
        return recorded

    def get(self, job_id: str) -> Job | None:
        """The job of that id in any index, or None."""
        return next((job for rag in self._indexes.values() if (job := rag.job(job_id)) is not None), None)

    def stop_taking(self) -> None:
        """From now on submit answers 503 (called as soon as the service is told to stop)."""
        self.stopping = True

    def close(self) -> None:
        """Take no new job, let each writer finish the build it runs, and leave queued jobs recorded."""
        self.stop_taking()
        for event in self._wake.values():
            event.set()
        for thread in self._threads:
            thread.join()
        for name, rag in self._indexes.items():
            if waiting := rag.unfinished_jobs():
                log.info("index %s: %d documents job(s) stay recorded for the next start", name, len(waiting))

    def _write(self, name: str, rag: KGRag) -> None:
        while True:
            self._wake[name].wait()
            if self.stopping:
                return
            self._wake[name].clear()
            try:
                rag.run_jobs()
            except IndexBusyError as exc:
                failed = rag.fail_queued_jobs(str(exc))
                log.warning("index %s: %s; %d documents job(s) failed: %s", name, exc, len(failed), ", ".join(failed))
            except KGRagError as exc:  # the jobs say why they failed; the log says it too
                log.warning("index %s: documents jobs failed: %s", name, exc)
            except Exception:  # noqa: BLE001 - the jobs are failed with "internal error"; the trace goes here
                log.exception("index %s: documents jobs failed", name)
