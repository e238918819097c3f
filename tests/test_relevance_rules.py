"""The relevance rules, through a real recall in the stand-in host: a new chat is searched
with what the user said, not with the greeting; Agent Zero's own knowledge files do not
crowd the user's memories out of the prompt; the host's query takes part when its utility
model wrote it; a reranker's pick takes a place from the fused order only when its score
stands out from the pool; and in a new chat a reranker whose line between relevant and not
can be read leads where it calls its best memory relevant."""

import asyncio
import hashlib

import yaml

from tests.servers import relevance, start
from tests.servers.scoring import calibration_label

GRAFANA = "grafana on atlas listens on port 3000 behind the caddy proxy"
USER_MEMORIES = [
    GRAFANA,
    "grafana dashboards for the homelab are provisioned from a git repo on atlas",
    "atlas is the home server, a small intel nuc running proxmox",
    "the caddy proxy on atlas renews its certificates automatically",
    "prometheus on atlas keeps thirty days of metrics for grafana",
    "the user walks the dog pickle every morning before work",
    "the user prefers dark roast coffee from the place on the corner",
]
# Agent Zero's knowledge files speak the greeting's language: its words, not the user's.
KNOWLEDGE = [
    "Agent Zero is your AI assistant. In a new conversation the agent greets the user warmly and "
    "uses the response tool with proper JSON formatting: thoughts, headline, tool_name, tool_args.",
    "Agent Zero tools: the agent names a tool in its JSON response, with thoughts and a headline, "
    "and the framework executes it; the response tool answers the user. How can I help you today?",
    "Agent Zero knowledge files and settings: how to configure the memory, the knowledge folder, "
    "the agent profiles and the prompts of Agent Zero.",
]
PORT_QUESTION = "which port does grafana listen on on atlas?"
# A store of a realistic size around them: a reranker reads a pool of dozens, not of five.
TOPICS = ["backups", "the vpn", "the nas", "docker", "the router", "postgres", "the printer", "python"]
FILLER = [
    f"note {i}: on atlas the user looked at {TOPICS[i % 8]} and {TOPICS[(i * 3 + 1) % 8]} for grafana"
    for i in range(30)
]


def set_memory_config(host, **overrides):
    defaults = yaml.safe_load((host.root / "plugins" / "_memory" / "default_config.yaml").read_text())
    host.set_config({**defaults, "memory_recall_similarity_threshold": 0.0, **overrides}, plugin="_memory")


def set_plugin(host, **config):
    host.set_config({"rerank_cache": False, "rerank_fusion_threshold": 0.5, "rerank_pool_threshold": 0.5, **config})
    host.import_plugin("helpers.settings_cache").forget()


async def store_with_knowledge(host, agent=None, filler=()):
    agent = agent or host.agent()
    memory = await host.memory(agent)
    await host.insert(memory, USER_MEMORIES + list(filler), area="main")
    await host.insert(memory, KNOWLEDGE, area="main", knowledge_source=True, source_file="about.md")
    recall = host.import_plugin("helpers.recall.wrapper")
    assert recall.ensure_wrapped()
    host.toggle(True)
    return agent, memory


def texts(docs):
    return [d.page_content for d in docs]


def knowledge_in(docs):
    return [d for d in docs if d.metadata.get("knowledge_source") is True]


def test_a_new_chat_is_searched_with_the_message_and_the_greetings_knowledge_stays_out(host):
    set_memory_config(host)
    set_plugin(host)

    async def main():
        agent, memory = await store_with_knowledge(host)
        got = await host.recall(agent, PORT_QUESTION, [])  # a new chat: the greeting, then the message
        shown = got["memories"][:5]
        assert texts(shown)[0] == GRAFANA
        assert knowledge_in(shown) == []
        # what the host alone would show: its query is mostly the greeting
        host.toggle(False)
        alone = await host.recall(agent, PORT_QUESTION, [])
        assert knowledge_in(alone["memories"][:5])  # the crowding the plugin removes

    asyncio.run(main())


def test_a_question_about_agent_zero_itself_keeps_its_knowledge(host):
    set_memory_config(host)
    set_plugin(host)

    async def main():
        agent, memory = await store_with_knowledge(host)
        got = await host.recall(
            agent, "how do I configure the knowledge folder and the memory settings of agent zero?", []
        )
        assert texts(got["memories"][:1]) == [KNOWLEDGE[2]]

    asyncio.run(main())


def test_the_hosts_query_takes_part_when_its_utility_model_wrote_it(host):
    # The utility model's query names the dog; the user's message does not.
    set_memory_config(host, memory_recall_query_prep=True, memory_recall_similarity_threshold=0.7)
    set_plugin(host, rerank_fusion_threshold=0.6)

    async def main():
        agent = host.agent(utility_model=lambda system, message: "pickle morning walk dog")
        agent, memory = await store_with_knowledge(host, agent)
        got = await host.recall(agent, "remind me of my daily habit", [])
        assert USER_MEMORIES[5] in texts(got["memories"][:5])
        set_memory_config(
            host, memory_recall_query_prep=False, memory_recall_similarity_threshold=0.7
        )  # the raw query again
        got = await host.recall(agent, "remind me of my daily habit", [])
        assert USER_MEMORIES[5] not in texts(got["memories"][:5])

    asyncio.run(main())


STORED = set(USER_MEMORIES + FILLER + KNOWLEDGE)


def _scorer(boost: str | None, seed: int, boosted: float = -1.0):
    """A reranker with an opinion but no clear evidence: every memory at its own place of an
    even spread of scores well below its line between relevant and not (an arbitrary order,
    different per seed), none far from the rest; or, with ``boost``, one memory far above
    them all (at ``boosted``, in logit units: by default still below that line; at 9 the way
    a good cross-encoder scores the one that answers, called relevant)."""

    def score(query: str, document: str) -> float:
        if document not in STORED:  # the connection probe: answered like an ordinary model
            return relevance(query, document)
        if boost is not None and document == boost:
            return boosted
        place = int.from_bytes(hashlib.blake2b(f"{seed}|{document}".encode(), digest_size=4).digest(), "little")
        return -12.0 + 4.0 * place / 2**32

    return score


def test_a_weak_rerankers_picks_cannot_push_out_what_fusion_found(host):
    set_memory_config(host)

    async def main():
        agent, memory = await store_with_knowledge(host, filler=FILLER)
        set_plugin(host)
        fused = texts((await host.recall(agent, PORT_QUESTION, []))["memories"][:5])
        for seed in range(5):  # five arbitrary orders: none of their picks stands out
            with start("cohere", scorer=_scorer(None, seed)) as server:
                set_plugin(host, rerank_api="rerank", rerank_endpoint=server.url)
                got = texts((await host.recall(agent, PORT_QUESTION, []))["memories"][:5])
                assert any(len((r.json or {}).get("documents", ())) > 30 for r in server.requests)  # it judged the pool
            assert got == fused, seed

    asyncio.run(main())


def test_a_pick_that_stands_out_reaches_the_prompt_from_below_the_fused_order(host):
    set_memory_config(host)

    async def main():
        agent, memory = await store_with_knowledge(host, filler=FILLER)
        set_plugin(host)
        fused = texts((await host.recall(agent, PORT_QUESTION, []))["memories"])
        coffee = USER_MEMORIES[6]  # shares no word with the question: below the fused order's top
        assert coffee not in fused[:5]
        with start("cohere", scorer=_scorer(coffee, 0)) as server:
            set_plugin(host, rerank_api="rerank", rerank_endpoint=server.url)
            got = texts((await host.recall(agent, PORT_QUESTION, []))["memories"][:5])
        assert got[0] == coffee or got[1] == coffee  # the better of its two places: first or second
        assert fused[0] in got[:2]

    asyncio.run(main())


def _chat_line(agent) -> str:
    """The plugin's line on the chat's log item of the last recall."""
    items = [i for i in agent.context.log.logs if i.type == "util" and "found" in i.heading]
    return dict(items[-1].kvps)["reranker"]


def test_a_reranker_that_calls_its_best_memory_relevant_leads_the_order(host):
    """Where a reranker whose line between relevant and not can be read (it keeps the
    calibration's unrelated memories below the answer and calls none of them relevant) calls
    a new chat's best memory relevant, its own order leads the prompt; the host's own first
    memory keeps its place in the slots, and the chat line says whose order it was. In a
    conversation the standout rule stands."""
    set_memory_config(host)

    async def main():
        agent, memory = await store_with_knowledge(host, filler=FILLER)
        set_plugin(host)
        host.toggle(False)
        host_first = texts((await host.recall(agent, PORT_QUESTION, []))["memories"])[0]
        host.toggle(True)
        fused = texts((await host.recall(agent, PORT_QUESTION, []))["memories"])
        coffee = USER_MEMORIES[6]
        scorer = _scorer(coffee, 0, boosted=9.0)
        with start("cohere", scorer=scorer) as server:
            set_plugin(host, rerank_api="rerank", rerank_endpoint=server.url)
            got = texts((await host.recall(agent, PORT_QUESTION, []))["memories"][:5])
            line = _chat_line(agent)
            # in a conversation its query holds the conversation too: the standout rule
            conversation = [("user", "the homelab again"), ("ai", "Sure, what about it?")]
            await host.recall(agent, PORT_QUESTION, conversation)
            in_conversation = _chat_line(agent)
        assert got[0] == coffee
        others = [t for t in got if t != host_first]
        assert others == sorted(others, key=lambda t: -scorer(PORT_QUESTION, t))  # its order, not the fused one
        assert host_first in got or host_first in KNOWLEDGE  # the host's first is kept, unless Agent Zero's own
        assert got != fused[:5]
        assert host.import_plugin("helpers.vocabulary").RERANKER_LED in line
        assert (
            "reranked by" in in_conversation
            and host.import_plugin("helpers.vocabulary").RERANKER_LED not in in_conversation
        )

    asyncio.run(main())


def test_a_reranker_that_calls_everything_relevant_does_not_lead(host):
    """A reranker that ranks the calibration's answers first but calls its memories about
    something else entirely relevant too (its line says nothing, as noise's does): its
    scores of this recall are those of the one above that leads, yet the standout rule
    stands and the chat line does not say it led."""
    set_memory_config(host)
    coffee = USER_MEMORIES[6]
    leading = _scorer(coffee, 0, boosted=9.0)

    def everything_relevant(query: str, document: str) -> float:
        score = leading(query, document)
        if document in STORED or calibration_label(query, document):  # the store's, and the answers
            return score
        return max(score, 1.0)  # the calibration's other memories and the probe's: "relevant"

    async def main():
        agent, memory = await store_with_knowledge(host, filler=FILLER)
        set_plugin(host)
        fused = texts((await host.recall(agent, PORT_QUESTION, []))["memories"])
        with start("cohere", scorer=everything_relevant) as server:
            set_plugin(host, rerank_api="rerank", rerank_endpoint=server.url)
            got = texts((await host.recall(agent, PORT_QUESTION, []))["memories"][:5])
            line = _chat_line(agent)
        assert "reranked by" in line and host.import_plugin("helpers.vocabulary").RERANKER_LED not in line
        assert coffee in got[:2] and set(got) - {coffee} <= set(fused[:5])

    asyncio.run(main())


def test_a_pick_below_the_relevant_line_does_not_lead(host):
    """The same reranker scoring its pick below its own line between relevant and not: the
    pick stands out and takes its place, the fused order's first five keep the rest, and the chat line
    does not say the reranker's order led."""
    set_memory_config(host)

    async def main():
        agent, memory = await store_with_knowledge(host, filler=FILLER)
        set_plugin(host)
        fused = texts((await host.recall(agent, PORT_QUESTION, []))["memories"])
        coffee = USER_MEMORIES[6]
        with start("cohere", scorer=_scorer(coffee, 0)) as server:
            set_plugin(host, rerank_api="rerank", rerank_endpoint=server.url)
            got = texts((await host.recall(agent, PORT_QUESTION, []))["memories"][:5])
            line = _chat_line(agent)
        assert coffee in got[:2]
        assert len(set(got) - {coffee}) == 4 and set(got) - {coffee} <= set(fused[:5])  # the fused five keep the rest
        assert host.import_plugin("helpers.vocabulary").RERANKER_LED not in line

    asyncio.run(main())


def test_the_word_list_keeps_knowledge_where_the_prompt_does(host, monkeypatch):
    """One decision for both (pipeline.about_agent_zero): a message that does not name Agent
    Zero gets its knowledge chunks after the user's memories in the word list, as in the
    prompt; one that names it keeps them where they rank in both."""
    set_memory_config(host)
    set_plugin(host)
    store_search = host.import_plugin("helpers.recall.store_search")
    real, asked = store_search.search, []

    async def recording(*args, **kwargs):
        asked.append((args[-1], kwargs.get("knowledge_last")))
        return await real(*args, **kwargs)

    monkeypatch.setattr(store_search, "search", recording)
    about_it = "How does Agent Zero keep its memory?"

    async def main():
        agent, _ = await store_with_knowledge(host)
        await host.recall(agent, PORT_QUESTION, [])
        await host.recall(agent, about_it, [])

    asyncio.run(main())
    by_message = {text: flag for text, flag in asked}
    assert by_message == {PORT_QUESTION: True, about_it: False}
