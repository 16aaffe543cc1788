"""The writing process of tests/test_durability.py: logs stock changes until it is killed.

    python tests/durability_writer.py DB INVENTORY SEED START
    python tests/durability_writer.py --fork-server DB INVENTORY SEED     (see :func:`serve`)

Opens the store ``DB`` (imports ``INVENTORY`` if the store has no items yet), prints
``READY <first op> <journal_mode> <synchronous>`` (the pragmas of its own connection), then runs
operations ``n = START, START + 1, ...`` for ever: :func:`op` says whether ``n`` is a
``Store.log`` or a ``Store.undo``. Only after the call returns (the transaction is committed) it
writes ``ACK <turn_id> <record id or ->`` to stdout with one unbuffered ``os.write`` (a pipe write
under PIPE_BUF bytes is atomic, so a line is either whole or absent): the acknowledgement models
the reply "logged". ``START`` may be ``resume``: continue after the highest operation found in the
store. After each ACK it pauses up to :data:`REPLY_S`. Stops by itself only after :data:`MAX_OPS` operations (a hang guard; the test kills it long
before).

Operations depend only on ``(SEED, n)``, so the test can recompute what operation ``n`` was, and a
restarted writer sends exactly the same change with the same turn id.
"""
from __future__ import annotations

import os
import random
import sys
import time
from pathlib import Path

#: Operations one writer runs before giving up (never reached when the test works).
MAX_OPS = 20_000
#: Share of operations that are undos.
UNDO_SHARE = 0.2
#: Longest pause after an acknowledgement, in seconds, standing for the reply being spoken, so
#: that kills also land between turns and not almost always inside a commit's fsync (~4 ms).
REPLY_S = 0.004


def turn_id(n: int) -> str:
    """The turn id of operation ``n`` (the same in every run, so a retry reuses it)."""
    return f"t{n:06d}"


def op_number(turn: str) -> int:
    """Inverse of :func:`turn_id`."""
    return int(turn[1:])


def op(seed: int, n: int, skus: list[str]) -> tuple[str, str | None, int]:
    """Operation ``n``: ``("log", sku, delta)`` with delta in ±[1, 50], or ``("undo", None, 0)``.

    ``skus`` is the inventory's SKUs in sorted order (as ``Store.items()`` returns them).
    """
    rng = random.Random(f"{seed}:{n}")
    if rng.random() < UNDO_SHARE:
        return ("undo", None, 0)
    return ("log", rng.choice(skus), rng.choice((-1, 1)) * rng.randint(1, 50))


def write_forever(store, seed: int, start_text: str, out: int) -> int:
    """The write loop on an open ``store``: READY, then one ACK per committed operation, to fd ``out``."""
    skus = [i.sku for i in store.items()]
    if start_text == "resume":
        first = 1 + max((op_number(r.turn_id) for r in store.records()), default=-1)
    else:
        first = int(start_text)
    conn = store._db()  # the writer's own connection: synchronous is per connection
    mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
    sync = conn.execute("PRAGMA synchronous").fetchone()[0]
    os.write(out, f"READY {first} {mode} {sync}\n".encode())
    for n in range(first, first + MAX_OPS):
        kind, sku, delta = op(seed, n, skus)
        tid = turn_id(n)
        if kind == "undo":
            result = store.undo(f"op-{n}", tid)
            rid = "-" if result is None else str(result[0].id)
        else:
            record, _ = store.log(sku, delta, f"op-{n}", tid)
            rid = str(record.id)
        os.write(out, f"ACK {tid} {rid}\n".encode())  # only now may the reply say "logged"
        time.sleep(random.Random(f"reply:{seed}:{n}").uniform(0, REPLY_S))  # "speaking the reply"
    return 3


def _open(db: str, inventory: str):
    from edge.stock.store import Store

    store = Store(db)
    if not store.items():
        store.import_csv(inventory)
    return store


def serve(db: str, inventory: str, seed: int) -> int:
    """Fork server (``--fork-server``): the interpreter and the store code are loaded once; each
    ``GO START ACKFILE`` line on stdin forks a writer (ACK lines appended to ACKFILE) and answers
    ``PID n``; ``WAIT n`` answers ``EXIT status`` once that child is gone. So a test can kill a
    writer hundreds of times without paying an interpreter start each time."""
    from edge.stock import store as loaded  # imported once, before any fork

    assert loaded.Store
    for line in sys.stdin:
        cmd, *rest = line.split()
        if cmd == "GO":
            pid = os.fork()
            if pid == 0:  # the writer: nothing from the parent is open on the store
                out = os.open(rest[1], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
                os._exit(write_forever(_open(db, inventory), seed, rest[0], out))
            print(f"PID {pid}", flush=True)
        elif cmd == "WAIT":
            _, status = os.waitpid(int(rest[0]), 0)
            print(f"EXIT {status}", flush=True)
    return 0


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    if argv[0] == "--fork-server":
        return serve(argv[1], argv[2], int(argv[3]))
    db, inventory, seed_text, start_text = argv
    return write_forever(_open(db, inventory), int(seed_text), start_text, 1)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
