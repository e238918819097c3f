"""The line the chat shows with each recall step: through the stand-in host's real log item
class, for each mode, a reranker that is unavailable, a fallback and shadow mode; beside
what the host writes, never over it; no key, no memory text; and a missing or odd log item
is simply skipped."""

import pytest

from tests.servers import start
from tests.host.recall import FILLER, HISTORY, QUESTION, enabled_store, free_port, set_plugin, unwrapped_recall

KEY = "sk-test-0123456789abcdefXYZ"


def tie_free_texts(n: int = 60) -> list[str]:
    """Memories whose similarities to the question all differ: how often each names grafana
    and atlas is its own. (Equal similarities would leave "the host's first" to the order
    FAISS happens to break ties in, which its two search paths do differently.)"""
    return [
        f"memory {i}: notes" + " grafana" * (i % 9) + " atlas" * (i // 9) + f" and {FILLER[i % 20]}" for i in range(n)
    ]


@pytest.fixture
def chat(host):
    agent, memory = enabled_store(host, tie_free_texts())
    return host, agent, memory


async def recall_step(host, agent):
    """One recall; the log item the chat shows for it, once the plugin is done with it."""
    result = await host.recall(agent, QUESTION, HISTORY)
    await host.import_plugin("helpers.recall.shadow").drained()
    item = next(i for i in reversed(agent.context.log.logs) if i.type == "util" and "found" in i.heading)
    return result, item


def assert_host_lines_untouched(item, result):
    """What the host writes is there as the host wrote it; the plugin's line is its own."""
    kvps = dict(item.kvps)
    assert item.heading == f"{len(result['memories'])} memories and {len(result['solutions'])} relevant solutions found"
    for area in ("memories", "solutions"):
        if result[area]:
            assert kvps.pop(area) == "\n\n".join(d.page_content for d in result[area])
    assert set(kvps) == {"reranker"}
    line = kvps["reranker"]
    stored = [d.page_content for d in result["memories"] + result["solutions"]]
    assert not any(text in line for text in stored) and KEY not in line and "memory 1" not in line
    return line


def part(shown, host, applied=True):
    """What the line must say of one search, counted here from the documents themselves:
    how many of those shown the host alone did not show, and whether the first one differs
    from the host's first."""
    if not shown:
        return "none found"
    host_ids = {id(d) for d in host}
    new = sum(1 for d in shown if id(d) not in host_ids)
    changed = not host or shown[0] is not host[0]
    if applied:
        return f"{new} of {len(shown)} that Agent Zero alone would not have shown, " + (
            "first one changed" if changed else "same first one"
        )
    return f"{new} of {len(shown)} would be ones Agent Zero alone does not show, " + (
        "the first one would change" if changed else "the same first one"
    )


def expected_line(head, result, host_alone, applied=True):
    memories, solutions = (part(result[a], host_alone[a], applied) for a in ("memories", "solutions"))
    return f"{head} — memories: {memories}; solutions: {solutions}"


def test_built_in_fusion(chat):
    host, agent, memory = chat
    set_plugin(host)
    host_alone = host.run(unwrapped_recall(host, agent, QUESTION, HISTORY))
    result, item = host.run(recall_step(host, agent))
    line = assert_host_lines_untouched(item, result)
    assert line == expected_line("ordered by the plugin's own searches, no reranker", result, host_alone)
    assert (
        "1 of" in line or "2 of" in line or "3 of" in line or "4 of" in line or "5 of" in line
    )  # it found something new


def test_with_a_reranker_server(chat):
    host, agent, memory = chat
    host_alone = host.run(unwrapped_recall(host, agent, QUESTION, HISTORY))
    with start("tei19", api_key=KEY) as srv:
        set_plugin(host, rerank_endpoint=srv.url, rerank_api_key=KEY)
        result, item = host.run(recall_step(host, agent))
    line = assert_host_lines_untouched(item, result)
    assert line == expected_line("reranked by your TEI server", result, host_alone)
    assert "/" not in line  # the web UI turns path-like text into file-browser links


def test_with_the_built_in_lexical_reranker(chat):
    host, agent, memory = chat
    host_alone = host.run(unwrapped_recall(host, agent, QUESTION, HISTORY))
    set_plugin(host, rerank_api="lexical")
    result, item = host.run(recall_step(host, agent))
    line = assert_host_lines_untouched(item, result)
    # BM25 orders the calibration questions worse than Agent Zero's own embedder: the line says
    # it has no say (helpers/scoring/calibration.py), and that recalls no longer ask it.
    assert line == expected_line(
        "ordered by the plugin's own searches, no reranker; the built-in word matcher (BM25) has no say: it did "
        "not order the calibration questions clearly better than Agent Zero's own search, so recalls ask it no longer",
        result,
        host_alone,
    )


@pytest.mark.parametrize(
    "case, words",
    [
        ("down", "the server could not be reached"),
        ("500", "the server answered HTTP 500"),
        ("slow", "the server gave no answer within 0.5 s"),
        ("garbage", "the server's answer could not be read"),
    ],
)
def test_a_reranker_that_is_unavailable_says_why_in_plain_words(chat, case, words):
    host, agent, memory = chat
    with start("tei19") as srv:
        set_plugin(host, rerank_endpoint=srv.url, rerank_timeout=0.5, rerank_retries=0)
        host.run(recall_step(host, agent))  # the probe: the route is known before the fault
        if case == "down":
            set_plugin(host, rerank_endpoint=f"http://127.0.0.1:{free_port()}", rerank_timeout=0.5, rerank_retries=0)
        else:
            srv.set_faults(
                **{"500": {"statuses": [500] * 20}, "slow": {"delay": 2.0}, "garbage": {"body": "malformed"}}[case]
            )
        result, item = host.run(recall_step(host, agent))
    line = assert_host_lines_untouched(item, result)
    assert line.startswith(
        f"ordered by the plugin's own searches, no reranker; the reranker was not used: {words} — memories: "
    ), line


def test_a_fallback_to_the_hosts_own_order_says_why(chat):
    host, agent, memory = chat
    set_plugin(host, rerank_candidates="many")
    result, item = host.run(recall_step(host, agent))
    line = assert_host_lines_untouched(item, result)
    assert line == (
        "Agent Zero's own order (the setting rerank_candidates is invalid) — "
        "memories: as Agent Zero found them; solutions: as Agent Zero found them"
    )


def test_shadow_mode_says_what_applying_would_have_changed(chat):
    host, agent, memory = chat
    with start("tei19") as srv:
        set_plugin(host, rerank_endpoint=srv.url)
        applied, _ = host.run(recall_step(host, agent))  # what applying gives
        set_plugin(host, rerank_endpoint=srv.url, rerank_apply=False)
        result, item = host.run(recall_step(host, agent))
    line = assert_host_lines_untouched(item, result)
    # the agent got the host's own result; the line says what the applied order would change
    assert line == expected_line(
        "shadow mode, not applied: reranked by your TEI server", applied, result, applied=False
    )


def test_a_missing_or_odd_log_item_is_skipped(chat, monkeypatch):
    host, agent, memory = chat
    set_plugin(host)
    recall_line = host.import_plugin("helpers.recall.recall_line")

    class Broken:
        def update(self, **kwargs):
            raise RuntimeError("a log item of another kind")

    for odd in (None, object(), Broken()):
        recall_line.show(odd, "memories", "x", "y")  # never raises
    # Through a recall whose log item breaks on update: the recall is unaffected.
    logs = agent.context.log

    def log(*args, **kwargs):
        item = type(logs).log(logs, *args, **kwargs)
        monkeypatch.setattr(item, "update", _only_host_keys(item))
        return item

    monkeypatch.setattr(logs, "log", log)
    result = host.run(host.recall(agent, QUESTION, HISTORY))
    assert result["error"] is None and result["memories"]
    stats = host.import_plugin("helpers.recall.wrapper").STATS.snapshot()["totals"]
    assert stats.get("fused") == 2 and not stats.get("fallback")


def _only_host_keys(item):
    """An update that refuses any key the host does not write."""
    real = item.update

    def update(**kwargs):
        if set(kwargs) - {"heading", "query", "memories", "solutions", "content", "type"}:
            raise RuntimeError("unknown key")
        return real(**kwargs)

    return update


def test_the_line_never_holds_a_servers_own_words(chat):
    """What a server said (its error body) stays in the status views; the chat gets the kind."""
    host, agent, memory = chat
    with start("tei19") as srv:
        set_plugin(host, rerank_endpoint=srv.url, rerank_retries=0)
        host.run(recall_step(host, agent))
        srv.set_faults(statuses=[422] * 20)
        result, item = host.run(recall_step(host, agent))
    line = item.kvps["reranker"]
    status = host.import_plugin("helpers.recall.wrapper").STATS.snapshot()["last_error"]["reason"]
    assert "HTTP 422" in status and len(status) > len("reranker unavailable: ServerError: HTTP 422")
    assert (
        "the server answered HTTP 422" in line
        and "{" not in line
        and status.split("HTTP 422", 1)[1].strip(": ")[:20] not in line
    )
