"""The relevance bench's knowledge preload (bench/relevance_corpus/knowledge.py): our
stand-in Agent Zero knowledge files go into the bench's store through the stand-in host's
own Memory.preload_knowledge - area main, the host's metadata, the host's chunks - and in
about as many chunks as the real host's files give (10 at the researched commit)."""

import asyncio
from pathlib import Path

import pytest

from bench.relevance_corpus import knowledge

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

run = asyncio.run
REAL_CHUNKS = 10  # the real knowledge/ tree, split by TextLoader.load_and_split (see the tree's README)
OUR_FILES = {
    "architecture.md",
    "capabilities.md",
    "configuration.md",
    "identity.md",
    "setup-and-deployment.md",
    "tool_call_reference_examples.md",
}


def _preloaded(host, knowledge_dir=None):
    async def go():
        agent = host.agent()
        memory = await host.memory(agent)
        await host.insert(memory, ["grafana on atlas listens on port 3000"], area="main")
        count = await knowledge.preload(host, agent, memory, knowledge_dir)
        return count, list(memory.db.get_all_docs().values())

    return run(go())


def test_our_knowledge_tree_goes_in_as_the_hosts_chunks_in_area_main(host):
    count, docs = _preloaded(host)
    chunks = [d for d in docs if knowledge.is_knowledge(d)]
    assert count == len(chunks)
    assert abs(count - REAL_CHUNKS) <= 2
    assert {d.metadata["source_file"] for d in chunks} == OUR_FILES  # the README is not knowledge
    assert all(len(d.page_content) <= 4000 for d in chunks)
    for doc in chunks:
        meta = doc.metadata
        assert meta["area"] == "main" and meta["file_type"] == "md" and meta["import_timestamp"] is None
        assert meta["source"] == meta["source_path"]
        assert Path(meta["source_path"]).is_relative_to(host.root / "knowledge" / "main")
        assert meta["id"] and meta["timestamp"]
    memories = [d for d in docs if not knowledge.is_knowledge(d)]
    assert [d.page_content for d in memories] == ["grafana on atlas listens on port 3000"]


def test_a_long_file_of_ours_is_split_the_way_the_host_splits_it(host):
    _, docs = _preloaded(host)
    parts = sorted((d.page_content for d in docs if d.metadata.get("source_file") == "architecture.md"), key=len)
    source = (knowledge.OUR_TREE / "main" / "about" / "architecture.md").read_text(encoding="utf-8")
    assert len(source) > 4000 and len(parts) == 2
    assert parts[-1].startswith("# Agent Zero")  # the first chunk starts the file


def test_another_knowledge_tree_replaces_ours_with_the_hosts_area_rules(host, tmp_path):
    tree = tmp_path / "checkout" / "knowledge"
    (tree / "main").mkdir(parents=True)
    (tree / "solutions").mkdir()
    (tree / "main" / "ports.md").write_text("grafana's default port is 3000")
    (tree / "solutions" / "restart.md").write_text("restart the container after changing the port")
    (tree / "README.md").write_text("a file in another tree's root is knowledge too, as in the host")
    (tree / ".gitkeep").write_text("")

    count, docs = _preloaded(host, tree)
    areas = {d.metadata["source_file"]: d.metadata["area"] for d in docs if knowledge.is_knowledge(d)}
    assert count == 3
    assert areas == {"ports.md": "main", "restart.md": "solutions", "README.md": "main"}


def test_is_knowledge_wants_the_hosts_flag_itself():
    from langchain_core.documents import Document

    assert knowledge.is_knowledge(Document(page_content="x", metadata={"knowledge_source": True}))
    for meta in ({}, {"knowledge_source": "True"}, {"knowledge_source": 1}, {"knowledge_source": False}):
        assert not knowledge.is_knowledge(Document(page_content="x", metadata=meta))


def test_a_missing_knowledge_dir_is_named_in_the_error(host, tmp_path):
    with pytest.raises(ValueError, match="knowledge_dir: .*nowhere"):
        _preloaded(host, tmp_path / "nowhere")
