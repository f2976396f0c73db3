"""The LangGraph workflow: PankRAG planning and execution, ProPEX-RAG as a route and a graph."""
