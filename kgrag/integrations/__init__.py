"""Where users already work: a LangChain retriever (``kgrag.integrations.langchain``) and the PankRAG workflow as
a node of your own LangGraph app (``kgrag.integrations.langgraph``). The MCP server is ``kgrag mcp``
(kgrag/mcp_server.py). Each module is imported only by whoever uses it."""
