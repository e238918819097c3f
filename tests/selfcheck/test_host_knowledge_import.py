"""Self-checks of the stand-in host's knowledge import (plugins/_memory/helpers/
knowledge_import.py and Memory.preload_knowledge): a knowledge file reaches the store as
the host's LangChain chunks (TextLoader + load_and_split: at most 4,000 characters each)
with the host's metadata and the area of its folder, and re-imports follow the checksums
the way the host's do."""

import asyncio
import json

import pytest


pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

run = asyncio.run
HOST_KEYS = {
    "source",
    "source_file",
    "source_path",
    "file_type",
    "knowledge_source",
    "import_timestamp",
    "area",
    "id",
    "timestamp",
}


def _paragraphs(topic: str, n: int) -> list[str]:
    return [
        f"## {topic} part {i}\n\n" + " ".join(f"{topic} sentence {i}.{j} about the homelab." for j in range(8))
        for i in range(n)
    ]


def _knowledge(host, rel: str, text: str):
    path = host.root / "knowledge" / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


async def _preload(host, memory):
    await memory.preload_knowledge(None, ["default"], memory.memory_subdir)
    return list(memory.db.get_all_docs().values())


def test_a_10_kb_markdown_file_becomes_host_sized_chunks_with_the_hosts_metadata_and_area(host):
    paragraphs = _paragraphs("grafana", 29)
    text = "# Grafana notes\n\n" + "\n\n".join(paragraphs) + "\n"
    assert 9_500 <= len(text) <= 11_000
    path = _knowledge(host, "main/about/grafana.md", text)

    async def go():
        return await _preload(host, await host.memory())

    docs = run(go())
    assert len(docs) == 3  # ceil(10 KB / 4,000), split at paragraph breaks
    assert all(len(d.page_content) <= 4000 for d in docs)
    assert all(p in "".join(d.page_content for d in docs) for p in paragraphs)  # nothing lost at a split
    for doc in docs:
        assert set(doc.metadata) == HOST_KEYS
        assert doc.metadata["source"] == doc.metadata["source_path"] == str(path)
        assert doc.metadata["source_file"] == "grafana.md" and doc.metadata["file_type"] == "md"
        assert doc.metadata["knowledge_source"] is True and doc.metadata["import_timestamp"] is None
        assert doc.metadata["area"] == "main"


def test_each_knowledge_folder_imports_into_its_own_area_and_the_root_into_main(host):
    _knowledge(host, "top.md", "a file in the knowledge root")
    _knowledge(host, "fragments/deep/piece.txt", "a nested fragments file")
    _knowledge(host, "solutions/fix.md", "a solutions file")
    _knowledge(host, "main/skip.pdf", "not a text file: the stand-in imports .md and .txt only")

    async def go():
        return await _preload(host, await host.memory())

    areas = {d.metadata["source_file"]: d.metadata["area"] for d in run(go())}
    assert areas == {"top.md": "main", "piece.txt": "fragments", "fix.md": "solutions"}


def test_a_reimport_keeps_unchanged_files_and_replaces_the_chunks_of_changed_and_removed_ones(host):
    keep = _knowledge(host, "main/keep.md", "unchanged knowledge")
    edit = _knowledge(host, "main/edit.md", "\n\n".join(_paragraphs("before", 30)))
    gone = _knowledge(host, "main/gone.md", "soon removed")

    async def go():
        memory = await host.memory()
        first = {d.metadata["id"]: d.metadata["source_file"] for d in await _preload(host, memory)}
        edit.write_text("edited to one short chunk", encoding="utf-8")
        gone.unlink()
        second = {d.metadata["id"]: (d.metadata["source_file"], d.page_content) for d in await _preload(host, memory)}
        return first, second

    first, second = run(go())
    assert sorted(first.values()).count("edit.md") > 1
    kept_ids = {i for i, name in first.items() if name == "keep.md"}
    assert {i for i, (name, _) in second.items() if name == "keep.md"} == kept_ids  # not re-inserted
    assert sorted(text for name, text in second.values() if name == "edit.md") == ["edited to one short chunk"]
    assert not any(name == "gone.md" for name, _ in second.values())
    index = json.loads((host.root / "usr" / "memory" / "default" / "knowledge_import.json").read_text())
    assert set(index) == {str(keep), str(edit)}
    assert all(set(entry) == {"file", "checksum", "ids"} for entry in index.values())
