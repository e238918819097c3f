"""The host's own recall options, with a scripted utility model in the stand-in host:
``memory_recall_query_prep`` (the utility model writes the search query) and
``memory_recall_post_filter`` (the utility model picks from the memories found). The plugin
composes with both: the model's query is the host query it searches with, beside the
user's own message; the post-filter is handed the plugin's order, memories_max_search and
solutions_max_search documents of it."""

import asyncio
import re

from tests.host.recall import QUESTION, SOLUTIONS, spy_searches, set_memory_config, store

LLM_QUERY = "grafana dashboard port on the atlas server"
HISTORY = [
    ("user", "we talked about the garden and recipes for a while"),
    ("ai", '{"tool_name": "response", "tool_args": {"text": "yes, and the lisbon timezone"}}'),
]


class ScriptedModel:
    """The utility model: answers the query-prep prompt with LLM_QUERY and the post-filter
    prompt with ``picks``; remembers every prompt it was given."""

    def __init__(self, picks=(1, 0, 13)):
        self.picks, self.calls = list(picks), []

    def __call__(self, system: str, message: str) -> str:
        self.calls.append((system, message))
        if "## History" in message and "## Memories" in message:  # memory.memories_filter.msg.md
            return str(self.picks)
        return LLM_QUERY


def test_the_utility_models_query_is_the_host_query_and_the_message_is_searched_too(host):
    async def main():
        set_memory_config(host, memory_recall_similarity_threshold=0.0, memory_recall_query_prep=True)
        model = ScriptedModel()
        _, memory = await store(host)  # the agents share the default memory subdir
        agent = host.agent(utility_model=model)
        host.import_plugin("helpers.recall.wrapper").ensure_wrapped()
        host.toggle(True)
        host.set_config({})
        seen = spy_searches(host, memory)
        result = await host.recall(agent, QUESTION, HISTORY)
        assert result["error"] is None and result["memories"]
        assert len(model.calls) == 1  # the query prep; no post-filter
        assert set(seen) == {
            LLM_QUERY,
            QUESTION,
            f"{QUESTION}\n\nwe talked about the garden and recipes for a while\nyes, and the lisbon timezone",
        }
        assert len(seen) == 3  # each embedded once for both searches
        stats = host.import_plugin("helpers.recall.wrapper").STATS.snapshot()["totals"]
        assert stats.get("fused") == 1 and not stats.get("fallback")

    asyncio.run(main())


def test_the_post_filter_gets_the_plugins_pool_in_the_plugins_order(host):
    async def main():
        set_memory_config(
            host,
            memory_recall_similarity_threshold=0.0,
            memory_recall_memories_max_result=12,
            memory_recall_solutions_max_result=8,
        )
        agent, memory = await store(host)
        await host.insert(memory, SOLUTIONS, area="solutions")
        host.import_plugin("helpers.recall.wrapper").ensure_wrapped()
        host.toggle(True)
        host.set_config({})
        # The plugin's own order, all of it (max_result = max_search): what the filter must see.
        plain = await host.recall(agent, QUESTION, HISTORY)
        assert len(plain["memories"]) == 12 and len(plain["solutions"]) == 8

        set_memory_config(host, memory_recall_similarity_threshold=0.0, memory_recall_post_filter=True)
        model = ScriptedModel(picks=[1, 0, 13])
        agent = host.agent(utility_model=model)
        result = await host.recall(agent, QUESTION, HISTORY)
        assert result["error"] is None
        ((_, prompt),) = model.calls
        listed = [int(i) for i in re.findall(r"(\d+): '", prompt)]
        assert listed == list(range(20))  # 12 memories + 8 solutions, numbered as the host does
        shown = [d.page_content for d in plain["memories"] + plain["solutions"]]
        positions = [prompt.index(repr(text)) for text in shown]
        assert positions == sorted(positions)  # in the plugin's order
        # The host keeps the filter's picks, in the filter's order.
        assert [d.page_content for d in result["memories"]] == [shown[1], shown[0]]
        assert [d.page_content for d in result["solutions"]] == [shown[13]]

    asyncio.run(main())
