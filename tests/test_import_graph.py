"""helpers/ has no import cycle: every module is parsed and every import of a sibling —
at the top, inside a function, or for type checking only — is an edge; a cycle fails with
its path. (A cycle through a function-level import still ties two modules together: each
needs the other to be read.) The layering rule holds too: no helpers module imports the
host at import time, and the packages' direction: scoring/ never imports recall/ or report/,
report/ never imports recall/ (recall uses both; the top-level modules sit below or above)."""

import ast
from pathlib import Path

import pytest

HELPERS = Path(__file__).resolve().parents[1] / "helpers"
PACKAGE = "helpers"
ABSOLUTE = "usr.plugins.a0_reranker.helpers"
HOST_PACKAGES = ("helpers.plugins", "plugins", "agent", "models", "initialize", "usr")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(HELPERS.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_package(name: str) -> bool:
    return (HELPERS.parent / Path(*name.split(".")) / "__init__.py").exists()


def exists(name: str) -> bool:
    return is_package(name) or (HELPERS.parent / Path(*name.split("."))).with_suffix(".py").exists()


def imports_of(path: Path) -> set[str]:
    """The helpers modules ``path`` imports, by module name."""
    here = module_name(path)
    package = here if path.name == "__init__.py" else here.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            elif node.module and node.module.startswith(ABSOLUTE):
                target = PACKAGE + node.module[len(ABSOLUTE) :]
            else:
                continue
            names = [f"{target}.{alias.name}" for alias in node.names]
            modules = [n for n in names if exists(n)]  # ``from . import x``: x is a module
            found.update(modules or ([target] if exists(target) else []))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith(ABSOLUTE):
                    found.add(PACKAGE + alias.name[len(ABSOLUTE) :])
    found.discard(here)
    return found


def graph() -> dict[str, set[str]]:
    return {module_name(p): imports_of(p) for p in sorted(HELPERS.rglob("*.py"))}


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One cycle as a path (first node repeated at the end), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt) :] + [nxt]
            if nxt not in state:
                cycle = visit(nxt)
                if cycle:
                    return cycle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state:
            cycle = visit(node)
            if cycle:
                return cycle
    return None


def test_helpers_has_no_import_cycle():
    edges = graph()
    assert len(edges) > 20 and "helpers.scoring.scorers.remote" in edges
    cycle = find_cycle(edges)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


# package -> the packages it must never import
FORBIDDEN = {"helpers.scoring": ("helpers.recall", "helpers.report"), "helpers.report": ("helpers.recall",)}


def in_package(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def wrong_way(edges: dict[str, set[str]]) -> list[str]:
    """Every import against the packages' direction, as "importer -> imported"."""
    return sorted(
        f"{module} -> {target}"
        for module, targets in edges.items()
        for package, forbidden in FORBIDDEN.items()
        if in_package(module, package)
        for target in targets
        if any(in_package(target, f) for f in forbidden)
    )


def test_scoring_and_report_never_import_the_packages_above_them():
    assert wrong_way(graph()) == []


def test_the_direction_checker_finds_an_import_the_wrong_way():
    edges = {
        "helpers.scoring.client": {"helpers.recall.pipeline", "helpers.settings"},
        "helpers.report.stats": {"helpers.scoring.cache"},
        "helpers.recall.pipeline": {"helpers.report.stats"},
    }
    assert wrong_way(edges) == ["helpers.scoring.client -> helpers.recall.pipeline"]
    assert wrong_way({"helpers.report.decision_log": {"helpers.recall"}}) == [
        "helpers.report.decision_log -> helpers.recall"
    ]


def test_the_checker_finds_a_cycle_and_follows_function_level_imports():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None
    edges = graph()
    # A lazy import inside a function counts: process_state.reset_state() imports stats inside it.
    assert "helpers.report.stats" in edges["helpers.process_state"]
    assert (
        "helpers.scoring.scorers" in edges["helpers.scoring.probing"]
        and "helpers.scoring.verdicts" in edges["helpers.scoring.scorers.remote"]
    )


@pytest.mark.parametrize("path", sorted(HELPERS.rglob("*.py")), ids=lambda p: module_name(p))
def test_no_helpers_module_imports_the_host_at_import_time(path):
    """Module-level statements only: the host is imported lazily, inside functions."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in tree.body:
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names = [node.module]
        for name in names:
            assert not any(
                name == p or name.startswith(p + ".") for p in HOST_PACKAGES if name != "helpers"
            ) or name.startswith(ABSOLUTE), f"{module_name(path)} imports {name} at import time"
