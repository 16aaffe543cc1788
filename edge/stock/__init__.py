"""The stock room: items, places and their stock, the append-only record log, inventory import,
recovery of a damaged file, the local half of site sync, and the questions asked of the records.

``store.Store`` is the one door; the other modules are its rooms: ``places`` (stock per place),
``importer`` (CSV import), ``pulled`` (other boxes' movements), ``schema`` (migrations), ``recovery``
(backup at start, a corrupt file set aside), ``tx`` (transactions), ``faults`` (what a failed write
means), ``csvfile`` (inventory CSV in with bounds, safe cells out).
"""
