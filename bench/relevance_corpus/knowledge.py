"""Agent Zero's own knowledge in the bench's store, imported the way the host imports it.

Every real memory store also holds the host's knowledge files (knowledge/main/about/*.md and
knowledge/main/tool_call_reference_examples.md), and their vocabulary is the vocabulary of the
greeting that fills a new chat's recall query, so they compete for the prompt's slots. A bench
without them flatters recall. `preload` puts a knowledge tree - by default our stand-ins in
./knowledge (see knowledge/README.md), or a real checkout's knowledge/ - where the stand-in
host's `abs_knowledge_dir("default")` looks (the root's knowledge/) and runs the host's own
`Memory.preload_knowledge`, so the area rules, chunking and metadata are the host's.
"""

from __future__ import annotations

import shutil
from pathlib import Path

OUR_TREE = Path(__file__).resolve().parent / "knowledge"
# our tree's own documentation; in the knowledge root the host would import it into area main
_NOT_KNOWLEDGE = frozenset({"README.md"})


def is_knowledge(doc) -> bool:
    """A chunk of a knowledge file (the host's flag), not a memory."""
    return doc.metadata.get("knowledge_source") is True


def _knowledge_in(memory) -> int:
    return sum(is_knowledge(d) for d in memory.db.get_all_docs().values())


def _place(tree: Path, target: Path) -> None:
    """Make `target` (the host root's knowledge/) a copy of `tree`."""
    if target.is_symlink() or target.is_file():
        target.unlink()
    elif target.exists():
        shutil.rmtree(target)

    def ignore(folder: str, names: list[str]) -> set[str]:
        return set(names) & _NOT_KNOWLEDGE if Path(folder) == OUR_TREE else set()

    shutil.copytree(tree, target, ignore=ignore)


async def preload(host, agent, memory, knowledge_dir: str | Path | None = None) -> int:
    """Import a knowledge tree into `memory` through the stand-in host's preload_knowledge,
    with the knowledge subdirs the host derives from the agent's config (the real host does
    this when Memory.get first opens a store); returns how many chunks went in."""
    from plugins._memory.helpers.memory import get_knowledge_subdirs_by_memory_subdir

    tree = Path(knowledge_dir).resolve() if knowledge_dir is not None else OUR_TREE
    if not tree.is_dir():
        raise ValueError(f"knowledge_dir: {tree} is not a directory")
    _place(tree, Path(host.root) / "knowledge")
    # the host's function appends a project's folder to the list it is given: give it a copy
    subdirs = get_knowledge_subdirs_by_memory_subdir(memory.memory_subdir, list(agent.config.knowledge_subdirs or []))
    before = _knowledge_in(memory)
    await memory.preload_knowledge(None, subdirs, memory.memory_subdir)
    return _knowledge_in(memory) - before
