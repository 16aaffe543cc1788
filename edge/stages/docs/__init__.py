"""Answers from the site's own documents (manuals, procedures, man pages), all on the box.

parse.py (one reader per format → sections with title, section and page), roff.py (the man-page
reader), chunk.py (sections → chunks; one per option of an option list), index.py (SQLite FTS5 +
vectors, incremental by SHA-256), retrieve.py (BM25, exact option names and vector rankings fused,
then reranked), answer.py (extractive, or generated from the passage the model cites, naming its
source, or "I don't find that"), cli.py (``edge docs add|list|remove|reindex``).
"""
