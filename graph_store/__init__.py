"""Everything about the index: documents, extraction, graph, communities, vectors, PPR, retrievers, models."""
