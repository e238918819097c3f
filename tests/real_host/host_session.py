"""What every check script shares: opening the Agent Zero copy as a fresh host, the
pass/fail record, the memories the store is filled with, and the plugin calls the scripts
repeat (install, save a config, one recall).

Usage by a script: ``session = host_session.open_host()`` first, then import Agent Zero's
modules: the stubs must be in place before the host's first import.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from pathlib import Path

import host_stubs

PLUGIN = "a0_reranker"
STORE = json.loads((Path(__file__).resolve().parent / "store.json").read_text(encoding="utf-8"))
QUESTION = STORE["question"]
RECALL_FILTER = "area == 'main' or area == 'fragments'"  # the host's own, _50_recall_memories.py

# Left over from an earlier run, these would change what the host recalls or how the plugin
# is configured: the memory store, its embeddings cache, the decision log, config and toggles.
_STATE = ("usr/memory/default", "tmp/memory/embeddings", "usr/reranker-decisions.jsonl")
_PLUGIN_STATE = ("config.json", ".toggle-0", ".toggle-1")


class Session:
    def __init__(self, root: Path, reports: Path, embedder: str):
        self.root = root
        self.reports = reports
        self.embedder = embedder
        self.results: dict = {"embedder": embedder, "checks": {}, "notes": []}
        self.failed: list[str] = []

    @property
    def plugin_dir(self) -> Path:
        return self.root / "usr" / "plugins" / PLUGIN

    def check(self, name: str, ok, detail=None) -> None:
        self.results["checks"][name] = {"ok": bool(ok), "detail": detail}
        if not ok:
            self.failed.append(name)
        print(("PASS " if ok else "FAIL ") + name + (f": {detail}" if detail is not None else ""), flush=True)

    def run(self, main, script: str) -> None:
        """Run a script's ``main`` coroutine; a crash is a failed check, not a lost report."""
        import asyncio
        import traceback

        try:
            asyncio.run(main())
        except Exception:
            self.check("driver ran to the end", False, traceback.format_exc())
        self.finish(script)

    def finish(self, script: str) -> None:
        """Write the script's report and exit non-zero when a check failed."""
        self.reports.mkdir(parents=True, exist_ok=True)
        out = self.reports / f"{Path(script).stem}.json"
        out.write_text(json.dumps(self.results, indent=2, default=str), encoding="utf-8")
        print(f"report: {out}; failed: {self.failed}", flush=True)
        sys.exit(1 if self.failed else 0)


def open_host() -> Session:
    """argv: AGENT_ZERO_COPY [REPORT_DIR]. Fresh state, the stubs, the host importable."""
    if len(sys.argv) < 2:
        sys.exit(f"usage: {sys.argv[0]} AGENT_ZERO_COPY [REPORT_DIR]")
    root = Path(sys.argv[1]).resolve()
    reports = Path(sys.argv[2]).resolve() if len(sys.argv) > 2 else root / "real-host-reports"
    # Agent Zero resolves its files from the working directory and imports from its root.
    os.chdir(root)
    sys.path.insert(0, str(root))
    # No network for LiteLLM's cost map or Agent Zero's update check: the checks must not wait on it.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("A0_SET_update_check_enabled", "false")
    for relative in _STATE:
        _remove(root / relative)
    for name in _PLUGIN_STATE:
        _remove(root / "usr" / "plugins" / PLUGIN / name)
    embedder = host_stubs.install()
    print(f"embedder: {embedder}", flush=True)
    return Session(root, reports, embedder)


def _remove(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path)
    elif path.exists():
        path.unlink()


def enable_and_install_plugin() -> None:
    """What the host's plugin installer does: the toggle file, then the plugin's install hook."""
    from helpers import plugins

    plugins.toggle_plugin(PLUGIN, True)
    plugins.call_plugin_hook(PLUGIN, "install")


def save_config(**overrides) -> None:
    """Save through the host's own path, which runs the plugin's save_plugin_config hook."""
    from helpers import plugins

    config = dict(plugins.get_default_plugin_config(PLUGIN))
    config.update(overrides)
    plugins.save_plugin_config(PLUGIN, "", "", config)


async def fill_store(db, *, solutions: bool = True, knowledge: bool = False) -> None:
    for text in STORE["main"]:
        await db.insert_text(text, {"area": "main"})
    if solutions:
        for text in STORE["solutions"]:
            await db.insert_text(text, {"area": "solutions"})
    if knowledge:
        # metadata as the host's knowledge import marks a file's chunks
        for text in STORE["knowledge"]:
            await db.insert_text(
                text,
                {
                    "area": "main",
                    "knowledge_source": True,
                    "source_file": "dashboards.md",
                    "source_path": "knowledge/custom/main/dashboards.md",
                    "file_type": "md",
                    "import_timestamp": None,
                },
            )


def plugin_api_handler(session: Session, name: str):
    """The plugin's API handler ``api/<name>.py``, loaded as the host's route loads it, ready to
    ``process(input, request)`` without a web server."""
    import threading

    from flask import Flask
    from helpers.api import ApiHandler
    from helpers.modules import load_classes_from_file

    handler_cls = load_classes_from_file(str(session.plugin_dir / "api" / f"{name}.py"), ApiHandler)[0]
    return handler_cls(Flask(name), threading.Lock())


def recall_class(agent, name: str = "RecallMemories"):
    """The class the host's extension loader yields, not one imported by path: the same module object."""
    from helpers import extension

    return next(c for c in extension._get_extension_classes("message_loop_prompts_after", agent) if c.__name__ == name)


def new_loop_data(agent):
    from agent import LoopData

    loop_data = LoopData(user_message=agent.last_user_message)
    loop_data.iteration = 0
    return loop_data


async def recall(agent, recall_cls, loop_data=None) -> tuple[dict, object, float]:
    """One recall as the host runs it: (its log item's kvps, the log item, seconds)."""
    log_item = agent.context.log.log(type="util", heading="Searching memories...")
    started = time.monotonic()
    await recall_cls(agent).search_memories(log_item=log_item, loop_data=loop_data or new_loop_data(agent))
    return log_item.output().get("kvps") or {}, log_item, time.monotonic() - started


def prompt_lines(kvps: dict, key: str = "memories") -> list[str]:
    return [line for line in kvps.get(key, "").split("\n\n") if line]


def short(doc) -> str:
    meta = doc.metadata
    tag = "K" if meta.get("knowledge_source") else meta.get("area", "?")[0].upper()
    return f"[{tag}:{meta.get('id')}] {doc.page_content[:60]!r}"
