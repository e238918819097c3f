"""One record per search (helpers/recall/outcome.py): the pipeline is its list of stages,
the record the last of them; what a search changed versus the host is worked out once and
read by the counters, the decision log and the chat line; a fallback is kept the same way;
and bookkeeping that fails costs the recall nothing. Through the stand-in host."""

import pytest

from tests.host.recall import HISTORY, QUESTION, enabled_store, ids, set_plugin, spy_on_stage


def test_the_pipeline_runs_its_stages_in_order_and_the_record_last(host):
    pipeline = host.import_plugin("helpers.recall.pipeline")
    assert [stage.name for stage in pipeline.STAGES] == [
        "plan",
        "gather",
        "fuse",
        "pool",
        "score",
        "policies",
        "combine",
        "record",
    ]
    assert [stage.name for stage in pipeline.STAGES if stage.judges_the_pool] == ["score", "policies", "combine"]


def test_each_search_is_recorded_once_by_the_pipelines_own_last_stage(host):
    agent, memory = enabled_store(host)
    set_plugin(host)
    pipeline = host.import_plugin("helpers.recall.pipeline")
    stats = host.import_plugin("helpers.report.stats").STATS
    recorded = []

    def spy(real, memory, search):
        recorded.append(search.area)
        real(memory, search)

    restore = spy_on_stage(pipeline, "record", spy)
    try:
        result = host.run(host.recall(agent, QUESTION, HISTORY))
    finally:
        restore()
    assert result["error"] is None and result["memories"]
    assert recorded == ["memories", "solutions"]
    assert stats.snapshot()["totals"] == {"fused": 2}  # nothing else counted them a second time


def test_in_shadow_mode_what_changed_is_worked_out_once_per_search(host, monkeypatch):
    agent, memory = enabled_store(host)
    set_plugin(host, rerank_apply=False)
    changes = host.import_plugin("helpers.report.changes")
    real, calls = changes.versus_host, []

    def counted(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(changes, "versus_host", counted)
    host.run(_recall_and_measure(host, agent))
    snapshot = host.import_plugin("helpers.report.stats").STATS.snapshot()
    assert snapshot["totals"] == {"shadow": 2} and snapshot["shadow"]["searches"] == 2
    assert len(calls) == 2  # memories and solutions: once each, for the counters and the chat line alike
    line = next(i for i in reversed(agent.context.log.logs) if i.type == "util" and "found" in i.heading).kvps[
        "reranker"
    ]
    assert line.startswith("shadow mode, not applied: ")


def test_a_fallback_is_kept_the_way_every_search_is(host, monkeypatch):
    agent, memory = enabled_store(host)
    set_plugin(host)
    expected_order = _host_alone(host, agent)
    outcome = host.import_plugin("helpers.recall.outcome")
    pipeline = host.import_plugin("helpers.recall.pipeline")
    kept = []
    real_keep = outcome.keep
    monkeypatch.setattr(outcome, "keep", lambda done, *a, **k: (kept.append(done), real_keep(done, *a, **k))[1])

    def broken(real, memory, search):
        raise RuntimeError("the store is gone")

    restore = spy_on_stage(pipeline, "gather", broken)
    try:
        result = host.run(host.recall(agent, QUESTION, HISTORY))
    finally:
        restore()
    assert ids(result["memories"]) == ids(expected_order["memories"])
    assert [(d.area, d.counted_as, d.failure.reason) for d in kept] == [
        ("memories", "fallback", "unexpected RuntimeError: the store is gone"),
        ("solutions", "fallback", "unexpected RuntimeError: the store is gone"),
    ]
    assert host.import_plugin("helpers.report.stats").STATS.snapshot()["totals"] == {"fallback": 2}
    line = next(i for i in reversed(agent.context.log.logs) if i.type == "util" and "found" in i.heading).kvps[
        "reranker"
    ]
    assert line == (
        "Agent Zero's own order (the plugin's search failed (RuntimeError)) — "
        "memories: as Agent Zero found them; solutions: as Agent Zero found them"
    )


def test_a_failure_while_recording_costs_the_recall_nothing(host, monkeypatch):
    agent, memory = enabled_store(host)
    set_plugin(host)
    plugins_order = host.run(host.recall(agent, QUESTION, HISTORY))
    stats = host.import_plugin("helpers.report.stats").STATS
    stats.forget()

    tried = []

    def broken(done, *args, **kwargs):
        tried.append(done.counted_as)
        raise RuntimeError("the counters are gone")

    monkeypatch.setattr(host.import_plugin("helpers.recall.outcome"), "keep", broken)
    for apply in (True, False):
        set_plugin(host, rerank_apply=apply)
        result = host.run(_recall_and_measure(host, agent))
        assert result["error"] is None
        if apply:
            assert ids(result["memories"]) == ids(plugins_order["memories"])
    assert tried == ["fused", "fused", "shadow", "shadow"]  # each search reached its record
    assert not stats.snapshot()["totals"].get("fallback")  # and none became a fallback, applied or measured


async def _recall_and_measure(host, agent):
    """A recall, and in shadow mode its measurement afterwards, on the recall's own loop."""
    result = await host.recall(agent, QUESTION, HISTORY)
    await host.import_plugin("helpers.recall.shadow").drained()
    return result


def _host_alone(host, agent):
    host.toggle(False)
    try:
        return host.run(host.recall(agent, QUESTION, HISTORY))
    finally:
        host.toggle(True)


class _Unwritable:
    def __repr__(self):
        raise ValueError("no words for this")


@pytest.mark.parametrize("breaks", ["the counters", "the chat line", "the failure's own message"])
def test_a_fallback_whose_record_fails_still_returns_the_hosts_own_answer(host, monkeypatch, breaks):
    agent, memory = enabled_store(host)
    set_plugin(host)
    expected = _host_alone(host, agent)
    pipeline = host.import_plugin("helpers.recall.pipeline")
    failure = RuntimeError("the store is gone")
    if breaks == "the counters":
        monkeypatch.setattr(host.import_plugin("helpers.report.stats").STATS, "record", _raise)
    elif breaks == "the chat line":
        monkeypatch.setattr(host.import_plugin("helpers.vocabulary"), "fallback_head", _raise)
    else:
        failure = KeyError(_Unwritable())  # str() of it raises

    def broken(real, memory, search):
        raise failure

    restore = spy_on_stage(pipeline, "fuse", broken)
    try:
        result = host.run(host.recall(agent, QUESTION, HISTORY))  # before: the failure escaped
    finally:
        restore()
    assert result["error"] is None
    assert ids(result["memories"]) == ids(expected["memories"])


def test_a_shadow_measurement_that_cannot_start_costs_the_recall_nothing(host, monkeypatch):
    agent, memory = enabled_store(host)
    set_plugin(host, rerank_apply=False)
    expected = _host_alone(host, agent)
    reranker = host.import_plugin("helpers.reranker")
    reranker.reset_state()  # the next measurement registers its stopper again
    monkeypatch.setattr(host.import_plugin("helpers.lifecycle"), "register_stopper", _raise)
    result = host.run(host.recall(agent, QUESTION, HISTORY))  # before: RuntimeError out of the recall
    assert result["error"] is None
    assert ids(result["memories"]) == ids(expected["memories"])


def _raise(*args, **kwargs):
    raise RuntimeError("broken")
