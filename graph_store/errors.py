"""Errors the user is meant to read: each says what went wrong and what to do."""


class KGRagError(Exception):
    """Base class for every error this project raises on purpose."""


class ConfigError(KGRagError):
    """Settings that cannot work (bad value, missing key, unknown config entry)."""


class ModelError(KGRagError):
    """A chat or embedding endpoint failed: unreachable, unknown model, rejected key."""


class IndexStoreError(KGRagError):
    """An index directory that cannot be opened or written as asked."""


class InputError(KGRagError):
    """A document or corpus file that cannot be read."""
