"""Pieces every benchmark room shares: errors, files, JSON lines, fetched archives, tables, the
LLM client. Nothing here imports a room or the compiled core."""
