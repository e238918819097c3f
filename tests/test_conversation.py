"""What the searches and the reranker read of the conversation: the user's messages and the
agent's answers, out of the history text exactly as Agent Zero renders it (the greeting,
the JSON of fw.user_message.md, the model's raw JSON tool calls, tool results), never the
wrapping, tool-call JSON or the canned greeting."""

import json

from tests.servers.scoring import calibration_question_in
from tests.servers import start

GREETING_WORDS = ("Hello", "Agent Zero", "greet")


def answer(text: str, thoughts: str = "The user asks something; I answer.") -> str:
    """An agent turn as the chat model writes it: a JSON call of the response tool."""
    return json.dumps(
        {"thoughts": [thoughts], "headline": "Answering", "tool_name": "response", "tool_args": {"text": text}},
        indent=4,
    )


def tool_call(name: str, **args) -> str:
    return json.dumps(
        {"thoughts": ["I will run a command."], "headline": "Running", "tool_name": name, "tool_args": args}, indent=4
    )


CHAT = [
    ("user", "My restic backup to the NAS failed last night."),
    ("ai", tool_call("code_execution_tool", runtime="terminal", code="journalctl -u restic-backup --since yesterday")),
    (
        "tool",
        "code_execution_tool",
        "Nov 30 02:00:01 atlas restic[811]: Fatal: unable to open repository: permission denied",
    ),
    ("ai", answer("The repository on the NAS refused the backup user: the share's permissions changed.")),
    ("user", "ok, I fixed the share permissions. what else should I check?"),
]


def rendered_history(host, turns) -> str:
    """The ``history`` local of the recall extension, as the host builds it."""
    agent = host.agent()
    from helpers.history import History

    agent.history = History(agent)
    host.converse(agent, turns)
    return agent.history.output_text()


def test_the_hosts_history_is_mostly_wrapping(host):
    text = rendered_history(host, CHAT)
    assert text.startswith("ai: {")  # the greeting, as the model's JSON
    assert '"user_message": "My restic backup' in text and '"tool_name": "code_execution_tool"' in text
    assert "Hello" in text and "tool_result" in text


def test_turns_keep_what_was_said_and_drop_the_rest(host):
    conversation = host.import_plugin("helpers.recall.conversation")
    turns = conversation.turns(rendered_history(host, CHAT))
    assert [(t.role, t.text) for t in turns] == [
        ("user", "My restic backup to the NAS failed last night."),
        ("agent", "The repository on the NAS refused the backup user: the share's permissions changed."),
        ("user", "ok, I fixed the share permissions. what else should I check?"),
    ]


def test_a_first_turn_has_no_conversation_before_the_message(host):
    conversation = host.import_plugin("helpers.recall.conversation")
    assert conversation.turns(rendered_history(host, [])) == []
    assert conversation.recent_words(rendered_history(host, []), 600) == ""


def test_a_window_cut_from_a_longer_chat_drops_the_half_record_it_starts_in(host):
    conversation = host.import_plugin("helpers.recall.conversation")
    full = rendered_history(host, CHAT)
    window = full[len(full) // 3 :]  # what history[-10000:] does to a long chat
    assert not window.startswith(("user:", "ai:"))
    texts = [t.text for t in conversation.turns(window)]
    assert texts[-1] == "ok, I fixed the share permissions. what else should I check?"
    assert not any("{" in t or "tool_name" in t for t in texts)


def test_summaries_warnings_and_plain_text(host):
    conversation = host.import_plugin("helpers.recall.conversation")
    history = "\n".join(
        [
            'user: {"messages_summary": "Earlier the user set up restic on atlas."}',
            'user: {"system_warning": "You have misformatted your message."}',
            "ai: I could not parse my own output, here it is in plain words.",
            'ai: {"thoughts": ["half a JSON',
            'user: {"user_intervention": "stop, use the NAS instead"}',
        ]
    )
    assert [t.text for t in conversation.turns(history)] == [
        "Earlier the user set up restic on atlas.",
        "I could not parse my own output, here it is in plain words.",
        "stop, use the NAS instead",
    ]
    plain = "User: where is the backup?\nAgent: On the NAS.\nUser: thanks"
    assert [(t.role, t.text) for t in conversation.turns(plain)] == [
        ("user", "where is the backup?"),
        ("agent", "On the NAS."),
        ("user", "thanks"),
    ]


def test_a_turn_nested_deeper_than_the_stack_is_no_conversation_not_a_crash(host):
    """A model's reply of JSON nested 100,000 deep (json.loads raises RecursionError, not
    ValueError) made every recall of that chat fall back to the host's, for as long as the
    turn stayed in its history window."""
    conversation = host.import_plugin("helpers.recall.conversation")
    deep = '{"tool_args": ' + "[" * 100_000 + "]" * 100_000 + "}"
    history = "\n".join(["user: where is the backup?", f"ai: {deep}", "user: and the other one?"])
    assert [t.text for t in conversation.turns(history)] == ["where is the backup?", "and the other one?"]
    assert conversation.user_message(f"user: {deep}") == deep  # not the host's JSON: kept as it is


def test_recent_words_are_the_newest_within_the_budget(host):
    conversation = host.import_plugin("helpers.recall.conversation")
    history = rendered_history(
        host, [("user", f"turn {i} about the garden and the backup schedule") for i in range(50)]
    )
    tail = conversation.recent_words(history, 200)
    assert len(tail) <= 200
    assert tail.endswith("turn 49 about the garden and the backup schedule")
    assert "turn 48" in tail and "turn 10 " not in tail
    long_turn = rendered_history(host, [("user", "word " * 400 + "newest")])
    cut = conversation.recent_words(long_turn, 100)
    assert cut.endswith("newest") and len(cut) <= 100 and not cut.startswith(" ")


def test_the_reranker_reads_the_message_alone_on_a_first_turn(host):
    """The real chat bug: on a first turn the reranker's query was the message followed by
    the canned greeting, as JSON."""
    from tests.host.recall import set_memory_config, set_plugin, store

    async def main():
        set_memory_config(host, memory_recall_similarity_threshold=0.0)
        agent, memory = await store(host)
        host.import_plugin("helpers.recall.wrapper").ensure_wrapped()
        host.toggle(True)
        with start("tei19") as srv:
            set_plugin(host, rerank_endpoint=srv.url)
            await host.recall(agent, "which port does grafana use on atlas", [])
            queries = {
                r.json["query"]
                for r in srv.requests
                if r.method == "POST"
                and len((r.json or {}).get("texts", ())) > 3
                and calibration_question_in(r.json["query"]) is None
            }
            assert queries == {"which port does grafana use on atlas"}
            srv.clear()
            await host.recall(agent, "and the prometheus one?", CHAT)
            query = next(
                r.json["query"] for r in srv.requests if r.method == "POST" and len((r.json or {}).get("texts", ())) > 3
            )
        assert query.startswith("and the prometheus one?\n\n")
        assert "share permissions" in query and "refused the backup user" in query
        assert not any(w in query for w in GREETING_WORDS + ("{", "tool_name", "journalctl", "Fatal"))

    host.run(main())


def test_the_hosts_format_without_a_message_holds_no_words_of_the_users(host):
    """An empty message renders as ``user: {}`` (its empty part removed): that was searched
    and sent to the reranker as the user's words, "{}"."""
    conversation = host.import_plugin("helpers.recall.conversation")
    assert conversation.user_message("user: {}") == ""
    assert conversation.user_message('user: {"attachments": ["a.png"]}') == ""
    assert conversation.user_message('user: {"user_message": "where is the backup?"}') == "where is the backup?"
    said = 'set it to {"retries": 3} please'  # JSON inside plain words: the words, as they are
    assert conversation.user_message(f"user: {said}") == said
