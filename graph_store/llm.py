"""Chat models: a factory for any OpenAI-compatible endpoint, output budgets, retries, readable errors.

Responses are cached on disk by ``LLMCache`` (graph_store/llm_cache.py), which also keeps the call and token
counts (``Usage``); both names are importable from here as before. LangChain is imported by what calls a model,
not by this module: importing its models costs about 1 s, which commands that never call one (``kgrag stats``,
``kgrag entities``) should not pay.
"""

from __future__ import annotations

import re
import threading
import time
from typing import TYPE_CHECKING, Any

import json_repair

from graph_store.errors import ConfigError, ModelError
from graph_store.settings import Settings, redact_url
from graph_store.usage import Usage

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import AIMessage, BaseMessage
    from langchain_core.runnables import RunnableConfig

    from graph_store.llm_cache import LLMCache


def __getattr__(name: str) -> Any:
    if name == "LLMCache":  # loads LangChain's cache classes: only when asked for
        from graph_store.llm_cache import LLMCache

        return LLMCache
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "ChatClient",
    "LLMCache",
    "OUTPUT_BUDGETS",
    "Usage",
    "explain_model_error",
    "json_in_reply",
    "make_chat_client",
    "truncated",
]


# Output budget (max_tokens) of every LLM task, in one place: a small model left without one can generate
# until its context is full. A reply cut by its budget comes back with finish_reason "length".
OUTPUT_BUDGETS = {
    "plan": 700,
    "rephrase": 80,
    "fact_filter": 60,
    "sub_answer": 250,
    "final_answer": 500,
    "extract": 1500,
    "report": 800,
    "judge": 600,
    "answer": 500,
}
# An object's members without its braces: a key, a colon, then a comma and a second quoted key. Seen from
# Qwen2.5-Coder-0.5B copying the prompt's 'Answer: {...}' line: 'answer: Selva, "evidence": [1, 2], ...'.
_BARE_MEMBERS = re.compile(r'^\s*"?[A-Za-z_]\w*"?\s*:[^\n]*?,\s*"[A-Za-z_]\w*"\s*:')


def json_in_reply(raw: str) -> Any:
    """The JSON value starting at the first "{" of a model's reply (chatter around it ignored,
    broken JSON repaired), an object's members written without their braces as that object,
    or None otherwise."""
    if "{" in raw:
        return json_repair.loads(raw[raw.find("{") :])
    if _BARE_MEMBERS.match(raw):
        return json_repair.loads("{" + raw.strip() + "}")
    return None


def explain_model_error(
    exc: Exception, what: str, model: str | None, base_url: str | None, timeout: float | None = None
) -> ModelError:
    """An openai client error as a ModelError that says what to check. ``public`` is the same without the
    endpoint's address, for replies to users of a service."""
    import openai

    where = redact_url(base_url) if base_url else "the default OpenAI endpoint"
    if isinstance(exc, openai.APITimeoutError):
        return ModelError(
            f"the {what} endpoint at {where} did not answer within {timeout or '?'} s (chat_timeout); "
            "a server that handles one request at a time may still be busy with an earlier one",
            public=f"the model endpoint timed out after {timeout or '?'} s",
        )
    if isinstance(exc, openai.APIConnectionError):
        return ModelError(
            f"cannot reach the {what} endpoint at {where} ({exc.__class__.__name__}); is the server "
            "running and is the base URL right?",
            public="the model endpoint is unreachable",
        )
    if isinstance(exc, openai.NotFoundError):
        return ModelError(
            f"the {what} endpoint at {where} does not know model {model!r}: {exc.message}",
            public=f"the model endpoint does not know model {model!r}",
        )
    if isinstance(exc, (openai.AuthenticationError, openai.PermissionDeniedError)):
        return ModelError(
            f"the {what} endpoint at {where} rejected the API key: {exc.message}",
            public="the model endpoint rejected the service's API key",
        )
    if isinstance(exc, openai.APIStatusError):
        return ModelError(
            f"the {what} endpoint at {where} answered HTTP {exc.status_code}: {exc.message}",
            public=f"the model endpoint failed (HTTP {exc.status_code})",
        )
    return ModelError(
        f"the {what} endpoint at {where} failed: {exc.__class__.__name__}: {str(exc)[:200]}",
        public="the model endpoint failed",
    )


def truncated(message: BaseMessage) -> bool:
    """A reply cut by its output budget (max_tokens)."""
    return (getattr(message, "response_metadata", None) or {}).get("finish_reason") == "length"


TRANSIENT_STATUS = (408, 409, 429, 500, 502, 503, 504)


class ChatClient:
    """A chat model with an output budget per task, bounded concurrency, retries and readable errors.

    Transient failures (HTTP 429/5xx, a dropped connection) are retried with exponential backoff; a timeout
    is not: a server that handles one request at a time is still generating the abandoned request.
    A reply that is not an OpenAI chat completion (an HTML error page, JSON of another shape) is a ModelError.
    Nodes call ``invoke`` with their RunnableConfig so LangGraph can stream the tokens.
    """

    def __init__(
        self,
        model: BaseChatModel,
        max_concurrency: int = 4,
        base_url: str | None = None,
        max_retries: int = 0,
        timeout: float | None = None,
    ):
        self.model = model
        self.base_url = base_url
        self.max_retries = max_retries
        self.timeout = timeout
        self._slots = threading.BoundedSemaphore(max_concurrency)

    @property
    def model_name(self) -> str:
        return getattr(self.model, "model_name", None) or type(self.model).__name__

    @property
    def usage(self) -> Usage:
        from graph_store.llm_cache import LLMCache

        cache = self.model.cache
        return cache.usage if isinstance(cache, LLMCache) else Usage()

    def _fail(self, exc: Exception) -> ModelError:
        return explain_model_error(exc, "chat", self.model_name, self.base_url, self.timeout)

    def invoke(
        self, messages: list[BaseMessage], config: RunnableConfig | None = None, task: str = "answer"
    ) -> AIMessage:
        import openai

        budget = OUTPUT_BUDGETS[task]
        # OpenAI takes max_completion_tokens (what langchain-openai sends for max_tokens); OpenAI-compatible
        # servers (llama.cpp, vLLM, Ollama) read max_tokens, so a custom endpoint gets that name.
        model = (
            self.model.bind(extra_body={"max_tokens": budget}) if self.base_url else self.model.bind(max_tokens=budget)
        )
        with self._slots:
            for attempt in range(self.max_retries + 1):
                try:
                    return model.invoke(messages, config)
                except openai.APITimeoutError as exc:
                    raise self._fail(exc) from exc
                except (openai.APIConnectionError, openai.APIStatusError) as exc:
                    transient = isinstance(exc, openai.APIConnectionError) or exc.status_code in TRANSIENT_STATUS
                    if not transient or attempt == self.max_retries:
                        raise self._fail(exc) from exc
                    time.sleep(min(8.0, 0.5 * 2**attempt))
                except openai.OpenAIError as exc:
                    raise self._fail(exc) from exc
                except (ValueError, TypeError, KeyError, AttributeError, IndexError) as exc:
                    # langchain-openai's own errors on a reply of the wrong shape
                    raise ModelError(
                        f"the chat endpoint at {redact_url(self.base_url or 'OpenAI')} returned a reply that is not "
                        f"an OpenAI chat completion ({exc.__class__.__name__}: {str(exc)[:120]})",
                        public="the model endpoint returned an unreadable reply",
                    ) from exc
        raise AssertionError("unreachable")


def make_chat_client(settings: Settings) -> ChatClient | None:
    """The configured chat model, or None in offline mode (no ``chat_model`` set).

    Its response cache lives in the index folder and is opened on the first call.
    """
    if settings.offline:
        return None
    from langchain_openai import ChatOpenAI

    from graph_store.llm_cache import LLMCache

    if settings.chat_api_key is None and not settings.chat_base_url:
        raise ConfigError(
            f"chat_model={settings.chat_model!r} needs an API key for the default OpenAI endpoint: "
            "set KGRAG_CHAT_API_KEY (or OPENAI_API_KEY), or point KGRAG_CHAT_BASE_URL at a local server"
        )
    key = settings.chat_api_key.get_secret_value() if settings.chat_api_key else "not-needed"
    model = ChatOpenAI(
        model=settings.chat_model,
        base_url=settings.chat_base_url,
        api_key=key,
        temperature=settings.chat_temperature,
        timeout=settings.chat_timeout,
        max_retries=0,  # ChatClient retries what is worth retrying
        stream_usage=True,
        # A process answering from shared generations may have no index folder here: it caches nothing then.
        cache=LLMCache(settings.llm_cache_path) if settings.llm_cache_path.parent.is_dir() else False,
    )
    return ChatClient(
        model, settings.max_concurrency, settings.chat_base_url, settings.chat_max_retries, settings.chat_timeout
    )


def unlisted_model(settings: Settings, timeout: float = 3.0) -> str | None:
    """A warning when a custom endpoint's model list does not name the configured chat model (llama.cpp's server
    answers for any name with the model it has loaded), else None; an endpoint without a list says nothing."""
    if settings.offline or not settings.chat_base_url:
        return None
    import httpx

    key = settings.chat_api_key.get_secret_value() if settings.chat_api_key else None
    try:
        reply = httpx.get(
            f"{settings.chat_base_url.rstrip('/')}/models",
            timeout=timeout,
            headers={"Authorization": f"Bearer {key}"} if key else {},
        )
        listed = [str(m.get("id")) for m in reply.json().get("data", []) if isinstance(m, dict)]
    except (httpx.HTTPError, ValueError, AttributeError):
        return None
    if not listed or settings.chat_model in listed:
        return None
    return (
        f"the endpoint {settings.chat_base_url} does not list the model {settings.chat_model!r} (it lists "
        f"{', '.join(listed[:5])}): it may answer with another model"
    )
