"""Stand-in for plugins/_memory/helpers/memory.py.

Memory and MyFaiss run on the real LangChain FAISS store (langchain_community 0.3.19,
faiss IndexFlatIP, cosine distance strategy, relevance (1 + ip) / 2). Searches go through
`self.db.asearch(..., search_type="similarity_score_threshold", filter=<simpleeval>)`,
so the 20-candidate cap of filtered FAISS searches happens exactly as in the host.

Differences from the real module, all confined to persistence: a MyFaiss created by the
test harness carries `_a0_host_in_memory = True` and is never written to disk; knowledge
preloading finds no knowledge files unless a test puts a tree in the root's knowledge/ (the
stand-in root ships none; bench/relevance_corpus/knowledge.py copies one there).
"""
import json
import logging
import os
from datetime import datetime
from enum import Enum
from typing import Any, List, Sequence

import faiss
import numpy as np
from langchain.embeddings import CacheBackedEmbeddings
from langchain.storage import InMemoryByteStore, LocalFileStore
from langchain_community.docstore.in_memory import InMemoryDocstore
from langchain_community.vectorstores import FAISS
from langchain_community.vectorstores.utils import DistanceStrategy
from langchain_core.documents import Document
from simpleeval import simple_eval

import models
from agent import Agent, AgentContext
from helpers import files, guids, plugins, projects
from helpers.log import LogItem
from helpers.print_style import PrintStyle

from . import knowledge_import

logging.getLogger("langchain_core.vectorstores.base").setLevel(logging.ERROR)


class MyFaiss(FAISS):
    """FAISS whose id lookups read the docstore dict directly (the host's override)."""

    def get_by_ids(self, ids: Sequence[str], /) -> List[Document]:
        wanted = ids if isinstance(ids, list) else [ids]
        store = self.docstore._dict  # type: ignore[attr-defined]
        return [store[i] for i in wanted if i in store]

    async def aget_by_ids(self, ids: Sequence[str], /) -> List[Document]:
        return self.get_by_ids(ids)

    def get_all_docs(self):
        return self.docstore._dict  # type: ignore[attr-defined]


class Memory:
    class Area(Enum):
        MAIN = "main"
        FRAGMENTS = "fragments"
        SOLUTIONS = "solutions"

    # class-level: one FAISS store per memory subdir, shared by every Memory wrapper
    index: dict[str, "MyFaiss"] = {}

    @staticmethod
    def _get_embedding_config(agent=None):
        from plugins._model_config.helpers.model_config import get_embedding_model_config_object

        return get_embedding_model_config_object(agent)

    @staticmethod
    async def get(agent: Agent):
        memory_subdir = get_agent_memory_subdir(agent)
        if Memory.index.get(memory_subdir) is not None:
            return Memory(db=Memory.index[memory_subdir], memory_subdir=memory_subdir)
        log_item = agent.context.log.log(type="util", heading=f"Initializing VectorDB in '/{memory_subdir}'")
        db, _created = Memory.initialize(log_item, Memory._get_embedding_config(agent), memory_subdir, False)
        Memory.index[memory_subdir] = db
        wrap = Memory(db, memory_subdir=memory_subdir)
        knowledge_subdirs = get_knowledge_subdirs_by_memory_subdir(
            memory_subdir, agent.config.knowledge_subdirs or [])
        if knowledge_subdirs:
            await wrap.preload_knowledge(log_item, knowledge_subdirs, memory_subdir)
        return wrap

    @staticmethod
    async def get_by_subdir(memory_subdir: str, log_item: LogItem | None = None,
                            preload_knowledge: bool = True):
        if not Memory.index.get(memory_subdir):
            import initialize

            agent_config = initialize.initialize_agent()
            db, _created = Memory.initialize(log_item=log_item, model_config=Memory._get_embedding_config(),
                                             memory_subdir=memory_subdir, in_memory=False)
            wrap = Memory(db, memory_subdir=memory_subdir)
            if preload_knowledge:
                knowledge_subdirs = get_knowledge_subdirs_by_memory_subdir(
                    memory_subdir, agent_config.knowledge_subdirs or [])
                if knowledge_subdirs:
                    await wrap.preload_knowledge(log_item, knowledge_subdirs, memory_subdir)
            Memory.index[memory_subdir] = db
        return Memory(db=Memory.index[memory_subdir], memory_subdir=memory_subdir)

    @staticmethod
    async def reload(agent: Agent):
        Memory.index.pop(get_agent_memory_subdir(agent), None)
        return await Memory.get(agent)

    @staticmethod
    def create_db(embeddings_model, embeddings_model_id: str, in_memory: bool = True) -> "MyFaiss":
        """Stand-in helper (not in the host): an empty store built the way initialize()
        builds one, with a cache-backed embedder."""
        store = InMemoryByteStore() if in_memory else LocalFileStore(files.get_abs_path("tmp/memory/embeddings"))
        embedder = CacheBackedEmbeddings.from_bytes_store(embeddings_model, store, namespace=embeddings_model_id)
        return MyFaiss(
            embedding_function=embedder,
            index=faiss.IndexFlatIP(len(embedder.embed_query("example"))),
            docstore=InMemoryDocstore(),
            index_to_docstore_id={},
            distance_strategy=DistanceStrategy.COSINE,
            relevance_score_fn=Memory._cosine_normalizer,
        )

    @staticmethod
    def initialize(log_item: LogItem | None, model_config: models.ModelConfig, memory_subdir: str,
                   in_memory=False) -> tuple[MyFaiss, bool]:
        """Load usr/memory/<subdir> (re-indexing if the embedding model changed) or create
        and save an empty DB. in_memory only affects the embeddings cache, as in the host."""
        PrintStyle.standard("Initializing VectorDB...")
        if log_item:
            log_item.stream(progress="\nInitializing VectorDB")

        db_dir = abs_db_dir(memory_subdir)
        os.makedirs(db_dir, exist_ok=True)
        if in_memory:
            store = InMemoryByteStore()
        else:
            em_dir = files.get_abs_path("tmp/memory/embeddings")
            os.makedirs(em_dir, exist_ok=True)
            store = LocalFileStore(em_dir)
        embeddings_model = models.get_embedding_model(
            model_config.provider, model_config.name, **model_config.build_kwargs())
        model_id = files.safe_file_name(model_config.provider + "_" + model_config.name)
        embedder = CacheBackedEmbeddings.from_bytes_store(embeddings_model, store, namespace=model_id)

        db: MyFaiss | None = None
        carried_docs: dict[str, Document] | None = None
        if files.exists(db_dir, "index.faiss"):
            db = MyFaiss.load_local(folder_path=db_dir, embeddings=embedder,
                                    allow_dangerous_deserialization=True,
                                    distance_strategy=DistanceStrategy.COSINE,
                                    relevance_score_fn=Memory._cosine_normalizer)
            meta_path = files.get_abs_path(db_dir, "embedding.json")
            same_model = False
            if files.exists(meta_path):
                recorded = json.loads(files.read_file(meta_path))
                same_model = (recorded.get("model_provider") == model_config.provider
                              and recorded.get("model_name") == model_config.name)
            if not same_model:
                carried_docs = db.get_all_docs()
                db = None

        if db is not None:
            return db, False

        db = MyFaiss(
            embedding_function=embedder,
            index=faiss.IndexFlatIP(len(embedder.embed_query("example"))),
            docstore=InMemoryDocstore(),
            index_to_docstore_id={},
            distance_strategy=DistanceStrategy.COSINE,
            relevance_score_fn=Memory._cosine_normalizer,
        )
        if carried_docs:
            PrintStyle.standard("Indexing memories...")
            db.add_documents(documents=list(carried_docs.values()), ids=list(carried_docs.keys()))
        Memory._save_db_file(db, memory_subdir)
        files.write_file(files.get_abs_path(db_dir, "embedding.json"),
                         json.dumps({"model_provider": model_config.provider,
                                     "model_name": model_config.name}))
        return db, True

    def __init__(self, db: MyFaiss, memory_subdir: str):
        self.db = db
        self.memory_subdir = memory_subdir

    async def preload_knowledge(self, log_item: LogItem | None, kn_dirs: list[str], memory_subdir: str):
        if log_item:
            log_item.update(heading="Preloading knowledge...")
        db_dir = abs_db_dir(memory_subdir)
        os.makedirs(db_dir, exist_ok=True)
        index_path = files.get_abs_path(db_dir, "knowledge_import.json")
        index: dict[str, knowledge_import.KnowledgeImport] = {}
        if os.path.exists(index_path):
            with open(index_path) as f:
                index = json.load(f)
        index = self._preload_knowledge_folders(log_item, kn_dirs, index)
        for name, entry in index.items():
            if entry["state"] in ("changed", "removed") and entry.get("ids"):
                await self.delete_documents_by_ids(entry["ids"])
            if entry["state"] == "changed":
                entry["ids"] = await self.insert_documents(entry["documents"])
        index = {k: v for k, v in index.items() if v["state"] != "removed"}
        for entry in index.values():
            entry.pop("documents", None)  # type: ignore[misc]
            entry.pop("state", None)  # type: ignore[misc]
        with open(index_path, "w") as f:
            json.dump(index, f)

    def _preload_knowledge_folders(self, log_item: LogItem | None, kn_dirs: list[str],
                                   index: dict[str, knowledge_import.KnowledgeImport]):
        for kn_dir in kn_dirs:
            index = knowledge_import.load_knowledge(log_item, abs_knowledge_dir(kn_dir), index,
                                                    {"area": Memory.Area.MAIN.value},
                                                    filename_pattern="*", recursive=False)
            for area in Memory.Area:
                index = knowledge_import.load_knowledge(log_item, abs_knowledge_dir(kn_dir, area.value),
                                                        index, {"area": area.value}, recursive=True)
        return index

    def get_document_by_id(self, id: str) -> Document | None:
        return self.db.get_by_ids(id)[0]

    async def search_similarity_threshold(self, query: str, limit: int, threshold: float, filter: str = ""):
        """At most `limit` docstore Documents with relevance >= threshold, best first.
        With a filter, FAISS looks at only fetch_k=20 nearest vectors (LangChain default)."""
        comparator = Memory._get_comparator(filter) if filter else None
        return await self.db.asearch(
            query,
            search_type="similarity_score_threshold",
            k=limit,
            score_threshold=threshold,
            filter=comparator,
        )

    async def delete_documents_by_query(self, query: str, threshold: float, filter: str = ""):
        """Deletes everything the search returns, in passes of 100 until a pass is short."""
        batch = 100
        deleted_count = 0
        removed: list[Document] = []
        while True:
            docs = await self.search_similarity_threshold(query, limit=batch, threshold=threshold, filter=filter)
            removed += docs
            ids = [doc.metadata["id"] for doc in docs]
            if ids:
                await self.db.adelete(ids=ids)
                deleted_count += len(ids)
            if len(ids) < batch:
                break
        if deleted_count:
            self._save_db()
        return removed

    async def delete_documents_by_ids(self, ids: list[str]):
        existing = await self.db.aget_by_ids(ids)
        if existing:
            await self.db.adelete(ids=[doc.metadata["id"] for doc in existing])
            self._save_db()
        return existing

    async def insert_text(self, text, metadata: dict = {}):
        ids = await self.insert_documents([Document(text, metadata=metadata)])
        return ids[0]

    async def insert_documents(self, docs: list[Document]):
        ids = [self._generate_doc_id() for _ in docs]
        if ids:
            stamp = self.get_timestamp()
            for doc, doc_id in zip(docs, ids):
                doc.metadata["id"] = doc_id
                doc.metadata["timestamp"] = stamp
                if not doc.metadata.get("area", ""):
                    doc.metadata["area"] = Memory.Area.MAIN.value
            await self.db.aadd_documents(documents=docs, ids=ids)
            self._save_db()
        return ids

    async def update_documents(self, docs: list[Document]):
        ids = [doc.metadata["id"] for doc in docs]
        await self.db.adelete(ids=ids)
        added = await self.db.aadd_documents(documents=docs, ids=ids)
        self._save_db()
        return added

    def _save_db(self):
        Memory._save_db_file(self.db, self.memory_subdir)

    def _generate_doc_id(self):
        while True:
            candidate = guids.generate_id(10)
            if not self.db.get_by_ids(candidate):
                return candidate

    @staticmethod
    def _save_db_file(db: MyFaiss, memory_subdir: str):
        if getattr(db, "_a0_host_in_memory", False):  # stand-in: harness-made DBs stay in memory
            return
        db.save_local(folder_path=abs_db_dir(memory_subdir))

    @staticmethod
    def _get_comparator(condition: str):
        def comparator(data: dict[str, Any]):
            try:
                return simple_eval(condition, names=data)
            except Exception as e:  # a bad filter matches nothing
                PrintStyle.error(f"Error evaluating condition: {e}")
                return False

        return comparator

    @staticmethod
    def _score_normalizer(val: float) -> float:
        return 1 - 1 / (1 + np.exp(val))

    @staticmethod
    def _cosine_normalizer(val: float) -> float:
        # (1 + inner product) / 2, clamped: float error can exceed 1.0
        return max(0, min(1, (1 + val) / 2))

    @staticmethod
    def format_docs_plain(docs: list[Document]) -> list[str]:
        rendered = []
        for doc in docs:
            head = "".join(f"{k}: {v}\n" for k, v in doc.metadata.items())
            rendered.append(f"{head}Content: {doc.page_content}")
        return rendered

    @staticmethod
    def get_timestamp():
        return datetime.now().strftime("%Y-%m-%d %H:%M:%S")


def get_custom_knowledge_subdir_abs(agent: Agent) -> str:
    for subdir in agent.config.knowledge_subdirs:
        if subdir != "default":
            return files.get_abs_path("usr/knowledge") if subdir == "custom" else files.get_abs_path("usr/knowledge", subdir)
    raise Exception("No custom knowledge subdir set")


def reload():
    Memory.index = {}


def abs_db_dir(memory_subdir: str) -> str:
    if memory_subdir.startswith("projects/"):
        return files.get_abs_path(projects.get_project_meta(memory_subdir[len("projects/"):]), "memory")
    return files.get_abs_path("usr/memory", memory_subdir)


def abs_knowledge_dir(knowledge_subdir: str, *sub_dirs: str) -> str:
    if knowledge_subdir.startswith("projects/"):
        return files.get_abs_path(projects.get_project_meta(knowledge_subdir[len("projects/"):]),
                                  "knowledge", *sub_dirs)
    if knowledge_subdir == "default":
        return files.get_abs_path("knowledge", *sub_dirs)
    if knowledge_subdir == "custom":
        return files.get_abs_path("usr/knowledge", *sub_dirs)
    return files.get_abs_path("usr/knowledge", knowledge_subdir, *sub_dirs)


def get_memory_subdir_abs(agent: Agent) -> str:
    return abs_db_dir(get_agent_memory_subdir(agent))


def get_agent_memory_subdir(agent: Agent) -> str:
    """'projects/<name>' with project isolation inside a project, else the configured subdir."""
    config = plugins.get_plugin_config("_memory", agent)
    if not config:
        return "default"
    if config.get("project_memory_isolation", True):
        project_name = projects.get_context_project_name(agent.context)
        if project_name:
            return "projects/" + project_name
    return config.get("agent_memory_subdir", "") or "default"


def get_context_memory_subdir(context: AgentContext) -> str:
    return get_agent_memory_subdir(context.get_agent())


def get_existing_memory_subdirs() -> list[str]:
    try:
        subdirs = files.get_subdirectories("usr/memory")
        for project in files.get_subdirectories(projects.get_projects_parent_folder()):
            if files.exists(projects.get_project_meta(project), "memory", "index.faiss"):
                subdirs.append(f"projects/{project}")
        if "default" not in subdirs:
            subdirs.insert(0, "default")
        return subdirs
    except Exception as e:
        PrintStyle.error(f"Failed to get memory subdirectories: {e}")
        return ["default"]


def get_knowledge_subdirs_by_memory_subdir(memory_subdir: str, default: list[str]) -> list[str]:
    if memory_subdir.startswith("projects/"):
        default.append(projects.get_project_meta(memory_subdir[len("projects/"):], "knowledge"))
    return default
