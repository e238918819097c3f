"""Stand-in for plugins/_memory/helpers/knowledge_import.py, text files only (.md, .txt):
tracks files by checksum and marks them changed / original / removed like the host."""
import glob
import hashlib
import os
from typing import Any, Dict, Literal, TypedDict

from langchain_core.documents import Document

from helpers.log import LogItem

_TEXT_SUFFIXES = (".md", ".txt")


class KnowledgeImport(TypedDict):
    file: str
    checksum: str
    ids: list[str]
    state: Literal["changed", "original", "removed"]
    documents: list[Document]


def calculate_checksum(file_path: str) -> str:
    with open(file_path, "rb") as f:
        return hashlib.md5(f.read()).hexdigest()


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
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        doc_meta = {**metadata, "source": path, "source_file": os.path.basename(path),
                    "source_path": path, "file_type": os.path.splitext(path)[1][1:],
                    "knowledge_source": True, "import_timestamp": None}
        index[path] = {"file": path, "checksum": checksum, "ids": (entry or {}).get("ids", []),
                       "state": "changed", "documents": [Document(page_content=text, metadata=doc_meta)]}
    return index
