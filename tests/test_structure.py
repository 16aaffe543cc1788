"""The product's import structure, read from its source with ``ast`` (nothing is imported or run).

Rules for the modules of ``edge`` and ``drivers``, counting imports inside functions too (imports
under ``if TYPE_CHECKING:`` are type-only and left out; relative imports are resolved):

1. no import cycle;
2. no private name (``_x``, not ``__x__``) taken from another product module: neither imported
   (``from edge.x import _y``) nor reached as an attribute of an imported module or name
   (``models._package_dir``); a private module (``drivers/sensors/_read.py``) is imported only
   from inside its own package;
3. ``drivers`` imports nothing of ``edge`` but the leaf ``edge.errors``.

Each check is also run on a small package written to ``tmp_path`` with the faults planted, so a
checker that finds nothing cannot pass unnoticed.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.helpers import REPO

PACKAGES = ("edge", "drivers")
#: the one module of edge that drivers may import
DRIVERS_MAY_IMPORT = frozenset({"edge.errors"})


@dataclass(frozen=True)
class Import:
    """One import statement's reference to a product module: ``importer`` imports ``target`` (a
    module of the scanned packages) at ``path``:``line``; ``name`` is the name taken from it (the
    ``x`` of ``from target import x``; empty for ``import target``). ``implicit``: ``target`` is a
    package whose ``__init__`` runs because a module inside it was imported."""

    importer: str
    target: str
    name: str
    path: Path
    line: int
    implicit: bool = False


@dataclass
class Structure:
    """The scanned modules (dotted name → file), their imports of each other, and the private
    attributes reached on imported modules or names (``(importer, "mod._x", path, line)``)."""

    modules: dict[str, Path]
    imports: list[Import] = field(default_factory=list)
    reach_ins: list[tuple[str, str, Path, int]] = field(default_factory=list)

    def __repr__(self) -> str:
        return f"Structure({len(self.modules)} modules, {len(self.imports)} imports, {len(self.reach_ins)} reach-ins)"

    def graph(self) -> dict[str, dict[str, Import]]:
        """importer → {imported module: the first import of it}."""
        g: dict[str, dict[str, Import]] = {m: {} for m in self.modules}
        for imp in self.imports:
            if imp.target != imp.importer:
                g[imp.importer].setdefault(imp.target, imp)
        return g


def is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def module_names(root: Path, packages=PACKAGES) -> dict[str, Path]:
    """Dotted module name → source file, for every ``.py`` under ``root/<package>``."""
    mods = {}
    for base in packages:
        for p in sorted((root / base).rglob("*.py")):
            parts = list(p.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            mods[".".join(parts)] = p
    return mods


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    """ids of the nodes inside the body of an ``if TYPE_CHECKING:`` (or ``typing.TYPE_CHECKING``)."""
    out: set[int] = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.If) and ast.unparse(n.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING"):
            for stmt in n.body:
                out.update(id(c) for c in ast.walk(stmt))
    return out


def _resolve_from(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The absolute module a ``from ... import`` names (relative levels resolved)."""
    if not node.level:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _owner(name: str, mods: dict[str, Path]) -> str | None:
    """The scanned module ``name`` is, or is inside (``edge.models.manifest.resolve`` → ``edge.models.manifest``)."""
    while name and name not in mods:
        name = name.rpartition(".")[0]
    return name or None


def scan(root: Path, packages=PACKAGES) -> Structure:
    """Read every module of ``packages`` under ``root`` and collect its imports of the others."""
    mods = module_names(root, packages)
    st = Structure(mods)
    for mod, path in mods.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        skip = _type_checking_nodes(tree)
        bound: dict[str, str] = {}  # local name → "module" or "module.name" it stands for
        for n in ast.walk(tree):
            if id(n) in skip:
                continue
            if isinstance(n, ast.Import):
                for a in n.names:
                    target = _owner(a.name, mods)
                    if target:
                        st.imports.append(Import(mod, target, "", path, n.lineno))
                        local = a.asname or a.name.partition(".")[0]
                        bound[local] = a.name if a.asname else local
            elif isinstance(n, ast.ImportFrom):
                base = _resolve_from(mod, path.name == "__init__.py", n)
                for a in n.names:
                    sub = f"{base}.{a.name}"
                    target = sub if sub in mods else _owner(base, mods)
                    if target:
                        st.imports.append(Import(mod, target, "" if target == sub else a.name, path, n.lineno))
                        bound[a.asname or a.name] = sub
        st.imports += _parent_packages(mod, st.imports, mods)
        for n in ast.walk(tree):
            if isinstance(n, ast.Attribute) and is_private(n.attr) and id(n) not in skip:
                head = ast.unparse(n.value)
                first, _, rest = head.partition(".")
                if first in bound:
                    ref = bound[first] + ("." + rest if rest else "")
                    owner = _owner(ref, mods)
                    if owner and owner != mod:
                        st.reach_ins.append((mod, f"{head}.{n.attr}", path, n.lineno))
    return st


def _parent_packages(mod: str, imports: list[Import], mods: dict[str, Path]) -> list[Import]:
    """Importing ``a.b.c`` runs ``a/__init__`` and ``a/b/__init__`` first: an implicit import of
    each package above the target, except the packages ``mod`` itself is inside (already running)."""
    out = []
    for imp in [i for i in imports if i.importer == mod and not i.implicit]:
        parts = imp.target.split(".")
        for k in range(1, len(parts)):
            pkg = ".".join(parts[:k])
            if pkg in mods and pkg != mod and not mod.startswith(pkg + "."):
                out.append(Import(mod, pkg, "", imp.path, imp.line, implicit=True))
    return out


def find_cycles(st: Structure) -> list[list[Import]]:
    """One cycle per strongly connected group of modules, as the imports that close it."""
    g = st.graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(g[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for v in sorted(g):
        if v not in index:
            visit(v)
    return [_cycle_in(g, group) for group in groups]


def _cycle_in(g: dict[str, dict[str, Import]], group: list[str]) -> list[Import]:
    """A shortest cycle through ``group[0]`` inside ``group``, as its imports."""
    start, members = group[0], set(group)
    paths: dict[str, list[Import]] = {start: []}
    frontier = [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w, imp in sorted(g[v].items()):
                if w not in members:
                    continue
                if w == start:
                    return paths[v] + [imp]
                if w not in paths:
                    paths[w] = paths[v] + [imp]
                    nxt.append(w)
        frontier = nxt
    raise AssertionError(f"no cycle through {start} in {group}")


def describe_cycle(cycle: list[Import], root: Path) -> str:
    names = " -> ".join([cycle[0].importer] + [imp.target for imp in cycle])
    where = ", ".join(f"{imp.path.relative_to(root)}:{imp.line}" for imp in cycle)
    return f"{names} ({where})"


def private_uses(st: Structure, root: Path) -> list[str]:
    """Every private name taken from another module, and every private module imported from
    outside its package: ``file:line: what``."""
    out = []
    for imp in st.imports:
        where = f"{imp.path.relative_to(root)}:{imp.line}"
        if imp.implicit:
            continue
        if imp.name and is_private(imp.name) and imp.target != imp.importer:
            out.append(f"{where}: {imp.importer} imports {imp.name} from {imp.target}")
        parts = imp.target.split(".")
        for k, part in enumerate(parts):
            package = ".".join(parts[:k])
            if is_private(part) and imp.importer != package and not imp.importer.startswith(package + "."):
                out.append(f"{where}: {imp.importer} imports the private module {imp.target} from outside {package}")
    for mod, ref, path, line in st.reach_ins:
        out.append(f"{path.relative_to(root)}:{line}: {mod} reaches into {ref}")
    return sorted(set(out))


def driver_uses_of_edge(st: Structure, root: Path) -> list[str]:
    """Imports of ``edge`` modules by ``drivers`` modules, but for :data:`DRIVERS_MAY_IMPORT`."""
    return sorted(f"{imp.path.relative_to(root)}:{imp.line}: {imp.importer} imports {imp.target}"
                  for imp in st.imports
                  if not imp.implicit and imp.importer.split(".")[0] == "drivers" and imp.target.split(".")[0] == "edge"
                  and imp.target not in DRIVERS_MAY_IMPORT)


# ------------------------------------------------------------------------------------- the product


@pytest.fixture(scope="module")
def product() -> Structure:
    return scan(REPO)


def test_the_scan_sees_the_product(product):
    assert {"edge.cli", "edge.errors", "drivers.audio.wavfile", "edge.stages.nlu.grammar"} <= set(product.modules)
    g = product.graph()
    assert "edge.stages.nlu.lexicon" in g["edge.stages.nlu.grammar"]
    assert "edge.errors" in g["drivers.audio.wavfile"]


def test_no_import_cycle(product):
    cycles = [describe_cycle(c, REPO) for c in find_cycles(product)]
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def test_no_private_name_from_another_module(product):
    uses = private_uses(product, REPO)
    assert not uses, "private names used across modules:\n" + "\n".join(uses)


def test_drivers_import_only_the_error_root_of_edge(product):
    uses = driver_uses_of_edge(product, REPO)
    assert not uses, "drivers importing edge:\n" + "\n".join(uses)


# ------------------------------------------------------------------------- the checker, on a plant


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return root


CLEAN = {
    "edge/__init__.py": '"""A package."""\n',
    "edge/errors.py": "class EdgeError(Exception):\n    pass\n",
    "edge/base.py": "from edge.errors import EdgeError\n\n\ndef api():\n    return EdgeError\n",
    "edge/sub/__init__.py": "",
    "edge/sub/one.py": "from typing import TYPE_CHECKING\n\nfrom ..base import api\n\n"
                       "if TYPE_CHECKING:\n    from edge.sub.two import Two\n",
    "edge/sub/two.py": "from . import one\n\n\nclass Two:\n    def f(self):\n        return one.api, self._own\n",
    "edge/sub/_part.py": "X = 1\n",
    "edge/sub/three.py": "from edge.sub._part import X\n",
    "drivers/__init__.py": "",
    "drivers/dev.py": "from edge import errors\nfrom edge.errors import EdgeError\n",
}


def test_a_clean_package_passes_every_check(tmp_path):
    root = _write(tmp_path, CLEAN)
    st = scan(root)
    assert find_cycles(st) == []  # one.py <- two.py only through TYPE_CHECKING: not a cycle
    assert private_uses(st, root) == []  # _part is imported from inside its package
    assert driver_uses_of_edge(st, root) == []
    assert "edge.base" in st.graph()["edge.sub.one"]  # the relative import was resolved


def test_a_cycle_through_a_function_level_and_a_relative_import_is_found(tmp_path):
    root = _write(tmp_path, {**CLEAN, "edge/base.py": "def api():\n    from edge.sub.two import Two\n    return Two\n"})
    cycles = find_cycles(scan(root))
    assert len(cycles) == 1
    text = describe_cycle(cycles[0], root)
    assert text == ("edge.base -> edge.sub.two -> edge.sub.one -> edge.base "
                    "(edge/base.py:2, edge/sub/two.py:1, edge/sub/one.py:3)"), text


def test_a_cycle_through_a_package_init_is_found(tmp_path):
    """``edge.a`` imports ``edge.pkg.leaf``, which first runs ``edge/pkg/__init__``, which imports
    ``edge.pkg.user``, which imports ``edge.a``: no module names the package, yet it is a cycle."""
    root = _write(tmp_path, {
        **CLEAN,
        "edge/a.py": "from edge.pkg.leaf import X\n",
        "edge/pkg/__init__.py": "from edge.pkg import user\n",
        "edge/pkg/leaf.py": "X = 1\n",
        "edge/pkg/user.py": "from edge.a import X\n",
    })
    cycles = find_cycles(scan(root))
    assert [sorted(imp.importer for imp in c) for c in cycles] == [["edge.a", "edge.pkg", "edge.pkg.user"]]


def test_a_type_checking_import_becomes_a_cycle_when_it_leaves_the_block(tmp_path):
    one = "from ..base import api\nfrom edge.sub.two import Two\n"
    cycles = find_cycles(scan(_write(tmp_path, {**CLEAN, "edge/sub/one.py": one})))
    assert [[imp.importer for imp in c] for c in cycles] == [["edge.sub.one", "edge.sub.two"]]


def test_private_imports_and_reach_ins_are_found(tmp_path):
    root = _write(tmp_path, {
        **CLEAN,
        "edge/base.py": "_hidden = 1\n\n\ndef api():\n    return 2\n",
        "edge/sub/one.py": "def f():\n    from edge.base import _hidden\n    return _hidden\n",
        "edge/sub/two.py": "from edge import base as b\nimport edge.base\n\n\n"
                           "def g():\n    return b._hidden, edge.base._hidden, b.__name__\n",
        "edge/outside.py": "from edge.sub._part import X\n",
    })
    assert private_uses(scan(root), root) == [
        "edge/outside.py:1: edge.outside imports the private module edge.sub._part from outside edge.sub",
        "edge/sub/one.py:2: edge.sub.one imports _hidden from edge.base",
        "edge/sub/two.py:6: edge.sub.two reaches into b._hidden",
        "edge/sub/two.py:6: edge.sub.two reaches into edge.base._hidden",
    ]


def test_drivers_importing_edge_beyond_the_error_root_is_found(tmp_path):
    root = _write(tmp_path, {**CLEAN, "drivers/dev.py": "from edge.errors import EdgeError\n\n\n"
                                                        "def f():\n    from edge import base\n    return base\n"})
    assert driver_uses_of_edge(scan(root), root) == ["drivers/dev.py:5: drivers.dev imports edge.base"]
