"""The layers of `src/instancetype` hold: a module imports only from its own layer or lower ones,
the packages of an independent layer (the drivers: controller, webhook, deploy) not from one
another, and no modules import each other, directly or round a longer loop.

Two checkers, which must agree: import-linter's contracts (`[tool.importlinter]` in
pyproject.toml, run as `lint-imports`; also "the engine is pure": no store, I/O, clock,
randomness or threads) and this module's own reading of the import graph, which also places the
root package (the public API) and refuses cycles. Both are shown to fail on a wrong import.

The import graph is read from the sources with `ast`, so every import statement counts: at module
level, inside functions (the lazy imports that keep the command line fast: they run as surely as
the others, only later) and under `if TYPE_CHECKING:`. `from P import name` is an import of the
module `P.name` when that is a module, else of `P`. Importing `a.b.c` also runs the packages
`a` and `a.b`, but those implied imports are not edges: a package's `__init__` re-exporting its
submodules is not a cycle. `importlib.import_module` with a computed name (the command table of
`cli.main`, the public API's lazy attributes) is not seen; those tables name modules in their
own layer or lower ones.
"""
from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = "instancetype"
REPO = Path(__file__).resolve().parent.parent
SRC = REPO / "src" / ROOT

# Lowest first. A module belongs to the entry whose package is the longest prefix of its name;
# `instancetype` itself (the public API, `__init__.py`) matches only itself.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    # Used by every layer: the one exception tree, the JSON helpers, the collector pause.
    ("base", ("instancetype.errors", "instancetype.jsonutil", "instancetype.gcpause")),
    # The kinds and their Go types: Quantity, the v1beta1/v1alpha types, Go's JSON decode.
    ("api", ("instancetype.api",)),
    # Pure functions of KubeVirt's rules: no I/O.
    ("engine", ("instancetype.engine",)),
    # Over the engine and beside each other: the catalogue (it runs the engine to fit VMs and
    # build VMIs; the controller deploys it and the cli prints it), the public API and its
    # JSON Lines driver (conformance).
    ("catalog, public API", ("instancetype.catalog", "instancetype", "instancetype.conformance")),
    # Where objects live (the embedded SQLite store, the API server); it holds no rules.
    ("store", ("instancetype.store",)),
    # What the drivers share over a store: admission, the catalogue sync, expand-vm-spec.
    ("lifecycle", ("instancetype.lifecycle",)),
    # The drivers of the engine over a store, independent of one another: the VM lifecycle
    # (controller), virt-api's webhooks and subresources (webhook), the install (deploy).
    ("drivers", ("instancetype.controller", "instancetype.webhook", "instancetype.deploy")),
    # The command line, on top of everything.
    ("cli", ("instancetype.cli", "instancetype.__main__")),
)


# Layers whose packages may not import one another.
INDEPENDENT = frozenset({"drivers"})


def package_of(module: str) -> str | None:
    """The LAYERS package `module` belongs to (the longest prefix), or None."""
    best = None
    for _, packages in LAYERS:
        for p in packages:
            if (module == p or (p != ROOT and module.startswith(p + "."))) and len(p) > len(best or ""):
                best = p
    return best


def layer_of(module: str) -> int | None:
    best, level = "", None
    for i, (_, packages) in enumerate(LAYERS):
        for p in packages:
            matches = module == p or (p != ROOT and module.startswith(p + "."))
            if matches and len(p) > len(best):
                best, level = p, i
    return level


def modules() -> dict[str, tuple[Path, bool]]:
    """Every module of the package: dotted name -> (path, is a package)."""
    out = {}
    for path in sorted(SRC.rglob("*.py")):
        parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts.pop()
        out[".".join(parts)] = (path, is_package)
    return out


def _known(name: str, mods: dict) -> str | None:
    """`name`, or the nearest enclosing package of ours, or None when it is not ours."""
    while name and name not in mods:
        name = name.rpartition(".")[0]
    return name or None


def imports(mods: dict) -> list[tuple[str, str, int]]:
    """(importer, imported, line) for every import of one of our modules by another."""
    edges = []
    for name, (path, is_package) in mods.items():
        package = name if is_package else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            targets: list[str | None] = []
            if isinstance(node, ast.Import):
                targets = [_known(a.name, mods) for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    parts = package.split(".")
                    base = ".".join(parts[:len(parts) - node.level + 1] + ([node.module] if node.module else []))
                else:
                    base = node.module or ""
                for a in node.names:
                    full = f"{base}.{a.name}"
                    targets.append(full if full in mods else _known(base, mods))
            for target in targets:
                if target is not None and target != name:
                    edges.append((name, target, node.lineno))
    return edges


def cycles(nodes, edges) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, without recursion)."""
    succ: dict[str, list[str]] = {n: [] for n in nodes}
    for a, b, _ in edges:
        succ[a].append(b)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in sorted(nodes):
        if root in index:
            continue
        work = [(root, iter(sorted(set(succ[root]))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(set(succ[w])))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                component = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component.append(w)
                    if w == v:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_every_module_has_a_layer():
    missing = sorted(m for m in modules() if layer_of(m) is None)
    assert not missing, "modules in no layer (add their package to LAYERS in tests/test_layers.py): " + ", ".join(missing)


def test_imports_go_to_the_same_or_a_lower_layer():
    mods = modules()
    upward = []
    for a, b, line in sorted(set(imports(mods))):
        la, lb = layer_of(a), layer_of(b)
        if la is not None and lb is not None and lb > la:
            upward.append(f"{a} imports {b} (layer {LAYERS[lb][0]} above {LAYERS[la][0]}) "
                          f"at {mods[a][0].relative_to(SRC.parent)}:{line}")
    assert not upward, "imports upward:\n" + "\n".join(upward)


def test_independent_packages_do_not_import_one_another():
    mods = modules()
    across = []
    for a, b, line in sorted(set(imports(mods))):
        la, lb = layer_of(a), layer_of(b)
        if la is not None and la == lb and LAYERS[la][0] in INDEPENDENT and package_of(a) != package_of(b):
            across.append(f"{a} imports {b} (both {LAYERS[la][0]}, which are independent) "
                          f"at {mods[a][0].relative_to(SRC.parent)}:{line}")
    assert not across, "imports between independent packages:\n" + "\n".join(across)


def test_no_import_cycles():
    mods = modules()
    edges = imports(mods)
    found = cycles(mods, edges)
    lines = []
    for component in found:
        members = set(component)
        lines.append(" <-> ".join(component) + ": " + "; ".join(
            f"{a} imports {b} at {mods[a][0].relative_to(SRC.parent)}:{line}"
            for a, b, line in sorted(set(edges)) if a in members and b in members))
    assert not found, "modules that import each other:\n" + "\n".join(lines)


# --- the checker itself, on made-up packages ----------------------------------------------------
def test_the_checker_sees_function_level_relative_and_from_imports(tmp_path, monkeypatch):
    pkg = tmp_path / ROOT
    (pkg / "engine").mkdir(parents=True)
    (pkg / "api").mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "errors.py").write_text("")
    (pkg / "api" / "__init__.py").write_text("")
    (pkg / "api" / "kinds.py").write_text("def f():\n    from ..engine import spec\n")
    (pkg / "engine" / "__init__.py").write_text("")
    (pkg / "engine" / "spec.py").write_text("from instancetype.api.kinds import f\nfrom . import vmi\n")
    (pkg / "engine" / "vmi.py").write_text("def g():\n    import instancetype.engine.spec\n")
    monkeypatch.setitem(globals(), "SRC", pkg)
    mods = modules()
    edges = {(a, b) for a, b, _ in imports(mods)}
    assert edges == {
        ("instancetype.api.kinds", "instancetype.engine.spec"),
        ("instancetype.engine.spec", "instancetype.api.kinds"),
        ("instancetype.engine.spec", "instancetype.engine.vmi"),
        ("instancetype.engine.vmi", "instancetype.engine.spec"),
    }
    assert sorted(map(tuple, cycles(mods, imports(mods)))) == [
        ("instancetype.api.kinds", "instancetype.engine.spec", "instancetype.engine.vmi")]
    try:
        test_imports_go_to_the_same_or_a_lower_layer()
    except AssertionError as e:
        assert "instancetype.api.kinds imports instancetype.engine.spec (layer engine above api) " \
               "at instancetype/api/kinds.py:2" in str(e)
    else:
        raise AssertionError("the upward import was not reported")


def test_the_checker_refuses_an_import_between_drivers(tmp_path, monkeypatch):
    pkg = tmp_path / ROOT
    for sub in ("controller", "webhook"):
        (pkg / sub).mkdir(parents=True)
        (pkg / sub / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "controller" / "cluster.py").write_text("def f():\n    from instancetype.webhook import review\n")
    (pkg / "webhook" / "review.py").write_text("")
    monkeypatch.setitem(globals(), "SRC", pkg)
    try:
        test_independent_packages_do_not_import_one_another()
    except AssertionError as e:
        assert "instancetype.controller.cluster imports instancetype.webhook.review (both drivers" in str(e)
    else:
        raise AssertionError("the import between drivers was not reported")


# --- import-linter's contracts ------------------------------------------------------------------------

def lint_imports(src: Path, config: Path) -> subprocess.CompletedProcess:
    """`lint-imports` over the package under `src` (found first on the path), no cache written."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(src), os.environ.get("PYTHONPATH", "")])}
    script = Path(sys.executable).with_name("lint-imports")
    cmd = [str(script)] if script.exists() else [sys.executable, "-m", "importlinter.cli"]
    return subprocess.run([*cmd, "--no-cache", "--no-logo", str(config)], cwd=src.parent, env=env,
                          capture_output=True, text=True, timeout=300)


def test_the_import_contracts_hold():
    out = lint_imports(REPO / "src", REPO / "pyproject.toml")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Contracts: 2 kept, 0 broken." in out.stdout


def test_the_import_contracts_fail_on_a_wrong_import(tmp_path):
    """A copy of the tree with two wrong imports: a driver importing another (the controller from
    the webhook code) and the engine opening a database; both contracts break, naming the import."""
    shutil.copytree(SRC, tmp_path / "src" / ROOT, ignore=shutil.ignore_patterns("__pycache__"))
    review = tmp_path / "src" / ROOT / "webhook" / "review.py"
    review.write_text(review.read_text() + "\n\ndef _wrong():\n    from instancetype.controller import vm  # noqa\n")
    spec = tmp_path / "src" / ROOT / "engine" / "spec.py"
    spec.write_text(spec.read_text() + "\n\ndef _impure():\n    import sqlite3  # noqa\n")
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    out = lint_imports(tmp_path / "src", tmp_path / "pyproject.toml")
    assert out.returncode != 0
    text = " ".join(out.stdout.split())
    assert "Contracts: 0 kept, 2 broken." in text, out.stdout
    assert "instancetype.webhook is not allowed to import instancetype.controller" in text, out.stdout
    assert "instancetype.webhook.review -> instancetype.controller.vm" in text, out.stdout
    assert "instancetype.engine.spec -> sqlite3" in text, out.stdout
