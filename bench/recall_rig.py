"""The stand-in Agent Zero with a memory store and the plugin wrapped in, for the benchmarks
that time a whole recall search the way the host makes it.

The recall extension's search is made from a coroutine named ``search_memories`` in a file
named ``_50_recall_memories.py``, with the extension's ``user_instruction`` and ``history``
locals: the wrapper recognises its caller by exactly that, so this is the frame it sees in
the host. ``memory`` is a real LangChain FAISS store behind the host's ``Memory`` class, with
deterministic HashEmbeddings.
"""

from __future__ import annotations

import contextlib
import json
import random
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tests.host.harness import host_root
from tests.host.recall import FILLER

_RECALL_SOURCE = """
async def search_memories(self, db, user_instruction, history, query, limit, threshold, filter):
    return await db.search_similarity_threshold(query=query, limit=limit, threshold=threshold, filter=filter)
"""
_namespace: dict[str, Any] = {}
exec(compile(_RECALL_SOURCE, str(Path(__file__).with_name("_50_recall_memories.py")), "exec"), _namespace)
search_memories = _namespace["search_memories"]

MEMORY_FILTER = "area == 'main' or area == 'fragments'"
TOPICS = FILLER  # the stand-in memories' words (tests/host/recall.py)


def memory_texts(n: int, chars: int = 300) -> list[str]:
    rng = random.Random(7)
    out = []
    for i in range(n):
        words = " ".join(rng.choice(TOPICS) for _ in range(chars // 7))
        out.append(f"memory {i}: {words}"[:chars])
    return out


class Caller:
    """Stands for the recall extension instance: the wrapper reads ``self.agent``."""

    def __init__(self, agent: Any):
        self.agent = agent


@dataclass
class Recall:
    """One recall search as the extension makes it."""

    message: str
    history: str
    limit: int = 12
    threshold: float = 0.0
    filter: str = MEMORY_FILTER

    @property
    def user_instruction(self) -> str:
        return "user: " + json.dumps({"user_message": self.message})

    @property
    def query(self) -> str:  # the host's query without query preparation
        return f"{self.user_instruction}\n\n{self.history}\n{self.user_instruction}"

    def args(self) -> tuple:
        return self.query, self.limit, self.threshold, self.filter


class Rig:
    def __init__(self, host, memory, agent):
        self.host, self.memory, self.agent = host, memory, agent
        self.Memory = type(memory)
        self.original = self.Memory.search_similarity_threshold.__wrapped__
        self.caller = Caller(agent)
        self.recall = host.import_plugin("helpers.recall.wrapper")
        self.reset_state = host.import_plugin("helpers.reranker").reset_state
        self.client = host.import_plugin("helpers.scoring.client")
        self.breaker = host.import_plugin("helpers.scoring.breaker").BREAKER
        self.cache = host.import_plugin("helpers.scoring.cache").CACHE
        self.probing = host.import_plugin("helpers.scoring.probing")

    def configure(self, **config) -> None:
        """The plugin's saved settings (cache off unless asked for), read at once."""
        self.host.set_config({"rerank_cache": False, **config})
        self.reset_state()

    async def wrapped(self, recall: Recall) -> list:
        history = f"{recall.history}\n{recall.user_instruction}"
        return await search_memories(self.caller, self.memory, recall.user_instruction, history, *recall.args())

    async def unwrapped(self, recall: Recall) -> list:
        return await self.original(self.memory, *recall.args())


@contextlib.contextmanager
def rig(memories: int = 200, chars: int = 300):
    """A temporary host with ``memories`` stored memories and the plugin wrapped and enabled."""
    with tempfile.TemporaryDirectory(prefix="a0-bench-") as tmp:
        host = host_root(tmp)
        try:
            defaults = yaml.safe_load((host.root / "plugins" / "_memory" / "default_config.yaml").read_text())
            host.set_config({**defaults, "memory_recall_similarity_threshold": 0.0}, plugin="_memory")
            assert host.import_plugin("helpers.recall.wrapper").ensure_wrapped()
            host.toggle(True)
            agent = host.agent()

            async def store():
                memory = await host.memory(agent)
                await host.insert(memory, memory_texts(memories, chars), area="main")
                return memory

            yield Rig(host, host.run(store()), agent)
        finally:
            host.close()


def sample_recall(i: int = 0) -> Recall:
    rng = random.Random(i)
    a, b = rng.choice(TOPICS), rng.choice(TOPICS)
    history = (
        f"user: we talked about {rng.choice(TOPICS)} earlier\nai: yes, and {rng.choice(TOPICS)} on the home server"
    )
    return Recall(f"which {a} settings did we use with {b} on the home server?", history)
