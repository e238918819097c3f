"""A temporary Agent Zero root for tests, with the plugin mounted where users install it.

`host_root(tmp_path)` copies tests/host/root (a stand-in Agent Zero tree with the real
module paths: helpers/, agent.py, models.py, plugins/_memory/...) into tmp_path, mounts
the repository as usr/plugins/a0_reranker, and activates it:

- the root goes first on sys.path, the repository root (and '') is taken OFF sys.path,
  and any already-imported `helpers`/`plugins`/`usr`/`agent`/`models`/... modules are
  purged, so `import helpers.plugins` is the host's and the plugin's own top-level
  `helpers/` is reachable only as `usr.plugins.a0_reranker.helpers`;
- the working directory becomes the root; A0_SET_* variables are cleared;
- models.get_embedding_model() returns `Host.embeddings` (HashEmbeddings(256) unless
  replaced).

`Host.close()` restores sys.path, the working directory and os.environ, purges the
host's modules (usr, plugins, helpers, agent, models, ...) so the next test starts clean,
and puts back the modules of those names that existed before activation (unit tests that
import the plugin's helpers as top-level `helpers.*` keep their module objects). pytest's default import mode works:
the repository root it (or `python -m`) puts on sys.path is removed only while a host is
active, after test modules and `tests.host` are already imported.

The mount is a real directory whose entries are symlinks to the repository's entries:
Agent Zero writes a plugin's global config.json and .toggle-* files INSIDE the plugin
folder, and a symlinked folder would put them into the working tree.
"""

from __future__ import annotations

import _imp
import asyncio
import hashlib
import importlib
import importlib.machinery
import json
import marshal
import os
import shutil
import sys
from pathlib import Path
from typing import Any, Callable, Iterable

from tests.host.embeddings import HashEmbeddings

PLUGIN_NAME = "a0_reranker"
REPO_ROOT = Path(__file__).resolve().parents[2]
TEMPLATE_ROOT = Path(__file__).resolve().parent / "root"

# top-level module names that belong to the host while it is active
HOST_MODULES = ("usr", "plugins", "helpers", "agent", "models", "initialize", "tools")

# repository entries not mounted: VCS/venv/caches, this test suite, and per-install state
# the host writes into the plugin folder (a stray copy in the repo must not leak in).
# test_uninstall copies the repository without them too: the real-server venvs are
# gigabytes, and Hypothesis's database changes under a copy while another xdist worker runs;
# .cache holds the real cross-encoder and its wheel (200 MB, tests/real/reranker_model.py)
MOUNT_EXCLUDE = frozenset(
    {
        ".git",
        ".venv",
        "venv",
        ".venv-infinity",
        ".venv-llama",
        ".cache",
        "__pycache__",
        ".pytest_cache",
        ".mypy_cache",
        ".ruff_cache",
        ".hypothesis",
        "tests",
        "config.json",
        ".toggle-0",
        ".toggle-1",
        "execute_record.json",
    }
)

RECALL_POINT = "message_loop_prompts_after"


# Every host is a fresh copy of the stand-in tree with the plugin mounted in it, so none of
# its ~60 modules has bytecode Python may reuse (a new path, no __pycache__; and none at all
# under PYTHONDONTWRITEBYTECODE): each host compiled them all again, about a quarter of a
# host test's time. While a host is active, a module under its root whose source was
# compiled before in this process is loaded from that compilation (marshalled, so each
# host gets its own code objects, named after its own files, as a .pyc load does); a
# changed source compiles anew.
_COMPILED: dict[tuple[bytes, int], bytes] = {}
_active_root: str | None = None
_compile = importlib.machinery.SourceFileLoader.source_to_code


def _source_to_code(self, data, path, *, _optimize=-1):
    if _active_root is None or not isinstance(path, str) or not path.startswith(_active_root):
        return _compile(self, data, path, _optimize=_optimize)
    key = (hashlib.blake2b(data).digest(), _optimize)
    compiled = _COMPILED.get(key)
    if compiled is None:
        code = _compile(self, data, path, _optimize=_optimize)
        _COMPILED[key] = marshal.dumps(code)
        return code
    code = marshal.loads(compiled)
    _imp._fix_co_filename(code, path)
    return code


importlib.machinery.SourceFileLoader.source_to_code = _source_to_code


def _purge_host_modules() -> dict[str, Any]:
    """Remove every module under a HOST_MODULES top-level name; return what was removed."""
    removed = {name: sys.modules.pop(name) for name in list(sys.modules) if name.split(".", 1)[0] in HOST_MODULES}
    importlib.invalidate_caches()
    return removed


def _same_dir(entry: str, target: Path) -> bool:
    try:
        return Path(os.path.realpath(entry or os.getcwd())) == target
    except OSError:
        return False


class Host:
    """A temporary Agent Zero root. Use `host_root(tmp_path)` or the `host` fixture."""

    root: Path
    plugin_dir: Path  # root/usr/plugins/a0_reranker

    def __init__(self, root: Path, plugin_name: str = PLUGIN_NAME, repo: Path = REPO_ROOT):
        self.root = Path(root)
        self.repo = Path(repo).resolve()
        self.plugin_name = plugin_name
        self.plugin_dir = self.root / "usr" / "plugins" / plugin_name
        self.embeddings: Any = HashEmbeddings(256)
        self._saved: dict[str, Any] | None = None

    # --- lifecycle -----------------------------------------------------------------
    def activate(self) -> "Host":
        if self._saved is not None:
            return self
        global _active_root
        self._saved = {"path": list(sys.path), "cwd": os.getcwd(), "environ": dict(os.environ)}
        _active_root = os.path.join(str(self.root), "")
        sys.path[:] = [str(self.root)] + [p for p in sys.path if not _same_dir(p, self.repo)]
        # modules already imported under these names (e.g. the plugin's helpers imported
        # top-level by unit tests) are set aside and put back by close()
        self._saved["modules"] = _purge_host_modules()
        os.chdir(self.root)
        for key in [k for k in os.environ if k.upper().startswith("A0_SET_")]:
            del os.environ[key]
        models = importlib.import_module("models")
        models.embedding_factory = lambda provider, name, **kwargs: self.embeddings
        helpers_path = list(importlib.import_module("helpers").__path__)
        if helpers_path != [str(self.root / "helpers")]:
            raise RuntimeError(f"host 'helpers' resolved to {helpers_path}, not the stand-in root")
        return self

    def close(self) -> None:
        if self._saved is None:
            return
        global _active_root
        saved, self._saved = self._saved, None
        _active_root = None
        _purge_host_modules()
        sys.modules.update(saved["modules"])
        os.chdir(saved["cwd"])
        sys.path[:] = saved["path"]
        os.environ.clear()
        os.environ.update(saved["environ"])

    def __enter__(self) -> "Host":
        return self.activate()

    def __exit__(self, *exc) -> None:
        self.close()

    @staticmethod
    def run(coro):
        """Run a coroutine to completion (no pytest-asyncio in this venv)."""
        return asyncio.run(coro)

    # --- agents, memory --------------------------------------------------------------
    def agent(
        self,
        profile: str = "agent0",
        project: str | None = None,
        utility_model: Callable[[str, str], Any] | None = None,
    ):
        """A fresh AgentContext's agent0 with `config.profile`, optionally in a project
        (context data "project", folder usr/projects/<p>/.a0proj created). A
        utility_model (system, message) -> str/awaitable answers call_utility_model."""
        import initialize
        from agent import Agent, AgentContext

        config = initialize.initialize_agent()
        config.profile = profile
        data = {}
        if project:
            (self.root / "usr" / "projects" / project / ".a0proj").mkdir(parents=True, exist_ok=True)
            data["project"] = project
        agent = AgentContext(config=config, data=data).agent0
        if utility_model is not None:
            agent.set_data(Agent.DATA_NAME_UTILITY_MODEL, utility_model)
        return agent

    async def memory(self, agent=None, subdir: str = "default", embeddings=None, in_memory: bool = True):
        """A Memory over a fresh empty FAISS DB, registered in Memory.index so
        Memory.get(agent) / get_by_subdir(subdir) return wrappers of it. With an agent the
        subdir is the agent's (get_agent_memory_subdir). in_memory=False builds it with
        Memory.initialize (saved under root/usr/memory, reloadable after a purge; the
        embeddings then become Host.embeddings)."""
        from plugins._memory.helpers.memory import Memory, get_agent_memory_subdir

        if agent is not None:
            subdir = get_agent_memory_subdir(agent)
        if in_memory:
            model = embeddings or self.embeddings
            db = Memory.create_db(model, f"host_{type(model).__name__}", in_memory=True)
            db._a0_host_in_memory = True  # Memory._save_db_file skips it
        else:
            if embeddings is not None:
                self.embeddings = embeddings
            db, _created = Memory.initialize(None, Memory._get_embedding_config(agent), subdir, in_memory=True)
        Memory.index[subdir] = db
        return Memory(db, memory_subdir=subdir)

    @staticmethod
    async def insert(memory, texts: Iterable[str], area: str = "main", **metadata) -> list[str]:
        """insert_documents() one Document per text with metadata area=<area> (+ extra keys)."""
        from langchain_core.documents import Document

        docs = [Document(page_content=t, metadata={"area": area, **metadata}) for t in texts]
        return await memory.insert_documents(docs)

    # --- plugin modules, config, toggles ---------------------------------------------
    def import_plugin(self, dotted: str = ""):
        """import usr.plugins.<plugin>[.<dotted>] - the name Agent Zero's loader uses."""
        name = f"usr.plugins.{self.plugin_name}" + (f".{dotted}" if dotted else "")
        return importlib.import_module(name)

    def mount_plugin(
        self, name: str, files: dict[str, str] | None = None, *, builtin: bool = False, plugin_yaml: str | None = None
    ) -> Path:
        """Create usr/plugins/<name> (or plugins/<name> when builtin) with plugin.yaml and
        `files` ({relative path: text}); clears the plugin caches like a host change does."""
        base = self.root / ("plugins" if builtin else "usr/plugins") / name
        base.mkdir(parents=True, exist_ok=True)
        (base / "plugin.yaml").write_text(plugin_yaml or f"name: {name}\ntitle: {name}\nversion: 0.0.1\n")
        for rel, text in (files or {}).items():
            target = base / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
        self.plugin_change([name], python_change=False)
        return base

    def config_path(self, *, project: str = "", profile: str = "", plugin: str | None = None) -> Path:
        from helpers import plugins

        return Path(
            plugins.determine_plugin_asset_path(plugin or self.plugin_name, project, profile, plugins.CONFIG_FILE_NAME)
        )

    def set_config(
        self, mapping: dict | None, *, project: str = "", profile: str = "", plugin: str | None = None
    ) -> Path:
        """Write (or with None delete) the scope's config.json directly, bypassing hooks."""
        path = self.config_path(project=project, profile=profile, plugin=plugin)
        if mapping is None:
            path.unlink(missing_ok=True)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(mapping))
        return path

    def save_config(self, settings: dict, *, project: str = "", profile: str = "", plugin: str | None = None):
        """plugins.save_plugin_config: what the settings modal's Save does (hook included)."""
        from helpers import plugins

        plugins.save_plugin_config(plugin or self.plugin_name, project, profile, settings)
        return self.config_path(project=project, profile=profile, plugin=plugin)

    def get_config(
        self, agent=None, *, project: str | None = None, profile: str | None = None, plugin: str | None = None
    ):
        from helpers import plugins

        return plugins.get_plugin_config(
            plugin or self.plugin_name, agent=agent, project_name=project, agent_profile=profile
        )

    def toggle(
        self,
        enabled: bool,
        *,
        project: str = "",
        profile: str = "",
        plugin: str | None = None,
        clear_overrides: bool = False,
    ) -> None:
        """plugins.toggle_plugin: writes .toggle-1/.toggle-0 at the scope, clears caches."""
        from helpers import plugins

        plugins.toggle_plugin(
            plugin or self.plugin_name,
            enabled,
            project_name=project,
            agent_profile=profile,
            clear_overrides=clear_overrides,
        )

    def is_enabled(self, agent=None, plugin: str | None = None) -> bool:
        from helpers import plugins

        return (plugin or self.plugin_name) in plugins.get_enabled_plugins(agent)

    def purge(self, namespace: str, clear_cache: bool = True) -> list[str]:
        """The host's module purge ("usr.plugins" or "plugins"). After a plugin change the
        host clears its caches first (extension/hook/API modules get re-executed), so this
        does too unless clear_cache=False."""
        from helpers import modules, plugins

        if clear_cache:
            plugins.clear_plugin_cache()
        return modules.purge_namespace(namespace)

    def plugin_change(self, names: list[str] | None = None, python_change: bool = True) -> None:
        """plugins.after_plugin_change: what install/delete/the watchdog trigger."""
        from helpers import plugins

        plugins.after_plugin_change(names, python_change=python_change)

    def call_hook(self, hook_name: str, *args, plugin: str | None = None, default: Any = None, **kwargs):
        from helpers import plugins

        return plugins.call_plugin_hook(plugin or self.plugin_name, hook_name, default, *args, **kwargs)

    @staticmethod
    def setenv(name: str, value: str | None) -> None:
        """Set/unset a process env var for this host's lifetime (restored by close())."""
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value

    # --- driving the host ------------------------------------------------------------
    def init_a0(self) -> dict:
        """Fire run_ui.init_a0's implicit points (_functions/__main__/init_a0/start, end)
        the way @extensible does at process start: sync, agent=None."""
        from helpers import extension

        data = {"args": (), "kwargs": {}, "result": None, "exception": None}
        extension.call_extensions_sync("_functions/__main__/init_a0/start", agent=None, data=data)
        extension.call_extensions_sync("_functions/__main__/init_a0/end", agent=None, data=data)
        return data

    async def recall(
        self,
        agent,
        user_message: str,
        history: "str | list[tuple[str, str]]" = "",
        *,
        iteration: int = 0,
        history_includes_user: bool = True,
    ) -> dict:
        """One message-loop recall: sets the agent's history to `history` (rendered text, or
        a conversation of (role, text) turns that converse() adds the host's way)
        followed - as in the host, where the user's message is already in the history - by
        the user message; runs every message_loop_prompts_after extension (plugins' too,
        e.g. _45_*), then awaits a still-running recall task (delayed mode).

        Returns {"memories": [Document], "solutions": [Document], "extras": dict,
        "error": exception of a task that failed after _91 stopped waiting, or None}.
        An exception awaited by _91_recall_wait propagates, as it ends the host's turn."""
        from agent import LoopData, UserMessage
        from helpers import extension
        from helpers.history import History, Message

        recall_module = "plugins._memory.extensions.python.message_loop_prompts_after._50_recall_memories"
        rm = importlib.import_module(recall_module)

        agent.history = History(agent)
        if isinstance(history, str):
            agent.history.add_text(history)
        else:
            self.converse(agent, history)
        if history_includes_user:
            message = agent.hist_add_user_message(UserMessage(message=user_message))
        else:
            message = Message(ai=False, content={"user_message": user_message})
        loop_data = LoopData(user_message=message)
        loop_data.iteration = iteration
        agent.loop_data = loop_data
        agent.set_data(rm.DATA_NAME_HOST_RESULT, None)

        await extension.call_extensions_async(RECALL_POINT, agent, loop_data=loop_data)

        error = None
        task = agent.get_data(rm.DATA_NAME_TASK)
        if task is not None:
            if not task.done():
                await asyncio.wait({task})  # delayed recall: results arrive after the turn
            if not task.cancelled() and task.exception() is not None:
                error = task.exception()
        result = agent.get_data(rm.DATA_NAME_HOST_RESULT) or {}
        return {
            "memories": list(result.get("memories", [])),
            "solutions": list(result.get("solutions", [])),
            "extras": dict(loop_data.extras_persistent),
            "error": error,
        }

    @staticmethod
    def converse(agent, turns) -> None:
        """Add a conversation to the agent's history as the host does: the greeting first
        (extensions/python/agent_init/_10_initial_message.py adds fw.initial_message.md as an
        AI response at a chat's start), then each ("user", text) turn through
        hist_add_user_message and each ("ai", text) turn through hist_add_ai_response — the
        text of an "ai" turn is the model's raw output (a JSON tool call, usually); a
        ("tool", name, result) turn goes through hist_add_tool_result."""
        from agent import LoopData, UserMessage

        agent.loop_data = LoopData(user_message=None)
        agent.hist_add_ai_response(agent.read_prompt("fw.initial_message.md"))
        for turn in turns:
            role = turn[0]
            if role == "user":
                agent.hist_add_user_message(UserMessage(message=turn[1]))
            elif role == "ai":
                agent.hist_add_ai_response(turn[1])
            elif role == "tool":
                agent.hist_add_tool_result(turn[1], turn[2])
            else:
                raise ValueError(f"unknown turn role {role!r}")

    async def memory_load(self, agent, query, limit=10, threshold=0.7, filter=""):
        """The memory_load tool as process_tools runs it (get_tool from the enabled
        plugins' tools/, before_execution, tool_execute_before extensions, execute, ...).
        Arguments are passed as given (strings stay strings). Returns helpers.tool.Response."""
        from helpers import extension

        args = {"query": query, "limit": limit, "threshold": threshold, "filter": filter}
        tool = agent.get_tool(name="memory_load", method=None, args=args, message="", loop_data=agent.loop_data)
        await tool.before_execution(**args)
        await extension.call_extensions_async("tool_execute_before", agent, tool_args=args, tool_name="memory_load")
        response = await tool.execute(**args)
        await extension.call_extensions_async("tool_execute_after", agent, response=response, tool_name="memory_load")
        await tool.after_execution(response)
        return response

    async def find_similar(self, agent, new_memory: str, area: str = "main", **config_overrides):
        """MemoryConsolidator._find_similar_memories (consolidation's discovery step)."""
        from plugins._memory.helpers.memory_consolidation import create_memory_consolidator

        consolidator = create_memory_consolidator(agent, **config_overrides)
        return await consolidator._find_similar_memories(new_memory, area)

    async def call_api(
        self,
        path: str,
        input: dict | None = None,
        *,
        method: str = "POST",
        remote_addr: str = "127.0.0.1",
        headers: dict | None = None,
    ):
        """POST /api/<path> as the host routes it (api/<path>.py, then
        plugins/<plugin>/<handler>). Returns a Response (status_code, get_json())."""
        from helpers.api import dispatch, make_request

        request = make_request(
            input if input is not None else {}, method=method, remote_addr=remote_addr, headers=headers
        )
        return await dispatch(path, request)

    async def dashboard_search(
        self, search: str = "", *, subdir: str = "default", area: str = "", limit: int = 100, threshold: float = 0.6
    ) -> dict:
        """The memory dashboard's search (MemoryDashboard._search_memories, no agent)."""
        response = await self.call_api(
            "plugins/_memory/memory_dashboard",
            {
                "action": "search",
                "memory_subdir": subdir,
                "search": search,
                "area": area,
                "limit": limit,
                "threshold": threshold,
            },
        )
        return response.get_json()

    def skills(self, agent=None):
        from helpers import skills

        return skills.list_skills(agent)


def _mount(repo: Path, target: Path) -> None:
    target.mkdir(parents=True, exist_ok=True)
    for entry in sorted(repo.iterdir()):
        if entry.name in MOUNT_EXCLUDE or entry.name.endswith((".pyc", ".egg-info")):
            continue
        (target / entry.name).symlink_to(entry, target_is_directory=entry.is_dir())


def host_root(tmp_path, *, repo: Path = REPO_ROOT, plugin_name: str = PLUGIN_NAME, mount: bool = True) -> Host:
    """Create and activate a Host under tmp_path/a0 (call close() when done)."""
    root = Path(tmp_path) / "a0"
    shutil.copytree(TEMPLATE_ROOT, root, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for folder in ("usr/plugins", "usr/memory", "tmp"):
        (root / folder).mkdir(parents=True, exist_ok=True)
    if mount:
        _mount(Path(repo).resolve(), root / "usr" / "plugins" / plugin_name)
    return Host(root, plugin_name=plugin_name, repo=repo).activate()
