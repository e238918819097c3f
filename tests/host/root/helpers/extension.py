"""Stand-in for helpers/extension.py: Extension base, extension-point discovery across
agent/project/usr/enabled-plugin/core folders, and the @extensible decorator."""
import inspect
import os
from abc import abstractmethod
from functools import wraps
from typing import TYPE_CHECKING, Awaitable, Type

from helpers import cache, files, modules

if TYPE_CHECKING:
    from agent import Agent

_EXTENSIONS_CACHE_AREA = "extension_folder_classes(extensions)"
_CLASSES_CACHE_AREA = "extension_classes(extensions)"


class _Unset:
    pass


_UNSET = _Unset()


class Extension:
    def __init__(self, agent: "Agent|None", **kwargs):
        self.agent: "Agent|None" = agent
        self.kwargs = kwargs

    @abstractmethod
    def execute(self, **kwargs) -> None | Awaitable[None]:
        pass


async def call_extensions_async(extension_point: str, agent: "Agent|None" = None, **kwargs):
    # nothing here catches: an extension's exception reaches the caller
    for cls in _get_extension_classes(extension_point, agent=agent):
        outcome = cls(agent=agent).execute(**kwargs)
        if isinstance(outcome, Awaitable):
            await outcome


def call_extensions_sync(extension_point: str, agent: "Agent|None" = None, **kwargs):
    for cls in _get_extension_classes(extension_point, agent=agent):
        outcome = cls(agent=agent).execute(**kwargs)
        if isinstance(outcome, Awaitable):
            if inspect.iscoroutine(outcome):
                outcome.close()
            raise ValueError(f"Extension {cls.__name__} returned awaitable in sync mode")


def _file_of(cls: type) -> str:
    # modules are loaded under their file name, so the last dotted part is the file
    return cls.__module__.split(".")[-1]


def _get_extension_classes(extension_point: str, agent: "Agent|None" = None, **kwargs) -> list[Type[Extension]]:
    from helpers import subagents

    key = cache.determine_cache_key(agent, extension_point)
    cached = cache.get(_CLASSES_CACHE_AREA, key)
    if cached is not None:
        return cached

    by_file: dict[str, Type[Extension]] = {}
    for folder in subagents.get_paths(agent, "extensions/python", extension_point):
        for cls in _get_extensions(folder):
            by_file.setdefault(_file_of(cls), cls)  # the first folder with a file name wins
    ordered = [by_file[name] for name in sorted(by_file)]
    cache.add(_CLASSES_CACHE_AREA, key, ordered)
    return ordered


def _get_extensions(folder: str) -> list[Type[Extension]]:
    folder = files.get_abs_path(folder)
    cached = cache.get(_EXTENSIONS_CACHE_AREA, folder)
    if cached is not None:
        return cached
    if not files.exists(folder):
        return []
    classes = modules.load_classes_from_folder(folder, "*", Extension)
    cache.add(_EXTENSIONS_CACHE_AREA, folder, classes)
    return classes


def extensible(func):
    """Fire `_functions/<module path>/<qualname path>/start` before and `.../end` after
    the call, with data = {args, kwargs, result, exception} that extensions may change."""

    module_parts = [p for p in (getattr(func, "__module__", "") or "").split(".") if p]
    qual_parts = [p for p in (getattr(func, "__qualname__", "") or "").split(".")
                  if p and p != "<locals>"]
    base = os.path.join("_functions", *module_parts, *qual_parts) if module_parts and qual_parts else ""
    start_point = os.path.join(base, "start") if base else ""
    end_point = os.path.join(base, "end") if base else ""

    def find_agent(args, kwargs):
        from agent import Agent

        for candidate in [kwargs.get("agent"), *args]:
            if isinstance(candidate, Agent) and getattr(candidate, "__dict__", None):
                return candidate
        return None

    def outcome(data):
        if isinstance(data.get("exception"), BaseException):
            raise data["exception"]
        return None if data.get("result") is _UNSET else data.get("result")

    def call_args(data):
        args = data.get("args")
        kwargs = data.get("kwargs")
        return (args if isinstance(args, tuple) else (args,)), (kwargs if isinstance(kwargs, dict) else {})

    if inspect.iscoroutinefunction(func):
        @wraps(func)
        async def run_async(*args, **kwargs):
            if not base:
                return await func(*args, **kwargs)
            agent = find_agent(args, kwargs)
            data = {"args": args, "kwargs": kwargs, "result": _UNSET, "exception": None}
            await call_extensions_async(start_point, agent=agent, data=data)
            if isinstance(data["exception"], BaseException):
                raise data["exception"]
            if data["result"] is _UNSET:
                a, k = call_args(data)
                try:
                    data["result"] = await func(*a, **k)
                except Exception as e:
                    data["exception"] = e
            await call_extensions_async(end_point, agent=agent, data=data)
            return outcome(data)

        return run_async

    @wraps(func)
    def run_sync(*args, **kwargs):
        if not base:
            return func(*args, **kwargs)
        agent = find_agent(args, kwargs)
        data = {"args": args, "kwargs": kwargs, "result": _UNSET, "exception": None}
        call_extensions_sync(start_point, agent=agent, data=data)
        if isinstance(data["exception"], BaseException):
            raise data["exception"]
        if data["result"] is _UNSET:
            a, k = call_args(data)
            try:
                data["result"] = func(*a, **k)
            except Exception as e:
                data["exception"] = e
        call_extensions_sync(end_point, agent=agent, data=data)
        return outcome(data)

    return run_sync
