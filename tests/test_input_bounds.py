"""Bounds on everything a user or a file can send: an inventory CSV (quantity range, field, row and
file size, encodings, NUL and control characters) and a config file (an alias bomb, nesting, size).
Each is fed to the real ``edge`` command; a refusal is exit 2, one ``edge: ...`` message naming the
file, line and column and the fix, no traceback, and nothing imported."""
from __future__ import annotations

import codecs
import json
import os
import subprocess
import sys

import pytest

from edge.config import MAX_CONFIG_BYTES
from edge.stock.csvfile import MAX_CSV_BYTES, MAX_CSV_ROWS, MAX_FIELD_CHARS, MAX_IMPORT_QUANTITY
from edge.stock.store import Store
from tests.helpers import REPO

HEADER = "sku,item,location,quantity,unit,aliases\n"
GOOD = "BLT-M8-30,M8 bolt,bin 12,140,pcs,m8 bolts\n"


def edge(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "edge.cli", *map(str, args)], cwd=REPO, capture_output=True,
                          text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(REPO)})


@pytest.fixture
def cfg(tmp_path):
    p = tmp_path / "edge.yaml"
    p.write_text(f"board: x86-dev\nstore: {{path: {tmp_path / 'edge.db'}}}\nllm: {{engine: none}}\n")
    return p


def refused(r: subprocess.CompletedProcess, *names: str) -> str:
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr[-2000:])
    assert "Traceback" not in r.stderr, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("edge: "), r.stderr
    for n in names:
        assert n in lines[0], (n, lines[0])
    return lines[0]


def nothing_imported(tmp_path) -> None:
    with Store(tmp_path / "edge.db") as s:
        assert s.items() == [] and s.records() == []


BAD_ROWS = {
    # name: (second data row, words the message must hold)
    "2^63-1": (f"DRL-BIT-6,drill bit,drawer 4,{2**63 - 1},pcs,\n", ["line 3", "'quantity'", f"{MAX_IMPORT_QUANTITY:,}"]),
    "2^64": (f"DRL-BIT-6,drill bit,drawer 4,{2**64},pcs,\n", ["line 3", "'quantity'", "largest quantity"]),
    "negative": ("DRL-BIT-6,drill bit,drawer 4,-5,pcs,\n", ["line 3", "'quantity'", "non-negative integer"]),
    "arabic digits": ("DRL-BIT-6,drill bit,drawer 4,١٢,pcs,\n", ["line 3", "'quantity'", "whole number"]),
    "NUL": ("DRL-BIT-6,drill\0bit,drawer 4,5,pcs,\n", ["line 3", "'item'", "NUL byte"]),
    "escape": ("DRL-BIT-6,drill bit,drawer \x1b[2J4,5,pcs,\n", ["line 3", "'location'", "U+001B"]),
    "line break in quotes": ('DRL-BIT-6,"drill\nbit",drawer 4,5,pcs,\n', ["line 4", "'item'", "U+000A"]),
    "long field": (f"DRL-BIT-6,{'x' * (MAX_FIELD_CHARS + 1)},drawer 4,5,pcs,\n",
                   ["line 3", "'item'", f"more than {MAX_FIELD_CHARS}"]),
    "huge field": (f"DRL-BIT-6,\"{'x' * 200_000}\",drawer 4,5,pcs,\n", ["line 3", "malformed CSV"]),
}


@pytest.mark.parametrize("case", list(BAD_ROWS))
def test_a_bad_cell_is_refused_naming_line_and_column(cfg, tmp_path, case):
    row, words = BAD_ROWS[case]
    csv_path = tmp_path / "stock.csv"
    csv_path.write_text(HEADER + GOOD + row, encoding="utf-8")
    refused(edge("inventory", "import", csv_path, "--config", cfg), str(csv_path), "fix", *words)
    nothing_imported(tmp_path)


def test_the_largest_quantity_is_taken(cfg, tmp_path):
    csv_path = tmp_path / "stock.csv"
    csv_path.write_text(HEADER + f"BIG-1,washer,bin 1,{MAX_IMPORT_QUANTITY},pcs,\n")
    r = edge("inventory", "import", csv_path, "--config", cfg)
    assert r.returncode == 0, r.stderr
    with Store(tmp_path / "edge.db") as s:
        assert s.get("BIG-1").quantity == MAX_IMPORT_QUANTITY


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be", "utf-32", "utf-8-sig"])
def test_unicode_with_a_byte_order_mark_is_detected(cfg, tmp_path, encoding):
    csv_path = tmp_path / "stock.csv"
    data = (HEADER + "SCR-GR,Schraube groß,Fach 3,7,pcs,Schrauben\n").encode(encoding)
    if encoding == "utf-16-be":
        data = codecs.BOM_UTF16_BE + data
    csv_path.write_bytes(data)
    r = edge("inventory", "import", csv_path, "--config", cfg)
    assert r.returncode == 0, r.stderr
    with Store(tmp_path / "edge.db") as s:
        assert s.get("SCR-GR").item == "Schraube groß"


@pytest.mark.parametrize("encoding, named", [("cp1252", "Windows-1252"),
                                             ("utf-16-le", "UTF-16 without a byte-order mark")])
def test_another_encoding_is_named(cfg, tmp_path, encoding, named):
    csv_path = tmp_path / "stock.csv"
    csv_path.write_bytes((HEADER + GOOD + "SCR-GR,Schraube groß,Fach 3,7,pcs,\n").encode(encoding))
    line = refused(edge("inventory", "import", csv_path, "--config", cfg), str(csv_path), named, "CSV UTF-8")
    if encoding == "cp1252":
        assert "line 3" in line
    nothing_imported(tmp_path)


@pytest.mark.parametrize("encoding, order", [("utf-16-le", "little-endian"), ("utf-16-be", "big-endian")])
def test_ascii_utf_16_without_a_byte_order_mark_is_named_as_utf_16(cfg, tmp_path, encoding, order):
    # plain ASCII in UTF-16 is valid UTF-8 with a NUL beside every character: it was refused as a NUL byte
    csv_path = tmp_path / "stock.csv"
    csv_path.write_bytes((HEADER + GOOD).encode(encoding))
    line = refused(edge("inventory", "import", csv_path, "--config", cfg), str(csv_path),
                   "UTF-16 without a byte-order mark", order, "CSV UTF-8")
    assert "NUL" not in line
    nothing_imported(tmp_path)


def test_a_file_over_the_size_limit_is_refused_without_reading_it(cfg, tmp_path):
    csv_path = tmp_path / "stock.csv"
    with open(csv_path, "wb") as f:
        f.write((HEADER + GOOD).encode())
        f.truncate(MAX_CSV_BYTES + 1)  # sparse: no disk used
    refused(edge("inventory", "import", csv_path, "--config", cfg), str(csv_path), f"{MAX_CSV_BYTES // 2**20} MiB")
    nothing_imported(tmp_path)


def test_too_many_rows_are_refused_naming_the_line(cfg, tmp_path):
    csv_path = tmp_path / "stock.csv"
    csv_path.write_text(HEADER + "".join(f"S{i},item {i},bin 1,1,pcs,\n" for i in range(MAX_CSV_ROWS + 1)))
    refused(edge("inventory", "import", csv_path, "--config", cfg), str(csv_path),
            f"line {MAX_CSV_ROWS + 2}", f"more than {MAX_CSV_ROWS:,}")
    nothing_imported(tmp_path)


# ------------------------------------------------------------------------------------- config files

def bomb(levels: int = 9) -> str:
    """The "billion laughs": 9 levels of 9 aliases each stand for 9^9 (387 million) strings in < 1 kB."""
    text = 'l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    for i in range(1, levels):
        text += f"l{i}: &l{i} [" + ",".join([f"*l{i - 1}"] * 9) + "]\n"
    return text


def test_a_yaml_alias_bomb_is_refused_fast_with_little_memory(tmp_path):
    cfg = tmp_path / "edge.yaml"
    cfg.write_text("board: x86-dev\n" + bomb())
    assert cfg.stat().st_size < 1024
    # VmHWM: this process's peak resident memory (getrusage's maxrss would include the parent's at fork)
    r = subprocess.run([sys.executable, "-c", (
        "import re, sys\n"
        "from edge.config import ConfigError, load_settings\n"
        "try:\n    load_settings(sys.argv[1])\nexcept ConfigError as e:\n    print(e)\n"
        "hwm = re.search(r'VmHWM:\\s+(\\d+) kB', open('/proc/self/status').read()).group(1)\n"
        "print('maxrss_kib', hwm)\n"), str(cfg)],
        cwd=REPO, capture_output=True, text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert r.returncode == 0, r.stderr
    assert str(cfg) in r.stdout and "aliases" in r.stdout and "20,000" in r.stdout, r.stdout
    rss_kib = int(r.stdout.rsplit("maxrss_kib", 1)[1])
    assert rss_kib < 200 * 1024, rss_kib  # the interpreter and edge.config; the bomb adds nothing
    # and the same through the command line
    r = edge("ask", "undo that", "--config", cfg)
    assert r.returncode == 2 and "Traceback" not in r.stderr and "aliases" in r.stderr, r.stderr


def test_an_alias_inside_its_own_anchor_is_refused(tmp_path):
    cfg = tmp_path / "edge.yaml"
    cfg.write_text("board: x86-dev\nwake: &w {models: [*w]}\n")
    r = edge("ask", "undo that", "--config", cfg)
    assert r.returncode == 2 and "Traceback" not in r.stderr and "line 2" in r.stderr, r.stderr


def test_a_few_aliases_are_still_fine(tmp_path):
    cfg = tmp_path / "edge.yaml"
    cfg.write_text(f"board: x86-dev\nllm: &off {{engine: none}}\nstore: {{path: {tmp_path / 'e.db'}}}\n")
    r = edge("ask", "undo that", "--config", cfg)
    assert r.returncode == 0, r.stderr


def test_a_deeply_nested_or_huge_config_is_named(tmp_path):
    deep = tmp_path / "deep.yaml"
    deep.write_text("board: x86-dev\nwake: " + "[" * 20_000 + "]" * 20_000 + "\n")
    refused(edge("ask", "undo that", "--config", deep), str(deep), "nested too deeply")
    huge = tmp_path / "huge.yaml"
    with open(huge, "wb") as f:
        f.write(b"board: x86-dev\n")
        f.truncate(MAX_CONFIG_BYTES + 1)
    refused(edge("ask", "undo that", "--config", huge), str(huge), "larger than")


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to hand the file to another user")
def test_an_unreadable_config_is_named_for_the_service_user(tmp_path):
    """A config owned by another user, mode 0600, read by a process without the capability to
    override file permissions (what the service user meets)."""
    cfg = tmp_path / "edge.yaml"
    cfg.write_text("board: x86-dev\n")
    os.chown(cfg, 65534, 65534)
    cfg.chmod(0o600)
    r = subprocess.run(["setpriv", "--bounding-set", "-dac_override,-dac_read_search", "--", sys.executable, "-m",
                        "edge.cli", "ask", "undo that", "--config", str(cfg)], cwd=REPO, capture_output=True,
                       text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(REPO)})
    refused(r, str(cfg), "cannot read the config file", "permissions")


def test_an_utterance_over_the_cap_is_refused_by_edge_ask_and_not_echoed(cfg):
    text = "how many M8 bolts are in bin twelve " * 150  # 5,400 characters
    r = edge("ask", text, "--config", cfg, "--json")
    assert r.returncode == 2, (r.stdout, r.stderr[-2000:])
    replies = [json.loads(line) for line in r.stdout.splitlines() if '"reply"' in line]
    assert len(replies) == 1, r.stdout
    said = replies[0]["text"]
    assert f"{len(text):,} characters" in said and "at most 1,000 characters" in said and "nothing was done" in said
    assert "M8 bolts" not in r.stdout
