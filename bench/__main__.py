"""Every benchmark in one run, one table: ``python -m bench`` (from the repository root).

Each row is measured side by side with its baseline in this run, against the same loopback
servers, each server in a process of its own. The table goes to stdout and, with the
machine and Python version, to bench/results/bench.json. See bench/README.md.
"""

from __future__ import annotations

import asyncio
import time

from bench import (
    cache,
    client_overhead,
    judge_cost,
    lexical_cost,
    loop_stall,
    outage,
    peers,
    recall_cost,
    recall_overhead,
    redaction,
)
from bench.common import Row, print_table, write_json
from bench.recall_rig import rig


def run_all() -> list[Row]:
    rows: list[Row] = []
    rows += asyncio.run(client_overhead.measure())
    rows += peers.measure()
    rows += asyncio.run(cache.measure())
    rows += asyncio.run(loop_stall.arerank_rows())
    rows += redaction.measure()
    # Through the stand-in Agent Zero (the plugin's own modules as the host loads them).
    with rig(memories=200) as r:
        rows += r.host.run(recall_overhead.measure(r))
        rows += r.host.run(outage.measure(r))
    with rig(memories=600) as r:
        rows += r.host.run(loop_stall.recall_rows(r))
    rows += loop_stall.big_input_rows()
    rows += recall_cost.measure()
    rows += lexical_cost.measure()
    rows += judge_cost.measure()
    return rows


def main() -> list[Row]:
    started = time.monotonic()
    rows = run_all()
    print()
    print_table(rows)
    missed = [r for r in rows if r.met is False]
    aimed = [r for r in rows if r.met is not None]
    print(f"\naims met: {len(aimed) - len(missed)} of {len(aimed)}")
    for r in missed:
        print(
            f"  NOT met: [{r.section}] {r.name}: {r.ratio if r.ratio is not None else r.value_ms} vs aim {r.aim}"
            + (f" ({r.note})" if r.note else "")
        )
    path = write_json("bench", rows, {"seconds": round(time.monotonic() - started, 1)})
    print(f"written: {path.relative_to(path.parents[2])}")
    return rows


if __name__ == "__main__":
    main()
