"""Errors the user is meant to read: each says what went wrong and what to do."""


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
