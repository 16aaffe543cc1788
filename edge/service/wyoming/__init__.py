"""Wyoming protocol services for Home Assistant: ``asr``, ``tts``, ``wake`` and ``handle``.

- :mod:`edge.service.wyoming.frames`: reading one event off the wire with bounds (header line,
  data and payload lengths, timeouts); a malformed frame raises :class:`ProtocolError`.
- :mod:`edge.service.wyoming.box`: the loaded stages behind the services, one instance of each
  model, calls to each serialized; a ``handle`` turn is the voice loop's turn on text.
- :mod:`edge.service.wyoming.locks`: one lock per stage shared with the live service's voice loop
  (recognizer, Understanding, store, speech engine), with its own counters.
- :mod:`edge.service.wyoming.connection`: one client's events, in order.
- :mod:`edge.service.wyoming.server`: the listening socket, the client bound, ``edge wyoming``; the
  live service runs the same server on a thread when the config has a ``wyoming:`` section.
- :mod:`edge.service.wyoming.announce`: the optional zeroconf ``_wyoming._tcp`` announcement.
"""
