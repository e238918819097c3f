"""Where the plugin's user-facing sentences are written: a scan of its runtime code
(helpers/, api/, tools/, extensions/, hooks.py) for string literals that read as a sentence
(four words or more, with a space; an f-string counts once, its literal parts joined),
leaving out docstrings, log calls (an operator's, not the user's), and strings that are
code: regular expressions, type annotations, strftime formats. Used by
tests/test_sentences_in_vocabulary.py."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUNTIME = ("helpers", "api", "tools", "extensions")
VOCABULARY = Path("helpers/vocabulary")  # the package: every module of it is the vocabulary
_LOG_METHODS = {"debug", "info", "warning", "error", "exception", "critical"}
_WORD = re.compile(r"[A-Za-z']+")
_CODE = re.compile(r"\\|\(\?|^[\w.]+\[.*\]$|%[A-Za-z]")


def runtime_files() -> list[Path]:
    files = [ROOT / "hooks.py"] + [p for top in RUNTIME for p in sorted((ROOT / top).rglob("*.py"))]
    return [p for p in files if p.is_file() and "__pycache__" not in p.parts]


def sentences(path: Path) -> list[tuple[int, str]]:
    """(line, text) of every sentence literal of one module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body:
            first = body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                skipped.add(id(first.value))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _LOG_METHODS:
            skipped.update(id(inner) for inner in ast.walk(node))
        if isinstance(node, (ast.AnnAssign, ast.arg)) and getattr(node, "annotation", None) is not None:
            skipped.update(id(inner) for inner in ast.walk(node.annotation))
        if isinstance(node, ast.JoinedStr):
            skipped.update(id(part) for part in node.values)
    found = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.JoinedStr):
            text = "{}".join(p.value for p in node.values if isinstance(p, ast.Constant) and isinstance(p.value, str))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
        else:
            continue
        if " " in text.strip() and len(_WORD.findall(text)) >= 4 and not _CODE.search(text):
            found.append((node.lineno, text))
    return sorted(found)


def outside_vocabulary() -> dict[str, list[tuple[int, str]]]:
    """Every runtime module outside the vocabulary, with its sentences (none: left out)."""
    out = {}
    for path in runtime_files():
        relative = path.relative_to(ROOT)
        if VOCABULARY in relative.parents:
            continue
        found = sentences(path)
        if found:
            out[str(relative)] = found
    return out
