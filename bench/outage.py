"""What a dead reranker costs each recall: the wrapped recall search minus the unwrapped one,
with our circuit breaker open, against a client that pays for the failure on every call
(ours with the breaker out of reach: rerank_breaker_failures=100, retries and backoff as
configured). Two ways to be dead: nothing listens on the port (connection refused), and a
black hole that accepts the connection and never answers (the whole rerank_timeout).

rerank_timeout is 1 s here so the no-breaker side finishes; its cost grows with the setting
(8 s by default), ours does not.

    python -m bench.outage
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time

from bench.common import Row, median_ms, report
from bench.recall_rig import rig, sample_recall

AIM_MS = 1.0


@contextlib.contextmanager
def black_hole():
    """A port that accepts connections and never reads or answers."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(256)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept():
        server.settimeout(0.1)
        while not stop.is_set():
            with contextlib.suppress(OSError):
                held.append(server.accept()[0])

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.getsockname()[1]}"
    finally:
        stop.set()
        thread.join()
        for sock in held + [server]:
            sock.close()


@contextlib.contextmanager
def refused():
    """A port nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    yield f"http://127.0.0.1:{port}"


async def _added_ms(r, endpoint: str, repeats: int, **config) -> tuple[float, float]:
    """(median added ms per recall, median unwrapped ms) once any breaker has had its say.
    The difference of two medians: near zero it can come out slightly negative."""
    recall = sample_recall(2)
    r.configure(rerank_endpoint=endpoint, rerank_api="rerank", rerank_timeout=1.0, **config)
    failures = config.get("rerank_breaker_failures", 3)
    for _ in range(min(failures, 5)):  # the failures that open the breaker (each pays in full)
        await r.wrapped(recall)

    async def wrapped():
        assert await r.wrapped(recall)

    async def unwrapped():
        assert await r.unwrapped(recall)

    plain = await median_ms(unwrapped, repeats, warmup=2)
    value = await median_ms(wrapped, repeats, warmup=0)
    return value - plain, plain


async def measure(r) -> list[Row]:
    rows = []
    r.client.set_backoff_scale(1.0)  # real backoff: what a user's recall waits through
    for label, dead in (("connection refused", refused), ("black hole (accepts, never answers)", black_hole)):
        with dead() as endpoint:
            ours, plain = await _added_ms(r, endpoint, 40)
            assert any(state["open_for_s"] > 0 for state in r.breaker.snapshot().values()), (
                f"the breaker did not open: {r.breaker.snapshot()} {r.recall.STATS.snapshot()['fallback_reasons']}"
            )
            theirs, _ = await _added_ms(r, endpoint, 3 if "black" in label else 10, rerank_breaker_failures=100)
        rows.append(
            Row(
                "outage",
                f"added per recall, {label}: breaker open vs paying each call",
                round(ours, 3),
                round(theirs, 3),
                round(ours / theirs, 4) if theirs else None,
                f"< {AIM_MS:g} ms",
                ours < AIM_MS,
                f"unwrapped search {plain:.2f} ms",
            )
        )
    return rows


def main() -> list[Row]:
    with rig() as r:
        started = time.monotonic()
        rows = r.host.run(measure(r))
    return report("outage", rows, {"seconds": round(time.monotonic() - started, 1)})


if __name__ == "__main__":
    main()
