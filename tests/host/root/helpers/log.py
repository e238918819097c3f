"""Stand-in for helpers/log.py: an in-memory log with the host's item API."""
import threading
import time
import uuid
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Optional


@dataclass
class LogItem:
    log: "Log"
    no: int
    type: str
    heading: str = ""
    content: str = ""
    update_progress: Optional[str] = "persistent"
    kvps: Optional[OrderedDict] = None
    id: Optional[str] = None
    guid: str = ""
    timestamp: float = 0.0
    agentno: int = 0

    def __post_init__(self):
        self.guid = self.log.guid
        self.timestamp = self.timestamp or time.time()

    def update(self, type: str | None = None, heading: str | None = None,
               content: str | None = None, kvps: dict | None = None,
               update_progress: str | None = None, **kwargs):
        if self.guid == self.log.guid:
            self.log._update_item(self.no, type=type, heading=heading, content=content,
                                  kvps=kvps, update_progress=update_progress, **kwargs)

    def stream(self, heading: str | None = None, content: str | None = None, **kwargs):
        if heading is not None:
            self.update(heading=self.heading + heading)
        if content is not None:
            self.update(content=self.content + content)
        for key, value in kwargs.items():
            previous = self.kvps.get(key, "") if self.kvps else ""
            self.update(**{key: previous + value})

    def output(self) -> dict[str, Any]:
        return {"no": self.no, "id": self.id, "type": self.type, "heading": self.heading,
                "content": self.content, "kvps": self.kvps, "timestamp": self.timestamp,
                "agentno": self.agentno}


class Log:
    def __init__(self):
        self._lock = threading.RLock()
        self.context = None  # set by AgentContext
        self.guid = str(uuid.uuid4())
        self.logs: list[LogItem] = []
        self.progress = ""

    def log(self, type: str, heading: str | None = None, content: str | None = None,
            kvps: dict | None = None, update_progress: str | None = None,
            id: Optional[str] = None, **kwargs) -> LogItem:
        with self._lock:
            agentno = 0
            if self.context is not None and getattr(self.context, "streaming_agent", None):
                agentno = self.context.streaming_agent.number
            item = LogItem(log=self, no=len(self.logs), type=type, agentno=agentno)
            self.logs.append(item)
        self._update_item(item.no, type=type, heading=heading, content=content, kvps=kvps,
                          update_progress=update_progress, id=id, **kwargs)
        return item

    def _update_item(self, no: int, type: str | None = None, heading: str | None = None,
                     content: str | None = None, kvps: dict | None = None,
                     update_progress: str | None = None, id: str | None = None, **kwargs):
        item = self.logs[no]
        if id is not None:
            item.id = id
        if type is not None:
            item.type = type
        if update_progress is not None:
            item.update_progress = update_progress
        if heading is not None:
            item.heading = heading
        if content is not None:
            item.content = content
        if kvps is not None:
            item.kvps = OrderedDict(kvps)
        if kwargs:
            if item.kvps is None:
                item.kvps = OrderedDict()
            item.kvps.update(kwargs)

    def output(self, start: int | None = None, end: int | None = None):
        return [item.output() for item in self.logs[start:end]]

    def reset(self):
        self.guid = str(uuid.uuid4())
        self.logs = []
