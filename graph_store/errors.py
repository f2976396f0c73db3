"""Errors the user is meant to read: each says what went wrong and what to do."""

import errno
import shutil
from pathlib import Path


class KGRagError(Exception):
    """Base class for every error this project raises on purpose."""


class ConfigError(KGRagError):
    """Settings that cannot work (bad value, missing key, unknown config entry)."""


class ModelError(KGRagError):
    """A chat or embedding endpoint failed: unreachable, timed out, unknown model, rejected key, unreadable reply.

    ``public`` says the same without the endpoint's address (a service's users must not learn it).
    """

    def __init__(self, message: str, public: str | None = None):
        super().__init__(message)
        self.public = public or "the model endpoint failed"


class IndexStoreError(KGRagError):
    """An index directory that cannot be opened or written as asked."""


class InputError(KGRagError):
    """A document or corpus file that cannot be read."""


class IndexBusyError(IndexStoreError):
    """Another process held the index's write lock for longer than ``write_lock_timeout``."""


def public_message(exc: BaseException) -> str:
    """What a service's client may read about a failure: no endpoint addresses, paths or stack traces."""
    if isinstance(exc, ModelError):
        return exc.public
    if isinstance(exc, (InputError, ConfigError, IndexBusyError)):
        return str(exc)
    return "internal error"


class UnavailableError(IndexStoreError):
    """A file the index needs cannot be read or written for a reason of the machine, not of its content: permission
    denied, a read-only folder, a full disk, an I/O error. Never a reason to salvage or rebuild anything."""


_NO_SPACE = {errno.ENOSPC, errno.EDQUOT}
_NO_PERMISSION = {errno.EACCES, errno.EPERM, errno.EROFS}


def machine_problem(exc: BaseException) -> str | None:
    """What an OS or SQLite error says about the machine ("disk full", "permission denied", ...), or None when it is
    not such an error (damaged content, a bug)."""
    if isinstance(exc, OSError) and exc.errno is not None:
        if exc.errno in _NO_SPACE:
            return "disk full"
        if exc.errno in _NO_PERMISSION:
            return "read-only file system" if exc.errno == errno.EROFS else "permission denied"
        return None
    name = getattr(exc, "sqlite_errorname", None) or ""
    if name.startswith("SQLITE_FULL"):
        return "disk full"
    if name.startswith(("SQLITE_READONLY", "SQLITE_CANTOPEN", "SQLITE_PERM", "SQLITE_AUTH")):
        return "permission denied or a read-only folder"
    if name.startswith("SQLITE_IOERR"):
        return "I/O error"
    # Libraries that wrap SQLite or the OS in their own errors (Chroma) keep the message.
    text = str(exc)
    for said, problem in _SAID.items():
        if said in text:
            return problem
    return None


_SAID = {
    "database or disk is full": "disk full",
    "No space left on device": "disk full",
    "attempt to write a readonly database": "permission denied or a read-only folder",
    "Read-only file system": "read-only file system",
    "Permission denied": "permission denied",
}


def unavailable(path: Path | str, exc: BaseException, doing: str = "use") -> UnavailableError | None:
    """The one line for a machine problem met on ``path`` (None when ``exc`` is not one). An I/O error on a full
    disk (SQLite cannot grow its shared-memory file) is said as the full disk it is."""
    problem = machine_problem(exc)
    if problem is None:
        return None
    if problem == "I/O error" and _disk_full(Path(path)):
        problem = "disk full"
    return UnavailableError(f"cannot {doing} {path}: {problem}; {_advice(problem, exc)}")


def machine_error(exc: BaseException) -> UnavailableError | None:
    """``unavailable`` for an error met anywhere (the doors' last resort before "internal error")."""
    where = getattr(exc, "filename", None)
    problem = machine_problem(exc)
    if problem is None:
        return None
    return UnavailableError(f"{problem}{f' ({where})' if where else ''}; {_advice(problem, exc)}")


def _advice(problem: str, exc: BaseException) -> str:
    if problem == "disk full":
        return "free some space and run the command again (work already finished is kept)"
    if problem == "I/O error":
        return f"check the disk ({exc})"
    return "this is not damage: fix the permissions, or run as the owner of the files"


def _disk_full(path: Path) -> bool:
    folder = path if path.is_dir() else path.parent
    try:
        return shutil.disk_usage(folder).free == 0
    except OSError:
        return False
