"""Self-checks of the stand-in Agent Zero host (tests/host/): the behaviours the
a0_reranker plugin relies on, pinned against what the real host does.

The a0_reranker plugin itself is switched off (toggle) in tests that run extension points,
so these checks do not depend on the plugin's own state."""

import asyncio
import inspect
import json
import os
import sys
from pathlib import Path

import pytest

from tests.host.harness import REPO_ROOT, Host

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

run = asyncio.run


async def _filled(host: Host, n: int = 60, area: str = "main"):
    memory = await host.memory()
    await host.insert(memory, [f"memory {i} about gardening tomatoes" for i in range(n)], area=area)
    return memory


# --- the host's module layout ---------------------------------------------------------


def test_host_modules_win_over_the_plugin_helpers(host):
    import helpers
    import helpers.plugins

    assert list(helpers.__path__) == [str(host.root / "helpers")]
    assert Path(helpers.plugins.__file__).parent == host.root / "helpers"
    assert all(Path(os.path.realpath(p or os.getcwd())) != REPO_ROOT for p in sys.path)
    assert Path(os.getcwd()) == host.root

    plugin_helpers = host.import_plugin("helpers")
    assert plugin_helpers.__name__ == "usr.plugins.a0_reranker.helpers"
    assert Path(plugin_helpers.__file__).parent == host.plugin_dir / "helpers"
    assert host.plugin_dir.is_dir() and not host.plugin_dir.is_symlink()
    assert (host.plugin_dir / "default_config.yaml").resolve() == REPO_ROOT / "default_config.yaml"


def test_close_restores_the_process(tmp_path):
    from tests.host.harness import host_root

    before_path, before_cwd = list(sys.path), os.getcwd()
    h = host_root(tmp_path)
    h.setenv("A0_HOST_SELFCHECK", "1")
    h.close()
    assert sys.path == before_path and os.getcwd() == before_cwd
    assert "A0_HOST_SELFCHECK" not in os.environ
    assert not any(name.split(".")[0] in ("plugins", "usr", "agent", "models") for name in sys.modules)
    stray = [m for n, m in sys.modules.items() if n.split(".")[0] == "helpers" and getattr(m, "__file__", None)]
    assert all(str(tmp_path) not in m.__file__ for m in stray)  # only pre-existing helpers.* are back


def test_dummy_plugin_imports_as_usr_plugins(host):
    host.mount_plugin(
        "dummy",
        {
            "helpers/__init__.py": "",
            "helpers/base.py": "VALUE = 41\n",
            "helpers/mod.py": (
                "from .base import VALUE\nfrom helpers import files\nANSWER = VALUE + 1\nROOT = files.get_base_dir()\n"
            ),
        },
    )
    import importlib

    mod = importlib.import_module("usr.plugins.dummy.helpers.mod")
    assert mod.ANSWER == 42 and mod.ROOT == str(host.root)
    from helpers import plugins

    assert plugins.find_plugin_dir("dummy") == str(host.root / "usr/plugins/dummy")
    assert plugins.get_plugins_list() == ["_memory", "_model_config", "a0_reranker", "dummy"]


# --- Memory on the real LangChain FAISS store -------------------------------------------


def test_filtered_search_sees_only_20_candidates(host):
    async def go():
        memory = await _filled(host)
        plain = await memory.search_similarity_threshold("gardening tomatoes", limit=40, threshold=0.0)
        filtered = await memory.search_similarity_threshold(
            "gardening tomatoes", limit=40, threshold=0.0, filter="area == 'main'"
        )
        comparator = memory._get_comparator("area == 'main'")
        widened = await memory.db.asearch(
            "gardening tomatoes",
            search_type="similarity_score_threshold",
            k=40,
            score_threshold=0.0,
            filter=comparator,
            fetch_k=200,
        )
        return plain, filtered, widened

    plain, filtered, widened = run(go())
    assert (len(plain), len(filtered), len(widened)) == (40, 20, 40)


def test_search_returns_the_docstores_own_documents(host):
    async def go():
        memory = await _filled(host, 10)
        docs = await memory.search_similarity_threshold("gardening", limit=5, threshold=0.0, filter="area == 'main'")
        return memory, docs

    memory, docs = run(go())
    store = memory.db.get_all_docs()
    assert isinstance(docs, list) and 0 < len(docs) <= 5
    for doc in docs:
        assert doc is store[doc.metadata["id"]]
        assert len(doc.metadata["id"]) == 10 and doc.metadata["area"] == "main"
        assert len(doc.metadata["timestamp"]) == 19  # "%Y-%m-%d %H:%M:%S"
    docs[0].metadata["touched"] = True
    assert memory.get_document_by_id(docs[0].metadata["id"]).metadata["touched"] is True


def test_threshold_uses_the_cosine_normalizer(host):
    async def go():
        memory = await host.memory()
        await host.insert(memory, ["red apples", "blue whales"])
        return (
            await memory.search_similarity_threshold("red apples", 10, 0.99),
            await memory.search_similarity_threshold("red apples", 10, 0.5),
        )

    exact, loose = run(go())
    assert [d.page_content for d in exact] == ["red apples"]
    assert len(loose) == 2  # unrelated text has inner product 0 -> relevance 0.5


def test_delete_by_query_deletes_what_search_returns(host):
    async def go():
        memory = await _filled(host)
        await host.insert(memory, ["unrelated note about taxes"], area="solutions")
        expected = await memory.search_similarity_threshold(
            "gardening tomatoes", limit=100, threshold=0.0, filter="area == 'main'"
        )
        removed = await memory.delete_documents_by_query("gardening tomatoes", 0.0, "area == 'main'")
        return memory, expected, removed

    memory, expected, removed = run(go())
    assert [d.metadata["id"] for d in removed] == [d.metadata["id"] for d in expected]
    assert len(removed) == 20  # one filtered pass: fewer than 100 -> stop
    remaining = memory.db.get_all_docs()
    assert len(remaining) == 61 - 20
    assert not any(d.metadata["id"] in remaining for d in removed)


def test_consolidation_writes_rank_similarity_into_the_docstore(host):
    agent = host.agent()

    async def go():
        memory = await host.memory(agent)
        await host.insert(memory, [f"the user likes tomato soup variant {i}" for i in range(6)])
        return memory, await host.find_similar(agent, "the user likes tomato soup", "main")

    memory, similar = run(go())
    store = memory.db.get_all_docs()
    scores = [d.metadata["_consolidation_similarity"] for d in similar]
    assert len(similar) == 5  # max_llm_context_memories
    assert scores[0] == 1.0 and all(0.9 <= s <= 1.0 for s in scores) and scores == sorted(scores, reverse=True)
    assert all(store[d.metadata["id"]] is d for d in similar)
    assert sum("_consolidation_similarity" in d.metadata for d in store.values()) == 6


# --- the prompt-feeding callers -----------------------------------------------------------


def test_recall_returns_at_most_five_memories_and_three_solutions(host):
    host.toggle(False)  # keep the plugin's own extensions out of the host self-check
    agent = host.agent()

    async def go():
        memory = await host.memory(agent)
        await host.insert(memory, [f"gardening tomatoes tip {i}" for i in range(12)], area="main")
        await host.insert(memory, [f"gardening tomatoes fragment {i}" for i in range(4)], area="fragments")
        await host.insert(memory, [f"gardening tomatoes solution {i}" for i in range(6)], area="solutions")
        return await host.recall(agent, "gardening tomatoes", "user: gardening tomatoes\nai: sure")

    result = run(go())
    assert result["error"] is None
    assert 0 < len(result["memories"]) <= 5 and 0 < len(result["solutions"]) <= 3
    assert {d.metadata["area"] for d in result["memories"]} <= {"main", "fragments"}
    assert {d.metadata["area"] for d in result["solutions"]} == {"solutions"}
    assert "gardening tomatoes" in result["extras"]["memories"]


def test_callers_and_the_recall_frame_locals(host):
    """What a class-level wrap of search_similarity_threshold sees from each caller."""
    host.toggle(False)
    agent = host.agent()
    from plugins._memory.helpers.memory import Memory

    original = Memory.search_similarity_threshold
    seen = []

    async def spy(self, query, limit, threshold, filter=""):
        caller = sys._getframe(1)
        seen.append((caller.f_code.co_name, Path(caller.f_code.co_filename).name, dict(caller.f_locals)))
        return await original(self, query, limit, threshold, filter)

    Memory.search_similarity_threshold = spy
    try:

        async def go():
            memory = await host.memory(agent)
            await host.insert(memory, ["gardening tomatoes", "tomato solution"], area="main")
            await host.recall(agent, 'tomatoes "now"', "user: earlier\nai: reply")
            await host.memory_load(agent, "tomatoes", limit=3, threshold=0.5)
            await host.find_similar(agent, "gardening tomatoes")
            await host.dashboard_search("tomatoes")
            await memory.delete_documents_by_query("nothing alike zzz", 0.99)

        run(go())
    finally:
        Memory.search_similarity_threshold = original

    callers = [(name, file) for name, file, _ in seen]
    assert callers == [
        ("search_memories", "_50_recall_memories.py"),
        ("search_memories", "_50_recall_memories.py"),
        ("execute", "memory_load.py"),
        ("_find_similar_memories", "memory_consolidation.py"),
        ("_find_similar_memories", "memory_consolidation.py"),
        ("_search_memories", "memory_dashboard.py"),
        ("delete_documents_by_query", "memory.py"),
    ]
    recall_locals = seen[0][2]
    user_instruction, history = recall_locals["user_instruction"], recall_locals["history"]
    assert user_instruction == 'user: {"user_message": "tomatoes \\"now\\""}'
    assert history == "user: earlier\nai: reply\n" + user_instruction  # the message is in the history too
    assert recall_locals["query"] == user_instruction + "\n\n" + history
    assert (
        recall_locals["self"].agent is agent
        and recall_locals["loop_data"].user_message.output_text() == user_instruction
    )
    assert seen[2][2]["self"].agent is agent


def test_memory_load_passes_llm_strings_through(host):
    host.toggle(False)
    agent = host.agent()

    async def go():
        memory = await host.memory(agent)
        await host.insert(memory, ["gardening tomatoes"])
        ok = await host.memory_load(agent, "gardening tomatoes", limit=5, threshold=0.7)
        with pytest.raises(TypeError):
            await host.memory_load(agent, "gardening tomatoes", limit="5")
        return ok

    response = run(go())
    assert "Content: gardening tomatoes" in response.message and response.break_loop is False


def test_broken_tool_becomes_unknown(host):
    agent = host.agent()
    tool = agent.get_tool("memory_forget", None, {}, "", None)
    assert type(tool).__name__ == "Unknown"


# --- configuration ---------------------------------------------------------------------

_DEFAULTS = "alpha: 1\nname: x\ntags: [a]\nflag: false\nnested:\n  k: 1.5\n"


def test_env_defaults_apply_only_without_config_json(host):
    host.mount_plugin("dummy", {"default_config.yaml": _DEFAULTS})
    host.setenv("A0_SET_dummy__alpha", "7")
    host.setenv("A0_SET_DUMMY__FLAG", "yes")
    host.setenv("A0_SET_dummy__nested__k", "2.5")
    host.setenv("A0_SET_dummy__tags", "xyz")
    config = host.get_config(plugin="dummy")
    assert config == {"alpha": 7, "name": "x", "tags": ["x", "y", "z"], "flag": True, "nested": {"k": 2.5}}
    from helpers import plugins

    assert plugins.get_default_plugin_config("dummy")["alpha"] == 1

    host.set_config({"alpha": 2}, plugin="dummy")
    assert host.get_config(plugin="dummy") == {"alpha": 2}
    assert (host.root / "usr/plugins/dummy/config.json").is_file()


def test_dotenv_values_feed_env_defaults(host):
    host.mount_plugin("dummy", {"default_config.yaml": _DEFAULTS})
    from helpers import dotenv

    dotenv.save_dotenv_value("A0_SET_dummy__name", "from-dotenv")
    assert (host.root / "usr/.env").read_text().strip() == "A0_SET_dummy__name=from-dotenv"
    assert os.environ["A0_SET_dummy__name"] == "from-dotenv"
    assert host.get_config(plugin="dummy")["name"] == "from-dotenv"


def test_scoped_config_resolution(host):
    host.mount_plugin("dummy", {"default_config.yaml": _DEFAULTS})
    host.set_config({"scope": "global"}, plugin="dummy")
    host.set_config({"scope": "project"}, project="p1", plugin="dummy")
    agent, in_project = host.agent(), host.agent(project="p1")

    # a project-wide config.json is skipped whenever a profile is given (agents always have one)
    assert host.get_config(in_project, plugin="dummy") == {"scope": "global"}
    assert host.get_config(project="p1", plugin="dummy") == {"scope": "project"}

    host.set_config({"scope": "profile"}, profile="agent0", plugin="dummy")
    assert host.get_config(agent, plugin="dummy") == {"scope": "profile"}
    assert host.get_config(host.agent(profile="other"), plugin="dummy") == {"scope": "global"}

    path = host.set_config({"scope": "project+profile"}, project="p1", profile="agent0", plugin="dummy")
    assert path == host.root / "usr/projects/p1/.a0proj/agents/agent0/plugins/dummy/config.json"
    assert host.get_config(in_project, plugin="dummy") == {"scope": "project+profile"}
    assert host.get_config(agent, plugin="dummy") == {"scope": "profile"}


def test_hooks_are_loaded_cached_and_propagate(host):
    hooks = (
        "import asyncio\n"
        "with open('hooks_runs.txt', 'a') as f:\n"
        "    f.write('x')\n"
        "LOADS = len(open('hooks_runs.txt').read())\n"
        "def get_plugin_config(default, agent=None, **kwargs):\n"
        "    if default.get('boom'):\n"
        "        raise RuntimeError('hook failed')\n"
        "    return {**default, 'loads': LOADS}\n"
        "def save_plugin_config(settings, **kwargs):\n"
        "    return None if settings.get('skip') else {k: v for k, v in settings.items() if k != 'secret'}\n"
        "async def install():\n"
        "    await asyncio.sleep(0)\n"
        "    return 'installed'\n"
    )
    host.mount_plugin("dummy", {"default_config.yaml": "a: 1\n", "hooks.py": hooks})
    assert host.get_config(plugin="dummy") == {"a": 1, "loads": 1}
    assert host.get_config(plugin="dummy")["loads"] == 1  # cached module, not re-executed
    assert "hooks" not in sys.modules
    host.plugin_change(["dummy"], python_change=False)  # cache cleared -> hooks.py runs again
    assert host.get_config(plugin="dummy")["loads"] == 2

    path = host.save_config({"a": 2, "secret": "s"}, plugin="dummy")
    assert json.loads(path.read_text()) == {"a": 2}
    host.save_config({"skip": True}, plugin="dummy")
    assert json.loads(path.read_text()) == {"a": 2}  # hook returned None: nothing written

    assert host.call_hook("install", plugin="dummy") == "installed"

    async def inside_a_loop():
        return host.call_hook("install", plugin="dummy")

    assert run(inside_a_loop()) == "installed"
    assert host.call_hook("missing", plugin="dummy", default="d") == "d"

    host.set_config({"boom": True}, plugin="dummy")
    with pytest.raises(RuntimeError, match="hook failed"):
        host.get_config(plugin="dummy")


# --- toggles and extensions ------------------------------------------------------------

_MARK = (
    "from helpers.extension import Extension\n"
    "class Mark(Extension):\n"
    "    async def execute(self, marks=None, **kwargs):\n"
    "        marks.append('{tag}')\n"
)


def test_toggle_scopes_inherit_and_the_highest_file_wins(host):
    host.mount_plugin("dummy")
    agent, in_project = host.agent(), host.agent(project="p1")
    assert host.is_enabled(None, "dummy") and host.is_enabled(agent, "dummy")

    host.toggle(False, plugin="dummy")
    assert (host.root / "usr/plugins/dummy/.toggle-0").exists()
    assert not host.is_enabled(None, "dummy") and not host.is_enabled(in_project, "dummy")

    host.toggle(True, project="p1", plugin="dummy")
    assert host.is_enabled(in_project, "dummy") and not host.is_enabled(agent, "dummy")

    host.toggle(False, project="p1", profile="agent0", plugin="dummy")
    assert not host.is_enabled(in_project, "dummy")

    host.toggle(True, plugin="dummy", clear_overrides=True)
    assert host.is_enabled(in_project, "dummy") and host.is_enabled(agent, "dummy")
    assert not list((host.root / "usr/projects").rglob(".toggle-*"))


def test_extensions_of_enabled_plugins_run_first_name_wins(host):
    point = "extensions/python/selfcheck_point"
    host.mount_plugin(
        "aaa_one",
        {f"{point}/_20_same.py": _MARK.format(tag="aaa_20"), f"{point}/_30_last.py": _MARK.format(tag="aaa_30")},
    )
    host.mount_plugin(
        "bbb_two",
        {f"{point}/_20_same.py": _MARK.format(tag="bbb_20"), f"{point}/_10_first.py": _MARK.format(tag="bbb_10")},
    )
    agent = host.agent()
    from helpers import extension

    def fire():
        marks: list[str] = []
        run(extension.call_extensions_async("selfcheck_point", agent, marks=marks))
        return marks

    assert fire() == ["bbb_10", "aaa_20", "aaa_30"]
    host.toggle(False, plugin="aaa_one")
    assert fire() == ["bbb_10", "bbb_20"]
    with pytest.raises(ValueError):
        extension.call_extensions_sync("selfcheck_point", agent, marks=[])


# --- module purges -----------------------------------------------------------------------


def test_purging_plugins_gives_a_fresh_memory_class(host):
    async def go():
        return await host.memory()

    run(go())
    from plugins._memory.helpers.memory import Memory as before

    assert "default" in before.index
    plugin_mod = host.import_plugin("helpers")
    purged = host.purge("plugins")
    assert "plugins._memory.helpers.memory" in purged
    assert not any(name.startswith("usr.") for name in purged)
    from plugins._memory.helpers.memory import Memory as after

    assert after is not before and after.index == {} and inspect.isclass(after)
    assert sys.modules["usr.plugins.a0_reranker.helpers"] is plugin_mod
    assert "usr.plugins.a0_reranker.helpers" in host.purge("usr.plugins")
    assert "plugins._memory.helpers.memory" in sys.modules


# --- skills and API --------------------------------------------------------------------------


def test_skills_follow_the_hosts_validation(host):
    host.mount_plugin(
        "dummy",
        {
            "skills/good-skill/SKILL.md": "---\nname: good-skill\ndescription: Use it: when asked\n---\nBody\n",
            "skills/bad/SKILL.md": "---\nname: bad_skill\ndescription: underscores are invalid\n---\n",
            "skills/none/SKILL.md": "no frontmatter\n",
        },
    )
    names = {s.name for s in host.skills(host.agent())}
    assert "good-skill" in names and "bad_skill" not in names


def test_api_routing_and_errors(host):
    failing = (
        "from helpers.api import ApiHandler\n"
        "class Fail(ApiHandler):\n"
        "    @classmethod\n"
        "    def requires_loopback(cls):\n"
        "        return True\n"
        "    async def process(self, input, request):\n"
        "        raise ValueError('nope')\n"
    )
    host.mount_plugin("dummy", {"api/fail.py": failing})

    async def go():
        memory = await host.memory()
        await host.insert(memory, ["gardening tomatoes"])
        return (
            await host.dashboard_search("tomatoes"),
            await host.call_api("plugins/dummy/missing"),
            await host.call_api("plugins/dummy/fail", remote_addr="10.0.0.1"),
            await host.call_api("plugins/dummy/fail"),
        )

    found, missing, remote, failed = run(go())
    assert found["success"] and found["total_count"] == 1
    assert missing.status_code == 404
    assert remote.status_code == 403
    assert failed.status_code == 500 and "nope" in failed.get_data(as_text=True)
