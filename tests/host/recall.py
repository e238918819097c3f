"""The stand-in host set up for a recall: stored memories and solutions, the _memory plugin's
config, this plugin's config, the wrapper, and the recalls to compare against (the host's own,
the plugin's with no reranker). Shared by every test that drives a recall."""

import dataclasses
import functools
import socket

import yaml

FILLER = [
    "backup",
    "restic",
    "nginx",
    "postgres",
    "fedora",
    "thinkpad",
    "proxmox",
    "grafana",
    "prometheus",
    "docker",
    "python",
    "rust",
    "garden",
    "recipe",
    "vegetarian",
    "lisbon",
    "timezone",
    "router",
    "wireguard",
    "pihole",
]


def memory_texts(n: int = 60) -> list[str]:
    texts = []
    for i in range(n):
        a, b, c = FILLER[i % 20], FILLER[(i * 7 + 3) % 20], FILLER[(i * 11 + 5) % 20]
        texts.append(f"memory {i}: the user keeps notes on {a} and {b}, mostly about {c} on the home server")
    return texts


def set_memory_config(host, **overrides):
    """The _memory plugin's config.json, as its settings modal saves it (every key)."""
    defaults = yaml.safe_load((host.root / "plugins" / "_memory" / "default_config.yaml").read_text())
    host.set_config({**defaults, **overrides}, plugin="_memory")


def set_plugin(host, **config):
    host.set_config({"rerank_cache": False, **config})
    host.import_plugin("helpers.settings_cache").forget()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def store(host, texts=None, area="main"):
    agent = host.agent()
    memory = await host.memory(agent)
    await host.insert(memory, texts or memory_texts(), area=area)
    return agent, memory


def ids(docs):
    return [id(d) for d in docs]


def wrapped_module(host):
    recall = host.import_plugin("helpers.recall.wrapper")
    assert recall.ensure_wrapped()
    return recall


def spy_on_stage(pipeline, name, spy):
    """Put ``spy(real, memory, search)`` in the place of the search stage ``name`` (in
    pipeline.STAGES, which the pipeline runs); ``real`` is the stage's own function. Returns
    what undoes it."""
    stages = pipeline.STAGES
    real = next(stage.run for stage in stages if stage.name == name)
    pipeline.STAGES = tuple(
        dataclasses.replace(stage, run=functools.partial(spy, real)) if stage.name == name else stage
        for stage in stages
    )
    return lambda: setattr(pipeline, "STAGES", stages)


async def unwrapped_recall(host, agent, message, history):
    host.toggle(False)
    result = await host.recall(agent, message, history)
    host.toggle(True)
    return result


QUESTION = "which port does grafana use on atlas"
HISTORY = "user: we talked about the garden and recipes for a while\nai: yes, and the lisbon timezone"


SOLUTIONS = [f"solution {i}: fixed {FILLER[i]} on atlas by restarting the {FILLER[i + 5]} container" for i in range(10)]


def enabled_store(host, texts=None):
    """60 memories and 10 solutions, every one read by recall (threshold 0), the plugin
    wrapped and enabled: (agent, memory)."""
    set_memory_config(host, memory_recall_similarity_threshold=0.0)
    agent, memory = host.run(store(host, texts))
    host.run(host.insert(memory, SOLUTIONS, area="solutions"))
    wrapped_module(host)
    host.toggle(True)
    return agent, memory


async def no_server_recall(host, agent, message, history):
    """What the plugin returns with no reranker at all (the built-in fusion)."""
    set_plugin(host, rerank_endpoint="")
    return await host.recall(agent, message, history)


def spy_searches(host, memory):
    """Record every query text embedded for a search of the store (the host's or the
    plugin's), in order, with the plugin's short-lived vector memo emptied first."""
    host.import_plugin("helpers.recall.query_vectors").MEMO.forget()
    seen = []
    embedder = memory.db.embedding_function
    original = embedder.aembed_query

    async def aembed_query(text):
        seen.append(text)
        return await original(text)

    embedder.aembed_query = aembed_query
    return seen


def fused_order(host, agent):
    """The same recall with no reranker: rerank_api auto, no endpoint (built-in fusion)."""
    set_plugin(host, rerank_api="auto")
    result = host.run(host.recall(agent, QUESTION, HISTORY))
    return [d.page_content for d in result["memories"]], [d.page_content for d in result["solutions"]]


def pool_posts(srv, memory):
    """The reranking calls that read stored memories: the recall's own, not the calibration's
    (its questions are the plugin's, and under load they may come last)."""
    stored = {d.page_content for d in memory.db.docstore._dict.values()}
    return [
        r
        for r in srv.requests
        if r.method == "POST" and isinstance(r.json, dict) and r.json.get("texts") and set(r.json["texts"]) <= stored
    ]
