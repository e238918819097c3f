"""Shared benchmark plumbing: repeatable timing, ratio rows, a table, a JSON file.

Every figure is a ratio against a baseline measured in the same run, against the same
loopback server, so machine speed cancels out. Medians, not means: one GC pause or
scheduler hiccup must not move a row.
"""

from __future__ import annotations

import asyncio
import json
import platform
import statistics
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Awaitable, Callable

RESULTS_DIR = Path(__file__).resolve().parent / "results"


@dataclass
class Row:
    section: str
    name: str
    value_ms: float
    baseline_ms: float | None
    ratio: float | None
    aim: str = ""
    met: bool | None = None
    note: str = ""


async def median_ms(fn: Callable[[], Awaitable], repeats: int, warmup: int = 5) -> float:
    for _ in range(warmup):
        await fn()
    samples = []
    for _ in range(repeats):
        started = time.perf_counter()
        await fn()
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def median_ms_sync(fn: Callable[[], object], repeats: int, warmup: int = 3) -> float:
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(repeats):
        started = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def ratio_row(
    section: str,
    name: str,
    value: float,
    baseline: float | None,
    aim: str = "",
    limit: float | None = None,
    note: str = "",
) -> Row:
    ratio = value / baseline if baseline else None
    met = None if limit is None or ratio is None else ratio <= limit
    return Row(
        section,
        name,
        round(value, 3),
        None if baseline is None else round(baseline, 3),
        None if ratio is None else round(ratio, 3),
        aim,
        met,
        note,
    )


def print_table(rows: list[Row]) -> str:
    headers = ("section", "measurement", "ours ms", "baseline ms", "ratio", "aim", "met")
    cells = [
        (
            r.section,
            r.name,
            f"{r.value_ms:.3f}",
            "-" if r.baseline_ms is None else f"{r.baseline_ms:.3f}",
            "-" if r.ratio is None else f"{r.ratio:.2f}x",
            r.aim or "-",
            {True: "yes", False: "NO", None: "-"}[r.met],
        )
        for r in rows
    ]
    widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(headers)]
    lines = [
        "| " + " | ".join(h.ljust(w) for h, w in zip(headers, widths)) + " |",
        "|" + "|".join("-" * (w + 2) for w in widths) + "|",
    ]
    lines += ["| " + " | ".join(c.ljust(w) for c, w in zip(cell, widths)) + " |" for cell in cells]
    text = "\n".join(lines)
    print(text)
    return text


def write_json(name: str, rows: list[Row], extra: dict | None = None) -> Path:
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    path = RESULTS_DIR / f"{name}.json"
    payload = {
        "python": platform.python_version(),
        "machine": platform.machine(),
        "at": time.strftime("%Y-%m-%d %H:%M:%S"),
        "rows": [asdict(r) for r in rows],
        **(extra or {}),
    }
    path.write_text(json.dumps(payload, indent=2))
    return path


def report(name: str, rows: list[Row], extra: dict | None = None) -> list[Row]:
    """What a section run alone (python -m bench.<name>) ends with: the table printed and
    written to bench/results/<name>.json."""
    print_table(rows)
    write_json(name, rows, extra)
    return rows


def run(coro):
    return asyncio.run(coro)


def chosen(config: dict):
    """The settings of ``config`` and their scorer, chosen once: what probing.probe takes."""
    from helpers.scoring import scorers
    from helpers.settings import Settings

    settings = Settings.from_mapping(config)
    return settings, scorers.choose(settings)
