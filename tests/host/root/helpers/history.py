"""Stand-in for the parts of helpers/history.py the memory code reads: a Message whose
output_text() renders '<label>: <content>' (non-string content as JSON), and a History
of such messages. Summaries, compression and token counting are left out."""
import json
import uuid
from typing import Any, Dict, List, TypedDict, Union

MessageContent = Union[List[Any], Dict[str, Any], str]


class OutputMessage(TypedDict):
    ai: bool
    content: MessageContent


def _stringify_content(content: MessageContent) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, dict) and "raw_content" in content:
        preview = content.get("preview")
        if isinstance(preview, str) and preview:
            return preview
    return json.dumps(content, ensure_ascii=False)


def output_text(messages: list[OutputMessage], ai_label: str = "ai", human_label: str = "human") -> str:
    return "\n".join(
        f"{ai_label if m['ai'] else human_label}: {_stringify_content(m['content'])}"
        for m in messages
    )


class Message:
    def __init__(self, ai: bool, content: MessageContent, tokens: int = 0, id: str = ""):
        self.id = id or str(uuid.uuid4())
        self.ai = ai
        self.content = content
        self.summary = ""
        self.tokens = tokens

    def output(self) -> list[OutputMessage]:
        return [OutputMessage(ai=self.ai, content=self.summary or self.content)]

    def output_text(self, human_label: str = "user", ai_label: str = "ai") -> str:
        return output_text(self.output(), ai_label, human_label)


class _Text:
    """Stand-in only: pre-rendered history text (what a long chat's output_text() gives)."""

    def __init__(self, text: str):
        self.text = text

    def output_text(self, human_label: str = "user", ai_label: str = "ai") -> str:
        return self.text


class History:
    def __init__(self, agent):
        self.agent = agent
        self.counter = 0
        self.records: list[Message | _Text] = []

    def add_message(self, ai: bool, content: MessageContent, tokens: int = 0, id: str = "") -> Message:
        self.counter += 1
        message = Message(ai=ai, content=content, tokens=tokens, id=id)
        self.records.append(message)
        return message

    def add_text(self, text: str) -> None:
        """Stand-in only: append already-rendered history text."""
        if text:
            self.records.append(_Text(text))

    def new_topic(self):
        pass

    def output(self) -> list[OutputMessage]:
        return [m for r in self.records if isinstance(r, Message) for m in r.output()]

    def output_text(self, human_label: str = "user", ai_label: str = "ai") -> str:
        return "\n".join(r.output_text(human_label, ai_label) for r in self.records)
