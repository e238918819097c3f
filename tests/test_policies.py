"""Beyond reordering, through the stand-in host: the relevance floor, recency and diversity
(MMR), each alone and together, on a probability-scale server (TEI) and a raw-logit one
(llama.cpp); and every one of them, switched off, giving exactly the plain reranked order.

They act on the reranker's grade, before it is combined with the fused order: so each
test reads that grade (the pipeline's ``after_policies`` list, taken as the combine stage gets
it) and checks what reached the agent too (a floor's drops never do). The servers score
from a table (memory text -> logit), so each expected order is computed here,
independently of the plugin, from the formulas the settings document."""

import time
from datetime import datetime, timedelta

import pytest
import yaml

from tests.host.recall import spy_on_stage
from tests.servers import relevance, start
from tests.servers.scoring import sigmoid

QUESTION = "which port does grafana use on atlas"
STAMP = "%Y-%m-%d %H:%M:%S"
PROBE_QUERY = "What is the capital of France?"
PROBE_RELEVANT = "Paris is the capital and largest city of France."

# text: (server logit, age in days; None = no timestamp, "knowledge" = a knowledge-file document)
CORPUS = {
    "grafana on atlas listens on port 3000": (6.0, 200),
    "atlas runs grafana and prometheus in docker": (4.5, 1),
    "the grafana admin password was reset last spring": (3.0, 40),
    "nginx on atlas proxies port 443 to grafana": (2.0, 3),
    "grafana dashboards were moved to the new atlas disk": (1.0, None),
    "the atlas server is a thinkpad in the cupboard": (0.5, 0.2),
    "docs: grafana listens on port 3000 by default": (-0.5, "knowledge"),
    "prometheus keeps thirty days of metrics on atlas": (-1.5, 10),
    "the garden needs water every other day": (-2.5, 0.5),
    "restic backs up atlas to the nas at night": (-3.5, 90),
}

# Near-duplicates on top, so diversity has something to spread out.
DUPLICATES = {
    "grafana on atlas listens on port 3000 behind nginx": (6.0, 5),
    "grafana on atlas listens on port 3000 behind the nginx proxy": (5.8, 5),
    "grafana on atlas listens on port 3000 behind an nginx reverse proxy": (5.6, 5),
    "prometheus scrapes the node exporter on atlas every fifteen seconds": (5.0, 30),
    "the restic backup of atlas runs at night to the nas": (4.0, 2),
    "a wireguard tunnel connects atlas to the lisbon office": (3.0, 60),
    "grafana alerts for atlas go to the ops channel": (2.0, 1),
}


def scorer_for(table):
    def score(query, document):
        return table[document][0] if document in table else relevance(query, document)

    return score


def set_memory_config(host, n):
    """Recall reads every memory (threshold 0) and keeps all ``n`` of them."""
    defaults = yaml.safe_load((host.root / "plugins" / "_memory" / "default_config.yaml").read_text())
    host.set_config(
        {
            **defaults,
            "memory_recall_similarity_threshold": 0.0,
            "memory_recall_memories_max_search": n,
            "memory_recall_memories_max_result": n,
        },
        plugin="_memory",
    )


def set_plugin(host, **config):
    host.set_config({"rerank_cache": False, "rerank_candidates": 20, **config})
    host.import_plugin("helpers.settings_cache").forget()


async def build(host, table):
    """An agent whose memory holds ``table``, with the timestamps the table gives."""
    set_memory_config(host, len(table))
    agent = host.agent()
    memory = await host.memory(agent)
    for text, (_, age) in table.items():
        extra = {"knowledge_source": True} if age == "knowledge" else {}
        await host.insert(memory, [text], **extra)
    now = datetime.now()
    for doc in memory.db.docstore._dict.values():
        age = table[doc.page_content][1]
        if age is None:
            del doc.metadata["timestamp"]
        elif age != "knowledge":
            doc.metadata["timestamp"] = (now - timedelta(days=age)).strftime(STAMP)
    host.import_plugin("helpers.recall.wrapper").ensure_wrapped()
    host.toggle(True)
    return agent, memory


async def recall_texts(host, agent, **config):
    """(the reranker's grade of the memories as texts, the memories the agent got)."""
    set_plugin(host, **config)
    pipeline = host.import_plugin("helpers.recall.pipeline")
    judged = []

    def spy(real, memory, search):
        if "solutions" not in search.filter:
            judged.append([d.page_content for d in search.after_policies])
        real(memory, search)

    restore = spy_on_stage(pipeline, "combine", spy)
    try:
        result = await host.recall(agent, QUESTION, "")
        await host.import_plugin("helpers.recall.shadow").drained()  # shadow mode measures afterwards
    finally:
        restore()
    assert result["error"] is None
    got = [d.page_content for d in result["memories"]]
    if judged and config.get("rerank_apply", True):
        assert set(got) <= set(judged[0])  # what the floor dropped never reaches the agent
    return (judged[0] if judged else []), result["memories"]


# --- the reference: the documented formulas, written out independently -------------------
def to_unit(logit):
    """What the plugin should treat as 0..1 relevance: TEI already sends sigmoid(logit);
    llama.cpp sends the logit, which the plugin puts through the sigmoid."""
    return sigmoid(logit)


def server_score(logit, kind):
    return sigmoid(logit) if kind == "tei19" else logit


def recency_terms(table, half_life):
    terms = {}
    for text, (_, age) in table.items():
        terms[text] = None if age is None or age == "knowledge" else 0.5 ** (age / half_life)
    dated = [t for t in terms.values() if t is not None]
    mean = sum(dated) / len(dated)
    return {text: (mean if t is None else t) for text, t in terms.items()}


def reference(table, kind, *, min_score=None, relative=0.0, weight=0.0, half_life=30.0, lam=1.0, similarity=None):
    texts = list(table)
    raw = {t: server_score(table[t][0], kind) for t in texts}
    if min_score is not None:
        texts = [t for t in texts if raw[t] >= min_score]
    if relative:
        rel, irr = sigmoid(relevance(PROBE_QUERY, PROBE_RELEVANT)), sigmoid(-6.0)
        cut = irr + relative * (rel - irr)
        texts = [t for t in texts if to_unit(table[t][0]) >= cut]
    value = {t: to_unit(table[t][0]) for t in texts}
    if weight:
        terms = recency_terms({t: table[t] for t in texts}, half_life)
        value = {t: (1 - weight) * value[t] + weight * terms[t] for t in texts}
    ordered = sorted(texts, key=lambda t: (-value[t], -raw[t]))
    if lam >= 1:
        return ordered
    picked, rest = [], list(ordered)
    while rest:

        def gain(t):
            penalty = max((similarity(t, p) for p in picked), default=0.0)
            return lam * value[t] - (1 - lam) * penalty

        best = max(rest, key=gain)  # max keeps the first of equals: the better-scored one
        picked.append(best)
        rest.remove(best)
    return picked


def jaccard(a, b):
    import re

    sa, sb = set(re.findall(r"\w+", a.lower())), set(re.findall(r"\w+", b.lower()))
    return len(sa & sb) / len(sa | sb)


@pytest.fixture(params=["tei19", "llamacpp"])
def kind(request):
    return request.param


# --- off means off ----------------------------------------------------------------------
OFF_STATES = {
    "defaults": {},
    "min_score empty": {"rerank_min_score": None},
    "min_score below every score": {"rerank_min_score": -1e6},
    "relative_floor 0": {"rerank_relative_floor": 0.0},
    "recency weight 0, other half-life": {"rerank_recency_weight": 0.0, "rerank_recency_half_life_days": 1.0},
    "mmr lambda 1": {"rerank_mmr_lambda": 1.0},
    "private_only on a loopback server": {"rerank_private_only": True},
    "redact with nothing to mask": {"rerank_redact": True},
    "decision log on": {"rerank_shadow_log": "usr/shadow.jsonl"},
}


def test_every_feature_off_gives_exactly_the_plain_reranked_order(host, tmp_path, kind):
    async def main():
        agent, memory = await build(host, CORPUS)
        with start(kind, scorer=scorer_for(CORPUS)) as srv:
            plain_texts, plain_docs = await recall_texts(host, agent, rerank_endpoint=srv.url)
            # The plain grade is the server's scores, best first: nothing else moved it.
            assert plain_texts == reference(CORPUS, kind)
            assert [d.page_content for d in plain_docs] != [d.page_content for d in await _host_order(host, agent)]
            stored = {id(d) for d in memory.db.docstore._dict.values()}
            assert {id(d) for d in plain_docs} <= stored  # the host's own objects
            for name, config in OFF_STATES.items():
                config = {k: (str(tmp_path / "shadow.jsonl") if v == "SHADOW" else v) for k, v in config.items()}
                texts, docs = await recall_texts(host, agent, rerank_endpoint=srv.url, **config)
                assert texts == plain_texts, name
                assert [id(d) for d in docs] == [id(d) for d in plain_docs], name

    host.run(main())


async def _host_order(host, agent):
    host.toggle(False)
    try:
        return (await host.recall(agent, QUESTION, ""))["memories"]
    finally:
        host.toggle(True)


# --- the relevance floor ----------------------------------------------------------------
@pytest.mark.parametrize("kind, min_score", [("tei19", 0.5), ("llamacpp", 0.0)])
def test_min_score_is_on_the_servers_own_scale(host, kind, min_score):
    """0.5 on TEI's probabilities and 0.0 on llama.cpp's logits are the same cut."""

    async def main():
        agent, memory = await build(host, CORPUS)
        with start(kind, scorer=scorer_for(CORPUS)) as srv:
            texts, _ = await recall_texts(host, agent, rerank_endpoint=srv.url, rerank_min_score=min_score)
        assert texts == [t for t in reference(CORPUS, kind) if CORPUS[t][0] >= 0]
        assert texts == reference(CORPUS, kind, min_score=min_score)

    host.run(main())


def test_relative_floor_keeps_the_same_memories_on_every_server(host):
    """A quarter of the way from the probe's irrelevant to its relevant score, on 0..1
    relevance: the same model behind TEI (sigmoid) and llama.cpp (raw logits) keeps the same
    memories. (On the raw logit scale a quarter of the way would be -3.2, not -1.1.)"""

    async def main():
        agent, memory = await build(host, CORPUS)
        kept = {}
        for kind in ("tei19", "llamacpp"):
            with start(kind, scorer=scorer_for(CORPUS)) as srv:
                kept[kind], _ = await recall_texts(host, agent, rerank_endpoint=srv.url, rerank_relative_floor=0.25)
        assert kept["tei19"] == kept["llamacpp"] == reference(CORPUS, "tei19", relative=0.25)
        assert len(kept["tei19"]) == 7  # dropped: logits -1.5, -2.5, -3.5

    host.run(main())


def test_a_floor_above_everything_returns_nothing_and_the_status_says_why(host):
    async def main():
        agent, memory = await build(host, CORPUS)
        status_report = host.import_plugin("helpers.status_report")
        with start("tei19", scorer=scorer_for(CORPUS)) as srv:
            texts, _ = await recall_texts(host, agent, rerank_endpoint=srv.url, rerank_min_score=0.9999)
            assert texts == []
            text = host.import_plugin("helpers.vocabulary").status_text(status_report.collect(agent))
            assert "every candidate scored below the relevance floor" in text
            assert "rerank_min_score 0.9999" in text
            # Shadow mode measures only: the agent still gets the host's memories.
            expected = await _host_order(host, agent)
            texts, docs = await recall_texts(
                host, agent, rerank_endpoint=srv.url, rerank_min_score=0.9999, rerank_apply=False
            )
            assert [id(d) for d in docs] == [id(d) for d in expected]

    host.run(main())


# --- recency ----------------------------------------------------------------------------
def test_recency_blends_age_into_relevance(host, kind):
    async def main():
        agent, memory = await build(host, CORPUS)
        with start(kind, scorer=scorer_for(CORPUS)) as srv:
            texts, _ = await recall_texts(
                host,
                agent,
                rerank_endpoint=srv.url,
                rerank_recency_weight=0.5,
                rerank_recency_half_life_days=10,
            )
        expected = reference(CORPUS, kind, weight=0.5, half_life=10)
        assert texts == expected
        assert texts[0] == "atlas runs grafana and prometheus in docker"  # a day old beats 200 days
        assert texts != reference(CORPUS, kind)

    host.run(main())


def test_undated_memories_and_knowledge_files_get_the_pools_mean_recency(host):
    """Neither promoted nor demoted by age: with every dated memory equally old, an
    undated memory and a knowledge document keep their relevance rank among them."""
    table = {
        "grafana listens on port 3000 on atlas": (3.0, 20),
        "docs: grafana on atlas listens on port 3000": (2.5, "knowledge"),
        "atlas grafana port is set in grafana.ini": (2.0, 20),
        "grafana on atlas moved to port 3001": (1.5, None),
        "atlas runs grafana in docker": (1.0, 20),
    }

    async def main():
        agent, memory = await build(host, table)
        with start("tei19", scorer=scorer_for(table)) as srv:
            texts, _ = await recall_texts(
                host, agent, rerank_endpoint=srv.url, rerank_recency_weight=0.9, rerank_recency_half_life_days=1
            )
        assert texts == list(table)  # pure relevance order, although every dated one is 20 half-lives old

    host.run(main())


def test_age_is_read_as_local_time(monkeypatch):
    """The host writes datetime.now() (local time); a memory saved a minute ago is a
    minute old in a time zone 14 hours from UTC too."""
    from helpers.recall.policies import age_days

    class Doc:
        def __init__(self, stamp):
            self.metadata = {"timestamp": stamp}

    try:
        for zone in ("Pacific/Kiritimati", "Pacific/Pago_Pago"):  # UTC+14, UTC-11
            monkeypatch.setenv("TZ", zone)
            time.tzset()
            now = datetime.now()
            age = age_days(Doc((now - timedelta(minutes=1)).strftime(STAMP)), now)
            assert abs(age * 1440 - 1) < 0.02
    finally:
        monkeypatch.undo()
        time.tzset()
    assert age_days(Doc("not a date"), datetime.now()) is None
    assert age_days(Doc((datetime.now() + timedelta(days=2)).strftime(STAMP)), datetime.now()) == 0.0  # clock skew


# --- diversity --------------------------------------------------------------------------
def test_mmr_uses_the_hosts_stored_vectors(host, monkeypatch):
    async def main():
        agent, memory = await build(host, DUPLICATES)
        store_search = host.import_plugin("helpers.recall.store_search")
        original, used = store_search.similarity_matrix, []

        def spy(memory_, docs):
            matrix = original(memory_, docs)
            used.append(matrix is not None)
            return matrix

        monkeypatch.setattr(store_search, "similarity_matrix", spy)
        with start("tei19", scorer=scorer_for(DUPLICATES)) as srv:
            texts, _ = await recall_texts(host, agent, rerank_endpoint=srv.url, rerank_mmr_lambda=0.5)
        assert used == [True]
        expected = reference(DUPLICATES, "tei19", lam=0.5, similarity=host.embeddings.similarity)
        assert texts == expected
        top3 = texts[:3]
        assert sum("behind" in t for t in top3) == 1  # one of the three near-duplicates up top
        assert texts != reference(DUPLICATES, "tei19")

    host.run(main())


def test_mmr_falls_back_to_word_overlap_without_vectors(host, monkeypatch):
    async def main():
        agent, memory = await build(host, DUPLICATES)
        store_search = host.import_plugin("helpers.recall.store_search")
        monkeypatch.setattr(store_search, "similarity_matrix", lambda memory_, docs: None)
        with start("llamacpp", scorer=scorer_for(DUPLICATES)) as srv:
            texts, _ = await recall_texts(host, agent, rerank_endpoint=srv.url, rerank_mmr_lambda=0.6)
        assert texts == reference(DUPLICATES, "llamacpp", lam=0.6, similarity=jaccard)
        assert sum("behind" in t for t in texts[:3]) == 1

    host.run(main())


# --- together ---------------------------------------------------------------------------
def test_floor_recency_and_diversity_compose(host, kind):
    table = {**CORPUS, **DUPLICATES}

    async def main():
        agent, memory = await build(host, table)
        with start(kind, scorer=scorer_for(table)) as srv:
            texts, _ = await recall_texts(
                host,
                agent,
                rerank_endpoint=srv.url,
                rerank_relative_floor=0.3,
                rerank_recency_weight=0.3,
                rerank_recency_half_life_days=15,
                rerank_mmr_lambda=0.7,
            )
        expected = reference(
            table, kind, relative=0.3, weight=0.3, half_life=15, lam=0.7, similarity=host.embeddings.similarity
        )
        assert texts == expected
        # Each feature left its mark: some dropped, and neither plain nor recency-only order.
        assert len(texts) < len(table)
        assert texts != reference(table, kind, relative=0.3)
        assert texts != reference(table, kind, relative=0.3, weight=0.3, half_life=15)

    host.run(main())


# --- the pieces, directly ---------------------------------------------------------------
@pytest.mark.parametrize(
    "scale, scores, expected",
    [
        ("probability", [0.2, 1.0, 0.0], [0.2, 1.0, 0.0]),
        ("cosine", [-1.0, 0.0, 1.0], [0.0, 0.5, 1.0]),
        ("logit", [0.0, 800.0, -800.0], [0.5, 1.0, 0.0]),
        ("bm25", [0.0, 2.0, 4.0], [0.0, 0.5, 1.0]),
    ],
)
def test_normalise_per_scale(scale, scores, expected):
    from helpers.recall.policies import normalise

    assert normalise(scores, scale) == pytest.approx(expected)


def test_mmr_with_lambda_one_is_relevance_order_and_with_identical_documents_spreads_them():
    from helpers.recall.policies import mmr

    same = lambda i, j: 1.0 if {i, j} <= {0, 1} else 0.0  # noqa: E731
    assert mmr([0.9, 0.8, 0.5], 1.0, same) == [0, 1, 2]
    assert mmr([0.9, 0.8, 0.5], 0.5, same) == [0, 2, 1]
    assert mmr([0.5, 0.5, 0.5], 0.5, lambda i, j: 0.0, tiebreak=[1.0, 3.0, 2.0]) == [1, 2, 0]
    assert mmr([], 0.5, same) == []


def test_relative_floor_ignores_a_probe_that_ranked_wrongly():
    from helpers.scoring.verdicts import Verdict
    from helpers.recall.policies import relative_cut
    from helpers.settings import Settings

    settings = Settings.from_mapping({"rerank_relative_floor": 0.5})
    assert relative_cut(settings, Verdict(None, "logit", -2.0, 3.0)) is None
    assert relative_cut(settings, None) is None
    assert relative_cut(settings, Verdict(None, "logit", 0.0, -800.0)) == pytest.approx(0.25)
    assert relative_cut(settings, Verdict(None, "probability", 0.9, 0.1)) == pytest.approx(0.5)


def test_without_a_reranker_recency_and_diversity_order_the_fused_list(host):
    """No server: the policies act on the fused order (its rank fusion scores as relevance);
    at recency weight 1 that is age alone, newest first."""

    async def main():
        agent, memory = await build(host, CORPUS)
        texts, docs = await recall_texts(host, agent, rerank_recency_weight=1.0, rerank_recency_half_life_days=10)
        plain, _ = await recall_texts(host, agent)
        assert sorted(texts) == sorted(plain) and texts != plain
        dated = [t for t in texts if isinstance(CORPUS[t][1], (int, float))]
        assert dated == sorted(dated, key=lambda t: CORPUS[t][1])  # newest first
        assert {d.page_content for d in docs} <= set(texts)

    host.run(main())
