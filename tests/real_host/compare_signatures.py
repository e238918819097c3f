"""The stand-in host the plugin's tests run against (tests/host/root) beside a real Agent Zero
tree, by source (ast): every module, class, function and signature the stand-in defines,
against the real file of the same path.

Two outputs. SAME/DIFF for each host function the plugin calls: a DIFF fails the run, since
the tests would then pass against a host that no longer exists. Then every other difference,
marked with whether the plugin's sources mention the name; those are for reading, not failing.

Run by run.sh: python compare_signatures.py AGENT_ZERO_COPY REPORT_DIR
"""

from __future__ import annotations

import ast
import json
import os
import re
import sys
from functools import cache
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
STAND_IN = REPO / "tests" / "host" / "root"
# the plugin's tests, benchmarks and this tool mention host names the plugin itself never calls
_NOT_PLUGIN_CODE = {"tests", "bench", "real_host", "node_modules", "__pycache__"}

_MEMORY = "plugins/_memory/helpers/memory.py"
_RECALL = "plugins/_memory/extensions/python/message_loop_prompts_after/_50_recall_memories.py"
_MODEL_CONFIG = "plugins/_model_config/helpers/model_config.py"
CALLED_BY_THE_PLUGIN = (
    [
        (_MEMORY, name)
        for name in (
            "Memory.search_similarity_threshold",
            "Memory.get",
            "Memory.get_by_subdir",
            "Memory._get_comparator",
            "Memory.Area",
            "Memory.delete_documents_by_query",
            "Memory._cosine_normalizer",
            "Memory.format_docs_plain",
            "MyFaiss.get_by_ids",
            "MyFaiss.get_all_docs",
            "get_agent_memory_subdir",
        )
    ]
    + [("helpers/log.py", name) for name in ("LogItem.update", "LogItem.stream", "LogItem.output", "Log.log")]
    + [
        ("helpers/plugins.py", name)
        for name in (
            "get_plugin_config",
            "save_plugin_config",
            "get_enabled_plugins",
            "toggle_plugin",
            "call_plugin_hook",
            "get_default_plugin_config",
            "find_plugin_assets",
            "determine_plugin_asset_path",
            "find_plugin_dir",
        )
    ]
    + [
        ("helpers/api.py", name)
        for name in (
            "ApiHandler.__init__",
            "ApiHandler.process",
            "ApiHandler.requires_auth",
            "ApiHandler.requires_csrf",
            "ApiHandler.handle_request",
        )
    ]
    + [
        ("helpers/tool.py", "Tool.__init__"),
        ("helpers/extension.py", "Extension.__init__"),
        ("agent.py", "Agent.call_utility_model"),
        ("agent.py", "Agent.read_prompt"),
        ("agent.py", "AgentContext.get"),
        ("agent.py", "AgentContext.get_agent"),
        ("helpers/dotenv.py", "get_dotenv_file_path"),
        ("helpers/projects.py", "get_context_project_name"),
        (_MODEL_CONFIG, "get_utility_model_config"),
        (_MODEL_CONFIG, "build_utility_model"),
        (_RECALL, "RecallMemories.search_memories"),
        (_RECALL, "SEARCH_TIMEOUT"),
        ("plugins/_memory/tools/memory_load.py", "MemoryLoad.execute"),
        # the Save's extension point (_functions/plugins/Plugins/_save_config/end) and its input
        ("api/plugins.py", "Plugins._save_config"),
        ("helpers/extension.py", "extensible"),
    ]
)


def signature(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> dict:
    args = fn.args
    positional = [a.arg for a in args.posonlyargs + args.args]
    defaults = {
        name: ast.unparse(d) for name, d in zip(positional[len(positional) - len(args.defaults) :], args.defaults)
    }
    defaults |= {k.arg: ast.unparse(d) for k, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None}
    return {
        "async": isinstance(fn, ast.AsyncFunctionDef),
        "params": positional,
        "kwonly": [a.arg for a in args.kwonlyargs],
        "vararg": args.vararg.arg if args.vararg else None,
        "kwarg": args.kwarg.arg if args.kwarg else None,
        "defaults": defaults,
    }


@cache
def definitions(path: Path) -> dict:
    """Dotted name -> its signature, class bases, module constant or class attribute."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except Exception as exc:
        return {"__error__": repr(exc)}
    found: dict = {}

    def walk(body, prefix):
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found[prefix + node.name] = signature(node)
            elif isinstance(node, ast.ClassDef):
                found[prefix + node.name] = {"bases": [ast.unparse(b) for b in node.bases]}
                walk(node.body, prefix + node.name + ".")
            elif isinstance(node, (ast.Assign, ast.AnnAssign)) and not prefix:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    if isinstance(target, ast.Name) and target.id.isupper():
                        found[target.id] = {"const": ast.unparse(node.value)[:120] if node.value else None}
            elif isinstance(node, ast.Assign) and prefix:
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        found[prefix + target.id] = {"attr": ast.unparse(node.value)[:120]}

    walk(tree.body, "")
    return found


@cache
def plugin_source() -> str:
    texts = []
    for folder, subfolders, files in os.walk(REPO):
        # pruned, not filtered: virtualenvs and caches (hidden folders) hold thousands of files
        subfolders[:] = [d for d in subfolders if d not in _NOT_PLUGIN_CODE and not d.startswith(".")]
        texts += [Path(folder, f).read_text(encoding="utf-8", errors="replace") for f in files if f.endswith(".py")]
    return "\n".join(texts)


def plugin_mentions(name: str) -> bool:
    leaf = name.split(".")[-1]
    if len(leaf) < 4 and leaf not in ("get", "log"):
        return False  # too short to grep for meaningfully
    return re.search(rf"\b{re.escape(leaf)}\b", plugin_source()) is not None


def differences(real: Path) -> list[dict]:
    found = []
    for stand_in_file in sorted(STAND_IN.rglob("*.py")):
        if "__pycache__" in stand_in_file.parts:
            continue
        relative = stand_in_file.relative_to(STAND_IN).as_posix()
        real_file = real / relative
        if not real_file.exists():
            found.append({"file": relative, "kind": "module missing in real host"})
            continue
        real_defs = definitions(real_file)
        unparsed = definitions(stand_in_file).get("__error__") or real_defs.get("__error__")
        if unparsed:
            # e.g. the host's newer syntax read by an older Python: run with the host's Python
            found.append({"file": relative, "kind": "did not parse", "error": unparsed})
            continue
        for name, ours in definitions(stand_in_file).items():
            theirs = real_defs.get(name)
            if theirs is None:
                kind = "defined in stand-in, absent in real"
                found.append({"file": relative, "name": name, "kind": kind, "plugin_mentions": plugin_mentions(name)})
            elif ours.keys() != theirs.keys() or ours == theirs:
                continue
            elif "params" in ours:
                changed = {k: (ours[k], theirs[k]) for k in ours if ours[k] != theirs[k]}
                found.append(
                    {
                        "file": relative,
                        "name": name,
                        "kind": "signature differs",
                        "stand_in_vs_real": changed,
                        "plugin_mentions": plugin_mentions(name),
                    }
                )
            else:
                (key,) = ours.keys()
                kind = {"const": "constant differs", "bases": "bases differ", "attr": "class attribute differs"}[key]
                found.append(
                    {"file": relative, "name": name, "kind": kind, "stand_in_vs_real": (ours[key], theirs[key])}
                )
    return found


def main() -> int:
    if len(sys.argv) < 2:
        sys.exit(f"usage: {sys.argv[0]} AGENT_ZERO_COPY [REPORT_DIR]")
    real = Path(sys.argv[1]).resolve()
    reports = Path(sys.argv[2]).resolve() if len(sys.argv) > 2 else real / "real-host-reports"
    differing = 0
    for relative, name in CALLED_BY_THE_PLUGIN:
        ours = definitions(STAND_IN / relative).get(name) if (STAND_IN / relative).exists() else "no stand-in file"
        theirs = definitions(real / relative).get(name) if (real / relative).exists() else "no real file"
        if ours == theirs:
            print(f"SAME {relative}:{name}")
        else:
            differing += 1
            print(f"DIFF {relative}:{name}  stand-in={ours}  real={theirs}")
    elsewhere = differences(real)
    reports.mkdir(parents=True, exist_ok=True)
    out = reports / "signature_diff.json"
    out.write_text(json.dumps(elsewhere, indent=1), encoding="utf-8")
    for d in elsewhere:
        if d["kind"] in ("signature differs", "module missing in real host", "did not parse") or d.get(
            "plugin_mentions"
        ):
            print(json.dumps(d))
    print(f"called by the plugin: {len(CALLED_BY_THE_PLUGIN) - differing} same, {differing} differ")
    unparsed = sum(1 for d in elsewhere if d["kind"] == "did not parse")
    print(f"{len(elsewhere)} differences in all (for reading, not failing); full list in {out}")
    if unparsed:
        print(f"{unparsed} files did not parse: run with the Python Agent Zero runs on")
    return 1 if differing or unparsed else 0


if __name__ == "__main__":
    sys.exit(main())
