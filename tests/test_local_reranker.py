"""``rerank_api: local`` with a tiny cross-encoder built and trained here (a 2-layer BERT with
hidden size 32, saved to a temporary folder): loading, scoring, batching and warm-up through
the public API and a recall through the stand-in host; and a missing package or model
giving a clear probe report and the host's own result. Nothing is downloaded."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"  # before transformers or huggingface_hub are imported
os.environ["TRANSFORMERS_OFFLINE"] = "1"

import asyncio  # noqa: E402
import re  # noqa: E402
import sys  # noqa: E402
import threading  # noqa: E402

import pytest  # noqa: E402
import yaml  # noqa: E402

pytestmark = pytest.mark.local_model


PROBE_QUERY = "What is the capital of France?"
PROBE_DOCS = (
    "Paris is the capital and largest city of France.",
    "Lyon is a large city in the south-east of France, known for its cuisine.",
    "Photosynthesis converts sunlight into chemical energy in green plants.",
)
QUESTION = "which port does grafana use on atlas"
ANSWER = "the zebra notes say atlas moved grafana to port 3001"
MEMORIES = [
    "grafana on atlas is behind nginx",
    "atlas runs grafana and prometheus in docker",
    "the garden needs water every other day",
    "restic backs up atlas to the nas at night",
    ANSWER,
    "prometheus keeps thirty days of metrics on atlas",
]
# (query, document, target logit): the probe ranked right, and the answer above the rest.
TRAINING = [
    (PROBE_QUERY, PROBE_DOCS[0], 4.0),
    (PROBE_QUERY, PROBE_DOCS[1], 0.0),
    (PROBE_QUERY, PROBE_DOCS[2], -4.0),
    *[(QUESTION, m, 4.0 if m == ANSWER else -2.0) for m in MEMORIES],
]


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory):
    """A folder holding a trained tiny cross-encoder (config, weights, tokenizer)."""
    # Pinned in requirements-test.txt: a missing package must fail the suite, not skip it.
    import torch
    import transformers

    folder = tmp_path_factory.mktemp("tiny-cross-encoder")
    words = sorted({w for q, d, _ in TRAINING for w in re.findall(r"\w+|[^\w\s]", f"{q} {d}".lower())})
    (folder / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words]) + "\n")
    tokenizer = transformers.BertTokenizerFast(vocab_file=str(folder / "vocab.txt"), do_lower_case=True)
    config = transformers.BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=128,
        num_labels=1,
    )
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny matrices: more threads only add contention
    try:
        torch.manual_seed(0)
        model = transformers.BertForSequenceClassification(config)
        batch = tokenizer([q for q, _, _ in TRAINING], [d for _, d, _ in TRAINING], padding=True, return_tensors="pt")
        target = torch.tensor([t for _, _, t in TRAINING])
        optimiser = torch.optim.Adam(model.parameters(), lr=3e-3)
        model.train()
        for _ in range(600):
            loss = ((model(**batch).logits.squeeze(-1) - target) ** 2).mean()
            if loss.item() < 0.05:
                break
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
        assert loss.item() < 0.05, f"the tiny model did not fit its training pairs (loss {loss.item():.3f})"
    finally:
        torch.set_num_threads(threads)
    model.eval()
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def local_config(path, **more):
    return {
        "rerank_api": "local",
        "rerank_local_model": str(path),
        "rerank_local_max_length": 64,
        "rerank_local_device": "cpu",
        "rerank_cache": False,
        "rerank_timeout": 60,
        **more,
    }


@pytest.fixture
def fresh_local():
    """The plugin's loaded models (as unit tests import it) dropped before and after."""
    from helpers.scoring.scorers import local

    local.forget()
    yield local
    local.forget()


@pytest.fixture
def watched(monkeypatch):
    """sentence_transformers.CrossEncoder wrapped: records each construction's thread and
    the batch size of every forward pass."""
    import sentence_transformers as st

    seen = {"threads": [], "instances": [], "batches": []}
    real = st.CrossEncoder

    class WatchedCrossEncoder(real):
        def __init__(self, *args, **kwargs):
            seen["threads"].append(threading.current_thread())
            super().__init__(*args, **kwargs)
            seen["instances"].append(self)
            self.model.register_forward_hook(
                lambda module, args, kwargs_, output: seen["batches"].append(output.logits.shape[0]), with_kwargs=True
            )

    monkeypatch.setattr(st, "CrossEncoder", WatchedCrossEncoder)
    return seen


def _expected_ranking(path, query, documents):
    from sentence_transformers import CrossEncoder

    scores = CrossEncoder(str(path), max_length=64, device="cpu").predict(
        [(query, d) for d in documents], show_progress_bar=False
    )
    return sorted(((i, float(s)) for i, s in enumerate(scores)), key=lambda p: (-p[1], p[0]))


# --- through the public API -------------------------------------------------------------
def test_rerank_scores_with_the_local_model_in_batches_loaded_once_off_the_loop(tiny_model, fresh_local, watched):
    from helpers import reranker
    from helpers.scoring import own_loop

    config = local_config(tiny_model, rerank_local_batch_size=2)
    documents = MEMORIES[:5]
    ranking = reranker.rerank(QUESTION, documents, config=config)
    assert ranking is not None
    expected = _expected_ranking(tiny_model, QUESTION, documents)  # built after: not counted above
    assert [i for i, _ in ranking] == [i for i, _ in expected]
    assert [s for _, s in ranking] == pytest.approx([s for _, s in expected], abs=1e-5)
    assert ranking[0][0] == documents.index(ANSWER)
    # One load, in the loader's own thread: neither the sync API's loop nor the caller's.
    assert len(watched["threads"]) == 2  # the plugin's load, and _expected_ranking's
    load_thread = watched["threads"][0]
    assert load_thread.name == "a0_reranker-load"
    assert load_thread is not own_loop.thread() and load_thread is not threading.main_thread()
    model = watched["instances"][0]
    assert model.max_length == 64 and model._target_device.type == "cpu"
    # The probe's 3 documents and then the 5 in batches of 2.
    assert watched["batches"][:5] == [2, 1, 2, 2, 1]
    # A second call reuses the loaded model (and the cached probe verdict).
    before = len(watched["batches"])
    assert reranker.rerank(QUESTION, documents[:3], config=config) is not None
    assert len(watched["threads"]) == 2
    assert watched["batches"][before:] == [2, 1]


def test_arerank_on_a_running_loop_never_loads_on_it(tiny_model, fresh_local, watched):
    from helpers import reranker

    async def main():
        loop_thread = threading.current_thread()
        ticks = 0

        async def ticker():
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0)

        task = asyncio.create_task(ticker())
        ranking = await reranker.arerank(QUESTION, MEMORIES, config=local_config(tiny_model))
        task.cancel()
        assert ranking[0][0] == MEMORIES.index(ANSWER)
        assert watched["threads"] and all(t is not loop_thread for t in watched["threads"])
        assert ticks > 0  # the loop kept running while the model loaded and scored

    asyncio.run(main())


def test_calls_waiting_for_the_model_leave_the_loops_default_executor_to_the_host(tiny_model, fresh_local, monkeypatch):
    """The host embeds in the loop's default executor (LangChain's aembed_query): calls
    queued on a busy model must not hold its threads. Found with the real L-12 model: a
    calibration's calls waiting on the model's lock starved the recall's own embedding
    until the host cancelled the recall."""
    from helpers.settings import Settings

    settings = Settings.from_mapping(local_config(tiny_model))
    release = threading.Event()
    real = fresh_local._predict

    def held(loaded, *args):
        release.wait(30)  # the model busy until the host's own work has run
        return real(loaded, *args)

    monkeypatch.setattr(fresh_local, "_predict", held)

    async def main():
        loop = asyncio.get_running_loop()
        await fresh_local.model(settings, 60)
        calls = [asyncio.create_task(fresh_local.score(settings, QUESTION, MEMORIES, 60)) for _ in range(12)]
        await asyncio.sleep(0.05)
        # More calls wait for the model than the default executor has threads; the host's
        # embedding still gets one.
        host_work = await asyncio.wait_for(loop.run_in_executor(None, lambda: "embedded"), 20)
        release.set()
        scores = await asyncio.gather(*calls)
        return host_work, scores

    host_work, scores = asyncio.run(main())
    assert host_work == "embedded"
    assert len(scores) == 12 and all(s == scores[0] for s in scores)


def test_a_call_given_up_on_stops_at_its_next_batch_and_frees_the_model(tiny_model, fresh_local, monkeypatch):
    """A forward pass cannot be stopped, but a call whose caller stopped waiting scores no
    more batches: the next call does not wait behind the rest of its pool (with the real
    L-12 through the recall, one timed-out search made the following ones time out too)."""
    from helpers.errors import DeadlineExceeded
    from helpers.settings import Settings

    settings = Settings.from_mapping(local_config(tiny_model, rerank_local_batch_size=1))
    documents = [f"{m} ({i})" for i in range(20) for m in MEMORIES[:4]]  # 80 pairs, one per batch

    async def main():
        loaded = await fresh_local.model(settings, 60)
        batches = []

        def slow(module, args):  # at least 50 ms a forward pass, on any machine
            batches.append(1)
            threading.Event().wait(0.05)

        hook = loaded.model.model.register_forward_pre_hook(slow)
        try:
            with pytest.raises(DeadlineExceeded):
                await fresh_local.score(settings, QUESTION, documents, 0.3)
            await asyncio.wrap_future(loaded.worker.submit(lambda: None))  # the model's worker is free again
            stopped_after = len(batches)
            assert stopped_after < len(documents)  # the rest of the pool was not scored
            scores = await fresh_local.score(settings, QUESTION, MEMORIES, 60)
            assert len(scores) == len(MEMORIES) and len(batches) == stopped_after + len(MEMORIES)
        finally:
            hook.remove()

    asyncio.run(main())


def test_pairs_are_scored_shortest_first_in_input_order(tiny_model, fresh_local):
    """A batch is padded to its longest pair: short memories go together, so one long memory
    does not make a whole batch cost as much as it. The scores still come in input order."""
    from helpers.settings import Settings

    settings = Settings.from_mapping(local_config(tiny_model, rerank_local_batch_size=2))
    long_one = " ".join(MEMORIES)  # several memories' words: many more tokens than one
    documents = [long_one if i % 2 else MEMORIES[i // 2] for i in range(8)]  # short, long, short, long ...

    async def main():
        loaded = await fresh_local.model(settings, 60)
        padded = []
        hook = loaded.model.model.register_forward_pre_hook(
            lambda module, args, kwargs: padded.append(kwargs["input_ids"].shape[1]), with_kwargs=True
        )
        try:
            scores = await fresh_local.score(settings, QUESTION, documents, 60)
        finally:
            hook.remove()
        return padded, scores

    padded, scores = asyncio.run(main())
    assert len(padded) == 4 and padded == sorted(padded) and padded[0] < padded[-1]  # two batches of short pairs
    alone = dict(_expected_ranking(tiny_model, QUESTION, documents))  # input index -> score
    assert scores == pytest.approx([alone[i] for i in range(8)], abs=1e-5)


def test_load_model_refuses_to_block_an_event_loop(tiny_model, fresh_local):
    from helpers.settings import Settings

    settings = Settings.from_mapping(local_config(tiny_model))

    async def main():
        with pytest.raises(RuntimeError, match="blocks"):
            fresh_local.load_model(settings)

    asyncio.run(main())


def test_the_probe_reports_the_local_model(tiny_model, fresh_local):
    from helpers import reranker

    report = reranker.probe(local_config(tiny_model, rerank_redact=True))
    assert report["ok"] and report["verdict"] == "ok", report["reason"]
    assert report["scale"] == "probability"  # the model's head ends in a sigmoid
    assert report["model"] == str(tiny_model)
    assert "local cross-encoder" in report["reason"]
    assert any("redaction not needed" in n for n in report["notes"])


# --- missing pieces ---------------------------------------------------------------------
def test_without_sentence_transformers_the_probe_says_how_to_install_and_rerank_returns_none(
    tiny_model, fresh_local, monkeypatch
):
    from helpers import reranker

    monkeypatch.setitem(sys.modules, "sentence_transformers", None)  # import fails
    config = local_config(tiny_model)
    report = reranker.probe(config)
    assert report["ok"] is False and report["verdict"] == "not_configured"
    assert "pip install sentence-transformers" in report["reason"]
    assert reranker.rerank(QUESTION, MEMORIES, config=config) is None
    # Installed afterwards: recall keeps falling back for a while, Test connection retries at once.
    monkeypatch.undo()
    assert reranker.rerank(QUESTION, MEMORIES, config=config) is None
    assert reranker.probe(config)["ok"] is True
    assert reranker.rerank(QUESTION, MEMORIES, config=config)[0][0] == MEMORIES.index(ANSWER)


def test_a_missing_model_folder_is_named_in_the_probe_report(tmp_path, fresh_local):
    import sentence_transformers  # noqa: F401
    from helpers import reranker

    config = local_config(tmp_path / "no-such-model")
    report = reranker.probe(config)
    assert report["ok"] is False and report["verdict"] == "not_configured"
    assert f"the local model folder {tmp_path / 'no-such-model'} does not exist" in report["reason"]
    assert "rerank_local_model" in report["reason"]
    assert reranker.rerank(QUESTION, MEMORIES, config=config) is None


def test_a_model_that_is_not_a_cross_encoder_is_reported(tmp_path, fresh_local):
    import sentence_transformers  # noqa: F401
    from helpers import reranker

    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "config.json").write_text("{not json")
    report = reranker.probe(local_config(tmp_path / "broken"))
    assert report["verdict"] == "not_configured"
    assert "cannot load the local model" in report["reason"]


# --- through the stand-in host ----------------------------------------------------------
async def _store(host):
    defaults = yaml.safe_load((host.root / "plugins" / "_memory" / "default_config.yaml").read_text())
    host.set_config({**defaults, "memory_recall_similarity_threshold": 0.0}, plugin="_memory")
    agent = host.agent()
    memory = await host.memory(agent)
    await host.insert(memory, MEMORIES)
    return agent, memory


async def _unwrapped(host, agent):
    host.toggle(False)
    try:
        return await host.recall(agent, QUESTION, "")
    finally:
        host.toggle(True)


def test_warm_up_at_start_then_recall_with_the_local_model(host, tiny_model, watched, monkeypatch):
    # The tiny model was trained on a handful of pairs: it earns no say on the calibration set
    # (its words: tests/test_calibration.py). Here its order is what is pinned, so it gets one.
    monkeypatch.setattr(host.import_plugin("helpers.scoring.calibration"), "say_for", lambda mrr, embedder: "full")

    async def main():
        agent, memory = await _store(host)
        host.toggle(True)
        expected_host = await _unwrapped(host, agent)
        assert expected_host["memories"][0].page_content != ANSWER
        host.set_config(local_config(tiny_model))
        host.init_a0()  # wraps, and warms the model in the background
        for thread in [t for t in threading.enumerate() if t.name == "a0_reranker-warm"]:
            thread.join(timeout=120)
        assert [t.name for t in watched["threads"]] == ["a0_reranker-load"]
        detect, settings_mod = host.import_plugin("helpers.scoring.probing"), host.import_plugin("helpers.settings")
        scorers = host.import_plugin("helpers.scoring.scorers")
        assert detect.cached(scorers.choose(settings_mod.Settings.from_mapping(local_config(tiny_model)))) is not None
        result = await host.recall(agent, QUESTION, "")
        assert result["error"] is None
        assert result["memories"][0].page_content == ANSWER
        assert len(watched["threads"]) == 1  # warmed once, used as it was
        stats = host.import_plugin("helpers.recall.wrapper").STATS.snapshot()["totals"]
        assert stats.get("reranked") == 1 and not stats.get("fallback")

    host.run(main())


def test_on_the_cpu_the_model_reads_the_message_and_the_newest_turns_that_fit_400_characters(
    host, tiny_model, monkeypatch
):
    """A long chat: the host's query holds 10,000 characters of it, rerank_max_query_chars
    lets 2,000 through, and the model on the CPU reads the message and as much of the
    newest conversation as fits 400 (local.CPU_QUERY_CHARS), as its relevance and its time
    were measured."""
    local = host.import_plugin("helpers.scoring.scorers.local")
    read = []
    predict = local._predict
    monkeypatch.setattr(
        local, "_predict", lambda loaded, s, query, *rest: read.append(query) or predict(loaded, s, query, *rest)
    )
    history = "\n".join(f"user: turn {i} about the garden and the backup schedule" for i in range(300))

    async def main():
        agent, memory = await _store(host)
        host.import_plugin("helpers.recall.wrapper").ensure_wrapped()
        host.toggle(True)
        host.set_config(local_config(tiny_model))
        host.import_plugin("helpers.settings_cache").forget()
        result = await host.recall(agent, QUESTION, history)
        assert result["error"] is None
        pools = [q for q in read if q.startswith(QUESTION)]
        assert pools and all(len(q) <= local.CPU_QUERY_CHARS for q in pools)
        assert all("turn 299" in q and "turn 200" not in q for q in pools)  # the newest turns, as many as fit
        assert max(len(q) for q in pools) > local.CPU_QUERY_CHARS - 60  # filled, not cut to the message

    host.run(main())


def test_recall_without_sentence_transformers_gets_the_no_server_order(host, tiny_model, monkeypatch):
    async def main():
        agent, memory = await _store(host)
        recall = host.import_plugin("helpers.recall.wrapper")
        recall.ensure_wrapped()
        host.toggle(True)
        host.set_config({})  # no reranker: the built-in fusion
        host.import_plugin("helpers.settings_cache").forget()
        expected = await host.recall(agent, QUESTION, "")
        recall.STATS.forget()
        monkeypatch.setitem(sys.modules, "sentence_transformers", None)
        host.set_config(local_config(tiny_model))
        host.import_plugin("helpers.settings_cache").forget()
        got = await host.recall(agent, QUESTION, "")
        assert got["error"] is None
        assert [id(d) for d in got["memories"]] == [id(d) for d in expected["memories"]]
        stats = recall.STATS.snapshot()
        assert stats["totals"].get("reranker_unavailable") == 1 and not stats["totals"].get("fallback")
        assert "pip install sentence-transformers" in stats["last_error"]["reason"]

    host.run(main())
