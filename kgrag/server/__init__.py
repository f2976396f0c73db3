"""HTTP service: a web page, an OpenAI-compatible chat-completions endpoint (streamed or not), a native API,
and documents added over the API. Everything goes through the library (kgrag/api.py).

Chat front ends work by changing their base URL. In a stream the workflow's steps come first as
``reasoning_content`` deltas (front ends show them as "thinking" or ignore them), then the answer as
``content``: the answer with numbered citations and a short Markdown "Sources" list. A conversation id
(``conversation_id`` in the body, or the ``X-Conversation-Id`` header) is a checkpoint thread of that name,
owned by the API key that started it; without one, each request is its own thread and the messages it
carries are the history (the thread is deleted after the reply). The model name picks the index and mode:
``INDEX`` or ``INDEX:MODE`` (MODE: full, no_planning, no_rerank, naive, propex).

The package: ``app`` (create_app, its lifespan, middleware and error handlers; serve), ``deps`` (what the
routers share), ``jobs`` (documents and entity decision jobs), and one router per concern: ``chat``, ``ask``,
``documents``, ``entities``, ``graph``, ``web``.
"""

from kgrag.server.app import create_app, serve

__all__ = ["create_app", "serve"]
