"""Reading a settings file safely: size and node bounds, no key given twice, errors that name the
file, the line and the fix (:func:`read_yaml`). A leaf of :mod:`edge.config`."""
from __future__ import annotations

from pathlib import Path

import yaml

from edge.errors import UserError

__all__ = ["ConfigError", "MAX_CONFIG_BYTES", "MAX_CONFIG_NODES", "UniqueKeyLoader", "expanded_nodes", "read_yaml",
           "yaml_problem"]


class ConfigError(UserError, ValueError):
    """A configuration file that does not validate; the message names file, key and fix."""


#: The largest config file read, bytes.
MAX_CONFIG_BYTES = 2**20
#: The most YAML nodes a config may hold once its aliases are expanded (the defaults hold about
#: 200): an alias "bomb" of nested anchors (1 kB standing for 10^9 strings) is refused before it is built.
MAX_CONFIG_NODES = 20_000


def expanded_nodes(root: yaml.Node, limit: int = MAX_CONFIG_NODES) -> int:
    """How many nodes the YAML tree ``root`` holds with every alias expanded, counted in time linear
    in the nodes as written (shared nodes are counted once and weighed by their uses).

    Raises:
        ValueError: more than ``limit`` nodes, or an alias inside its own anchor (a cycle).
    """
    weight: dict[int, int] = {}
    open_: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, closing = stack.pop()
        key = id(node)
        kids = _children(node)
        if closing:
            open_.discard(key)
            weight[key] = 1 + sum(weight[id(k)] for k in kids)
            if weight[key] > limit:
                raise ValueError(f"more than {limit:,} values once its aliases (*name) are expanded; "
                                 f"write the settings out instead of nesting anchors")
            continue
        if key in weight:
            continue
        if key in open_:
            raise ValueError(f"line {node.start_mark.line + 1}: an alias refers to the anchor it is inside of")
        open_.add(key)
        stack.append((node, True))
        stack.extend((k, False) for k in kids if id(k) not in weight)
    return weight[id(root)]


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


class UniqueKeyLoader(yaml.SafeLoader):
    """A YAML loader that refuses a key given twice in one mapping (PyYAML keeps the last one
    silently, so ``board: x86-dev`` followed by ``board: {...}`` would drop the board's file), and
    a document of more than :data:`MAX_CONFIG_NODES` nodes once its aliases are expanded."""

    def construct_document(self, node):
        try:
            expanded_nodes(node)
        except ValueError as e:
            raise yaml.constructor.ConstructorError(None, None, str(e), node.start_mark) from None
        return super().construct_document(node)

    def construct_mapping(self, node, deep=False):
        seen: dict = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"the key {key!r} is given twice (line {seen[key] + 1} and line "
                    f"{key_node.start_mark.line + 1}); keep one" + (
                        ": to pick a board and change some of its fields write board: {name: NAME, ...}"
                        if key == "board" else ""), key_node.start_mark)
            seen[key] = key_node.start_mark.line
        return super().construct_mapping(node, deep=deep)


def read_yaml(path: Path) -> dict:
    """The settings mapping in the YAML file ``path`` (``{}`` when empty).

    Raises:
        ConfigError: missing, a folder, unreadable, over :data:`MAX_CONFIG_BYTES`, not UTF-8, not YAML,
            a key given twice, an alias bomb, or not a mapping; the message names the file and the fix.
    """
    try:
        with path.open("rb") as f:
            raw = f.read(MAX_CONFIG_BYTES + 1)
        if len(raw) > MAX_CONFIG_BYTES:
            raise ConfigError(f"{path}: larger than {MAX_CONFIG_BYTES // 1024} KiB, not a config file; "
                              f"pass the YAML settings file to --config")
        data = yaml.load(raw.decode("utf-8"), Loader=UniqueKeyLoader)  # noqa: S506 - a SafeLoader
    except FileNotFoundError:
        raise ConfigError(f"{path}: config file not found; pass an existing file to --config") from None
    except IsADirectoryError:
        raise ConfigError(f"{path}: a folder, not a config file; pass the YAML file itself to --config") from None
    except OSError as e:
        raise ConfigError(f"{path}: cannot read the config file ({e.strerror or e}); check its permissions "
                          f"(the service user must be able to read it)") from None
    except UnicodeDecodeError as e:
        raise ConfigError(f"{path}: not a text file ({e.reason} at byte {e.start}); a config file is YAML "
                          f"saved as UTF-8") from None
    except yaml.YAMLError as e:
        raise ConfigError(f"{path}: not valid YAML: {yaml_problem(e)}") from None
    except RecursionError:
        raise ConfigError(f"{path}: nested too deeply to be settings; a config file is a few levels of "
                          f"key: value") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the top level must be a mapping of settings, got {type(data).__name__}")
    return data


def yaml_problem(e: yaml.YAMLError) -> str:
    """One line for a YAML error: where (line and column, 1-based) and what, plus the fix."""
    mark = getattr(e, "problem_mark", None)  # MarkedYAMLError has it; the base class does not
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
    what = getattr(e, "problem", None) or str(e).splitlines()[0]
    return f"{where}{what}; fix the YAML there (indentation, a missing ] or }} or quote)"
