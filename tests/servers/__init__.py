"""Wire-faithful fake reranker servers on 127.0.0.1 for tests.

    from tests.servers import start, SERVER_KINDS
    with start("tei19", max_client_batch_size=32) as srv:
        httpx.post(srv.url + "/rerank", json={...})
        srv.requests, srv.set_faults(statuses=[503]), srv.stats

Each kind answers exactly as the real server does (see
/work/shared/docs/rerank-protocols.md); scores come from `scoring.relevance`, a
deterministic lexical model, unless a `scorer=` oracle is given.
"""

from .base import Recorded
from .faults import BODY_FAULTS, RANDOM_FAULTS, Faults
from .harness import ServerHandle, start
from .kinds import SERVER_KINDS
from .scoring import probability, relevance

__all__ = [
    "start",
    "SERVER_KINDS",
    "ServerHandle",
    "Recorded",
    "Faults",
    "BODY_FAULTS",
    "RANDOM_FAULTS",
    "relevance",
    "probability",
]
