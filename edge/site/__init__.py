"""Several boxes, one stock: the site's PostgreSQL as the shared truth, each box's SQLite store as
its local view and outbox.

``server``: connecting (DSN, password file) and the server schema (``edge site init``).
``sync``: pushing this box's records and pulling the others' (``edge site sync``), offline first.
``status``: what ``edge status`` and ``edge site status`` say about the site.
``cli``: the ``edge site`` commands.
"""
