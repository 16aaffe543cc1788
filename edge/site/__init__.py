"""Several boxes, one stock: the site's PostgreSQL as the shared truth, each box's SQLite store as
its local view and outbox.

``server``: connecting (DSN, password file) and the server schema (``edge site init``).
``sync``: pushing this box's records and pulling the others' (``edge site sync``), offline first.
``status``: what ``edge status`` and ``edge site status`` say about the site.
``mqtt``: live events and Home Assistant discovery over MQTT (the topic tree is documented there).
``metrics``: the site state and negative stock on ``/metrics``.
``cli``: the ``edge site`` commands.
"""
