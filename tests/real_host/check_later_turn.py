"""A later turn in the host's real history format: greeting, user message, a tool call, its
result, the agent's answer, a second user message. The plugin's conversation reader must keep
what the user and the agent said, and the recall must still find the answer.

Run by run.sh: python check_later_turn.py AGENT_ZERO_COPY REPORT_DIR
"""

from __future__ import annotations

import json

import host_session as hs

session = hs.open_host()
check = session.check
TURN = hs.STORE["later_turn"]


def tool_call(thought: str, headline: str, tool_name: str, tool_args: dict) -> str:
    # the JSON an Agent Zero agent answers with
    return json.dumps(
        {"thoughts": [thought], "headline": headline, "tool_name": tool_name, "tool_args": tool_args}, indent=4
    )


async def main():
    import initialize
    from agent import AgentContext, UserMessage

    hs.enable_and_install_plugin()
    from plugins._memory.helpers.memory import Memory

    agent = AgentContext(config=initialize.initialize_agent()).agent0
    db = await Memory.get(agent)
    await hs.fill_store(db, solutions=False)
    agent.hist_add_user_message(UserMessage(message=TURN["first_message"]))
    agent.loop_data = hs.new_loop_data(agent)
    agent.hist_add_ai_response(tool_call("check memory", "Looking up", "memory_load", {"query": "grafana atlas"}))
    agent.hist_add_tool_result("memory_load", TURN["tool_result"])
    agent.hist_add_ai_response(tool_call("answer", "Answer", "response", {"text": TURN["answer"]}))
    agent.hist_add_user_message(UserMessage(message=TURN["second_message"]))
    loop_data = hs.new_loop_data(agent)
    agent.loop_data = loop_data

    from usr.plugins.a0_reranker.helpers.recall import conversation

    history = agent.history.output_text()[-10000:]  # the host's memory_recall_history_len
    rendered = loop_data.user_message.output_text()
    check(
        "history ends with the rendered user message (wrapper's slicing assumption)",
        history.endswith(rendered),
        rendered,
    )
    before = history[: -len(rendered)].rstrip() if history.endswith(rendered) else history
    turns = conversation.turns(before)
    session.results["turns"] = [(t.role, t.text[:100]) for t in turns]
    check(
        "conversation reader: user, agent answer, no greeting/tool output",
        [t.role for t in turns] == ["user", "agent"] and TURN["answer"] in turns[-1].text,
        session.results["turns"],
    )
    check(
        "user_message() reads the real rendered message",
        conversation.user_message(rendered) == TURN["second_message"],
        conversation.user_message(rendered),
    )
    session.results["recent_words"] = conversation.recent_words(before, 600)
    session.results["history_head"] = history[:700]

    kvps, _, _ = await hs.recall(agent, hs.recall_class(agent), loop_data)
    first = hs.prompt_lines(kvps)[:2]
    check(
        "later turn: recall reranked and the answer reaches the prompt",
        "reranker" in kvps and bool(first) and "port 3000" in first[0],
        {"line": kvps.get("reranker"), "first": first},
    )


if __name__ == "__main__":
    session.run(main, __file__)
