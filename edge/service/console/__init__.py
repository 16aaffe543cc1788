"""The web console at the HTTP API's address (``edge serve``): server-rendered pages (Jinja2), every
asset served from the box (sites are offline).

- :mod:`edge.service.console.data`: what the pages show, from the store (records with filters,
  the record an undo reverts, an inventory CSV's preview against the store).
- :mod:`edge.service.console.routes`: the pages and their POSTs (CSRF token), loopback clients only.
"""
