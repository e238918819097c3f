"""Stand-in for plugins/_memory/helpers/knowledge_import.py, text files only (.md, .txt):
tracks files by checksum and marks them changed / original / removed like the host, and
chunks a changed file the host's way - LangChain's TextLoader (autodetect_encoding) and
`load_and_split()`, i.e. a RecursiveCharacterTextSplitter with its defaults (chunk_size
4000, overlap 200) - so a knowledge file reaches the store as the same chunks, carrying the
loader's `source` plus the host's keys (source_file, source_path, file_type,
knowledge_source: True, import_timestamp: None) and the caller's metadata (area)."""
import glob
import hashlib
import os
from typing import Any, Dict, Literal, TypedDict

from langchain_community.document_loaders import TextLoader
from langchain_core.documents import Document

from helpers.log import LogItem
from helpers.print_style import PrintStyle

_TEXT_SUFFIXES = (".md", ".txt")
text_loader_kwargs = {"autodetect_encoding": True}


class KnowledgeImport(TypedDict):
    file: str
    checksum: str
    ids: list[str]
    state: Literal["changed", "original", "removed"]
    documents: list[Document]


def calculate_checksum(file_path: str) -> str:
    with open(file_path, "rb") as f:
        return hashlib.md5(f.read()).hexdigest()


def _chunks(path: str, metadata: dict[str, Any]) -> list[Document]:
    documents = TextLoader(path, **text_loader_kwargs).load_and_split()
    host_metadata = {**metadata, "source_file": os.path.basename(path), "source_path": path,
                     "file_type": os.path.splitext(path)[1][1:].lower(),
                     "knowledge_source": True, "import_timestamp": None}
    for doc in documents:
        doc.metadata = {**doc.metadata, **host_metadata}
    return documents


def load_knowledge(log_item: LogItem | None, knowledge_dir: str, index: Dict[str, KnowledgeImport],
                   metadata: dict[str, Any] = {}, filename_pattern: str = "**/*",
                   recursive: bool = True) -> Dict[str, KnowledgeImport]:
    if not os.path.isdir(knowledge_dir):
        return index
    for entry in index.values():
        if entry["file"].startswith(knowledge_dir):
            entry.setdefault("state", "removed")
            if entry["state"] != "changed":
                entry["state"] = "removed"
    pattern = os.path.join(knowledge_dir, "**/*" if recursive else filename_pattern)
    for path in sorted(glob.glob(pattern, recursive=recursive)):
        if not os.path.isfile(path) or not path.endswith(_TEXT_SUFFIXES):
            continue
        checksum = calculate_checksum(path)
        entry = index.get(path)
        if entry and entry.get("checksum") == checksum:
            entry["state"] = "original"
            continue
        try:
            documents = _chunks(path, metadata)
        except Exception as e:  # the host logs an unreadable file and goes on with the rest
            PrintStyle(font_color="red").print(f"Error loading {path}: {e}")
            continue
        index[path] = {"file": path, "checksum": checksum, "ids": (entry or {}).get("ids", []),
                       "state": "changed", "documents": documents}
    return index
