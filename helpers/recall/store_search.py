"""The candidate pool of one recall search: the host's own store, searched with several
texts (texts.py).

A filtered FAISS search of the host's only ever looks at 20 vectors. So the plugin searches
itself, past that cap.

All texts go to FAISS in one call: a range search for every vector above the pool's
similarity floor (the host's store is an inner-product index with relevance (1 + ip) / 2,
so the floor is an inner product), sorted best first and read only until the pool is full.
One scan of the index per text, however few memories pass the filter, and the recall's
second search (solutions) reads the first one's scan. Any other kind of store gets
nearest-neighbour searches that fetch four times as many vectors until the pool is full or
relevance falls below the floor.
"""

from __future__ import annotations

import ast
import asyncio
import functools
import hashlib
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from .. import vocabulary
from . import lexical_index, query_vectors
from .texts import HOST, LEXICAL, Searches

# The host's own filtered search looks at this many nearest vectors (LangChain's fetch_k).
HOST_FETCH_K = 20
_GROWTH = 4


@dataclass
class Found:
    """What the searches found: per role, the hits best first with their relevance (the
    host's own 0..1 scale), and the host's own result for its query as the host ranks it."""

    lists: dict[str, list[tuple[Any, float]]] = field(default_factory=dict)
    host_result: list = field(default_factory=list)
    # How much of the message's words (IDF-weighted) the best word match holds
    # (lexical_index.StoreIndex.coverage): 0 without a word list.
    best_word_coverage: float = 0.0
    # With a word list: where each memory the lists hold sits in the order the store holds
    # them (lexical_index.StoreIndex.stored_order), by doc_key; what fusion.word_led and the
    # word picks (fusion.with_word_picks) read.
    stored_at: dict[Any, int] = field(default_factory=dict)


async def search(
    memory: Any,
    searches: Searches,
    depths: dict[str, int],
    floor: float,
    limit: int,
    threshold: float,
    filter: str,
    lexical_text: str = "",
    knowledge_last: bool = False,
) -> Found:
    """Every text of ``searches`` against the host's store, in one batched FAISS search,
    and ``lexical_text`` by words over the whole store (lexical_index.py), when its index
    is ready: the list of role LEXICAL, best first by BM25 (with ``knowledge_last``, Agent
    Zero's knowledge chunks after the user's memories). ``depths``: how many hits each
    role's list holds at most (roles sharing a text share the deepest)."""
    texts = searches.texts()
    distinct = list(dict.fromkeys(texts.values()))
    comparator = remembering_comparator(type(memory)._get_comparator(filter), filter) if filter else None
    sizes = [max(depths.get(role, limit) for role, t in texts.items() if t == text) for text in distinct]

    async def by_vectors() -> _Rows:
        vectors = await query_vectors.embed(memory.db, distinct)
        return await asyncio.to_thread(_search_rows, memory.db, vectors, sizes, floor, comparator)

    # The word search needs no vectors: it runs beside the embedding and the FAISS scan
    # (each in a worker thread), not after them. Agent Zero's knowledge chunks go after the
    # user's memories in its list where they do in the prompt (the caller decides, pipeline):
    # they are long, and hold the words of every question about setting something up; the
    # word picks and a store whose words lead choose from the list's head.
    by_words = lexical_text and depths.get(LEXICAL, 0) > 0
    later = is_knowledge if knowledge_last else None
    words_found = (
        lexical_index.matches(memory.db, lexical_text, depths[LEXICAL], comparator, later) if by_words else _none()
    )
    rows, words = await asyncio.gather(by_vectors(), words_found)
    row_of = {role: distinct.index(text) for role, text in texts.items()}
    found = Found({role: rows.hits[row] for role, row in row_of.items()})
    found.host_result = _host_result(memory.db, rows, row_of[HOST], limit, threshold, comparator)
    if words is not None:
        found.lists[LEXICAL], found.best_word_coverage = words
        if found.lists[LEXICAL]:
            keys = {str(key): key for key in (doc_key(doc) for hits in found.lists.values() for doc, _ in hits)}
            order = await lexical_index.stored_order(memory.db, list(keys))
            found.stored_at = {keys[doc_id]: at for doc_id, at in order.items()}
    return found


async def _none() -> None:
    return None


@dataclass
class _Rows:
    hits: list[list[tuple[Any, float]]]
    # The first fetched vectors of each row, (docstore id, relevance), for _host_result.
    heads: list[list[tuple[str, float]]]


def _search_rows(
    db: Any, vectors: list[list[float]], sizes: list[int], floor: float, comparator: Callable[[dict], Any] | None
) -> _Rows:
    """Runs in a worker thread: FAISS releases the GIL while it scans."""
    import numpy as np  # inside Agent Zero with FAISS, numpy is always present

    queries = np.asarray(vectors, dtype=np.float32)
    if getattr(db, "_normalize_L2", False):
        import faiss

        faiss.normalize_L2(queries)
    relevance_of = db._select_relevance_score_fn()
    rows = _Rows([[] for _ in vectors], [[] for _ in vectors])
    radius = _inner_product_floor(db, relevance_of, floor)
    if radius is None:
        _search_nearest(db, queries, rows, relevance_of, floor, sizes, comparator)
        return rows
    for row, scan in enumerate(_above_floor(db, queries, radius, floor)):
        args = (
            rows.hits[row],
            rows.heads[row],
            db.index_to_docstore_id,
            db.docstore,
            relevance_of,
            floor,
            sizes[row],
            comparator,
        )
        done = _read_row(scan.scores, scan.positions, 0, *args)
        if not done and not scan.complete:  # a filter few memories pass: read past the prefix
            whole = _scan_rows(db.index, queries[row : row + 1], radius, whole=True)[0]
            _read_row(whole.scores, whole.positions, len(scan.positions), *args)
    return rows


def _inner_product_floor(db: Any, relevance_of: Callable[[float], float], floor: float) -> float | None:
    """The inner product that relevance ``floor`` stands for, when the store is the host's
    kind (an inner-product index, relevance (1 + ip) / 2); else None."""
    import faiss

    if getattr(db.index, "metric_type", None) != faiss.METRIC_INNER_PRODUCT:
        return None
    samples = (-1.0, -0.5, 0.0, 0.3, 0.5, 0.9, 1.0)
    if any(abs(relevance_of(x) - max(0.0, min(1.0, (1 + x) / 2))) > 1e-9 for x in samples):
        return None
    return 2 * floor - 1 - 1e-6  # just below: the floor itself is checked on each hit


# The two searches of one recall (memories, solutions) use the same texts and the same floor:
# the second reads the first one's scan. Keyed by store, floor and query vector, briefly.
_SCAN_TTL_S = 10.0
_SCAN_ENTRIES = 8
# Only the best this many of a scan are sorted and kept: a pool of 20 behind a filter that
# passes 1 % of the memories still fills from them. A row that needs more is read again.
_SCAN_PREFIX = 2_000
_scans: dict[tuple, tuple[float, "_Scan"]] = {}
_scans_lock = threading.Lock()


def forget() -> None:
    with _scans_lock:
        _scans.clear()


@dataclass(frozen=True)
class _Scan:
    positions: Any  # best first
    scores: Any
    complete: bool  # every vector above the floor, or only the best _SCAN_PREFIX


def _scan_rows(index: Any, queries: Any, radius: float, whole: bool = False) -> list[_Scan]:
    """One range search: per query, the vectors above ``radius``, best first."""
    import numpy as np

    limits, scores, positions = index.range_search(queries, radius)
    out = []
    for j in range(len(queries)):
        row_scores, row_positions = scores[limits[j] : limits[j + 1]], positions[limits[j] : limits[j + 1]]
        complete = whole or len(row_scores) <= _SCAN_PREFIX
        # argpartition first: sorting every one of 100,000 vectors that pass a low floor is
        # what a pool of a few dozen does not need.
        pick = np.arange(len(row_scores)) if complete else np.argpartition(-row_scores, _SCAN_PREFIX)[:_SCAN_PREFIX]
        best_first = pick[np.argsort(-row_scores[pick], kind="stable")]
        out.append(_Scan(row_positions[best_first], row_scores[best_first], complete))
    return out


def _above_floor(db: Any, queries: Any, radius: float, floor: float) -> list[_Scan]:
    """Per query, the stored vectors above ``radius``, best first (the best _SCAN_PREFIX of
    them when more pass): one range search over the index for every text at once."""
    index = db.index
    # A deletion rebuilds index_to_docstore_id (LangChain's FAISS.delete), so a store that
    # changed keeps neither its size nor that dict: a stale scan is never read.
    store = (id(index), index.ntotal, id(db.index_to_docstore_id))
    keys = [(*store, floor, hashlib.sha1(q.tobytes()).digest()) for q in queries]
    now = time.monotonic()
    with _scans_lock:
        for key in [k for k, (expires, _) in _scans.items() if expires < now]:
            del _scans[key]
        known = {key: _scans[key][1] for key in keys if key in _scans}
    missing = [n for n, key in enumerate(keys) if key not in known]
    if missing:
        fresh = _scan_rows(index, queries[missing], radius)
        with _scans_lock:
            for n, scan in zip(missing, fresh):
                known[keys[n]] = scan
                _scans[keys[n]] = (now + _SCAN_TTL_S, scan)
            while len(_scans) > _SCAN_ENTRIES:
                _scans.pop(next(iter(_scans)))
    return [known[key] for key in keys]


def _search_nearest(
    db: Any, queries: Any, rows: _Rows, relevance_of, floor: float, sizes: list[int], comparator
) -> None:
    """Any other store: nearest-neighbour searches, each row fetching four times as many
    vectors until it is full or its relevance falls below the floor."""
    index = db.index
    total = index.ntotal
    pending = list(range(len(queries)))
    read = [0] * len(queries)
    fetch = min(total, max(max(sizes) * _GROWTH, HOST_FETCH_K * 2))
    while pending and fetch > 0:
        scores, positions = index.search(queries[pending], fetch)
        still = []
        for row, row_scores, row_positions in zip(pending, scores, positions):
            done = _read_row(
                row_scores,
                row_positions,
                read[row],
                rows.hits[row],
                rows.heads[row],
                db.index_to_docstore_id,
                db.docstore,
                relevance_of,
                floor,
                sizes[row],
                comparator,
            )
            read[row] = len(row_positions)
            if not done:
                still.append(row)
        if fetch >= total:
            break
        pending, fetch = still, min(total, fetch * _GROWTH)


def _read_row(
    scores,
    positions,
    start: int,
    hits: list,
    head: list,
    ids,
    docstore,
    relevance_of,
    floor: float,
    row_cap: int,
    comparator,
) -> bool:
    """Read one row on from ``start``; True when it needs nothing more."""
    previous = None
    for score, position in zip(scores[start:], positions[start:]):
        if position < 0:  # fewer vectors than asked for
            return True
        relevance = relevance_of(float(score))
        doc_id = ids[int(position)]
        if len(head) < HOST_FETCH_K:
            head.append((doc_id, relevance))
        # Best first, so relevance only falls along a row: below the floor, nothing further
        # can pass. (Checked, not assumed: a store whose relevance rises along the row is
        # read to the end.)
        monotone = previous is None or relevance <= previous + 1e-9
        previous = relevance
        if relevance < floor:
            if monotone:
                return True
            continue
        if len(hits) >= row_cap:
            if len(head) >= HOST_FETCH_K:
                return True
            continue
        doc = docstore.search(doc_id)
        if not hasattr(doc, "page_content"):  # LangChain raises here too: a broken docstore
            raise ValueError(vocabulary.missing_document(doc_id))
        if comparator is None or comparator(doc.metadata):
            hits.append((doc, relevance))
    return False


def _host_result(db: Any, rows: _Rows, host_row: int, limit: int, threshold: float, comparator) -> list:
    """What the host's own search returns for its query, read off the same FAISS row: the
    nearest 20 vectors when filtered (else ``limit``), those passing the filter, the first
    ``limit``, those at or above ``threshold``."""
    head = rows.heads[host_row][: HOST_FETCH_K if comparator is not None else limit]
    docs = []
    for doc_id, relevance in head:
        doc = db.docstore.search(doc_id)
        if comparator is None or comparator(doc.metadata):
            docs.append((doc, relevance))
    return [doc for doc, relevance in docs[:limit] if relevance >= threshold]


_MISSING = object()


# The host's comparator parses its condition (simpleeval, so Python's ast) on every call,
# and CPython's AST constructor keeps one recursion counter per interpreter: two threads
# building ASTs at once can fail with "AST constructor recursion depth mismatch"
# (python/cpython#106905), which the host's comparator catches and answers False, a memory
# silently filtered out (and remembered so for the rest of the search). The word search and
# the vector scan run in two worker threads at once, so the plugin asks it one call at a time.
_ASKING_THE_HOST = threading.Lock()


def remembering_comparator(comparator: Callable[[dict], Any], condition: str) -> Callable[[dict], Any]:
    """``comparator`` asked once per distinct value of the names ``condition`` reads, and
    never by two threads at once (_ASKING_THE_HOST).

    The host evaluates its filter (simpleeval) for every document it looks at, parsing the
    condition each time (~25 µs). The host's comparator still decides every case; documents
    whose names hold the same values (``area == 'main'``: three areas) share its answer. A
    condition that calls a function, or a value that cannot be a dict key, goes to the
    host's comparator every time."""

    def asked(metadata: dict) -> Any:
        with _ASKING_THE_HOST:
            return comparator(metadata)

    names = _names_read(condition)
    if names is None:
        return asked
    answers: dict[tuple, Any] = {}

    def remembered(metadata: dict) -> Any:
        key = tuple((type(v), v) for v in (metadata.get(name, _MISSING) for name in names))
        try:
            known = key in answers
        except TypeError:  # an unhashable value (a list, a dict)
            return asked(metadata)
        if not known:
            answers[key] = asked(metadata)
        return answers[key]

    return remembered


# A filter is one of a few per area and caller ("area == 'main'"): parsed once, not per
# search. One an LLM wrote for memory_load may be any size (a megabyte takes 1.7 s to parse,
# on the event loop): past _NAMES_READ_CHARS it is not parsed, only asked of the host.
_NAMES_READ_CHARS = 1_000


def _names_read(condition: str) -> tuple[str, ...] | None:
    """The names an expression reads; None when its value may depend on more (a call), it
    is too long to read, or parsing it collided with a host thread's (the SystemError above:
    this search asks the host every time, and the next one parses it again)."""
    if len(condition) > _NAMES_READ_CHARS:
        return None
    try:
        return _names_parsed(condition)
    except SystemError:
        return None


@functools.lru_cache(maxsize=64)
def _names_parsed(condition: str) -> tuple[str, ...] | None:
    try:
        tree = ast.parse(condition.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Call, ast.Lambda, ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom)):
            return None
        if isinstance(node, ast.Name):
            names.add(node.id)
    return tuple(sorted(names))


def doc_key(doc: Any) -> Any:
    return (doc.metadata or {}).get("id") or id(doc)


def doc_keys(docs: Sequence[Any]) -> list:
    return [doc_key(d) for d in docs]


def is_knowledge(doc: Any) -> bool:
    """One of Agent Zero's own knowledge files, preloaded into every store (the host marks
    each chunk ``knowledge_source: True``), rather than something the user's agent saved."""
    return (doc.metadata or {}).get("knowledge_source") is True


def user_memories_first(docs: Sequence[Any]) -> list:
    """``docs`` with Agent Zero's knowledge chunks after the user's own memories, each part
    in its order."""
    return sorted(docs, key=is_knowledge)  # stable


def stored_vectors(index: Any, positions: list[int]) -> Any:
    """The stored vectors at ``positions``: in one call where the index has it (a 640-deep
    pool: 0.5 ms against 12 ms one by one on the event loop)."""
    import numpy as np

    batch = getattr(index, "reconstruct_batch", None)
    if batch is not None:
        return np.asarray(batch(np.asarray(positions, dtype="int64")))
    return np.stack([index.reconstruct(p) for p in positions])


def cosine_matrix(vectors: Any) -> Any:
    """The cosine similarities between the rows of ``vectors``."""
    import numpy as np

    matrix = np.asarray(vectors, dtype="float64")
    matrix = matrix / np.linalg.norm(matrix, axis=1, keepdims=True).clip(min=1e-12)
    return matrix @ matrix.T


def similarity_matrix(memory: Any, docs: Sequence[Any]) -> Any | None:
    """Cosine similarities between ``docs`` from the host's own stored FAISS vectors, or
    None when they cannot be had (then diversity falls back to word overlap)."""
    try:
        db = memory.db
        position = {doc_id: i for i, doc_id in db.index_to_docstore_id.items()}
        ids = [getattr(doc, "id", None) or (doc.metadata or {}).get("id") for doc in docs]
        return cosine_matrix(stored_vectors(db.index, [position[doc_id] for doc_id in ids]))
    except Exception:  # a store without reconstruct, or a document not in this index
        return None
