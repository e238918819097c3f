"""Redaction (``rerank_redact``) costs the same on hostile text as on prose: 12 KB of the
repetitions that made the old patterns quadratic ("v1.2v1.2...", "a@a@...", "-_.-_.", long
runs) against 12 KB of ordinary memory text. Each adversarial family is its own row; the
aim is at most 5x prose (the old patterns took 16-49 s on "v1.2" x 3,000, >1,000x).

    python -m bench.redaction
"""

from __future__ import annotations

from bench.common import Row, median_ms_sync, ratio_row, report

SIZE = 12_000
AIM = 5.0
PROSE = (
    "The user prefers short answers. Grafana runs on atlas, port 3001; restart it with docker "
    "compose restart grafana. Backups of the photos share run nightly with restic to the NAS. "
    "Contact ops@example.org about the token policy; the password policy asks for 16 characters. "
)
ADVERSARIAL = ("v1.2", "a@", "-_.", "a", "sk-", "token.", "a://", "§§secret(", "A1/")


def _sized(unit: str) -> str:
    return (unit * (SIZE // len(unit) + 1))[:SIZE]


def measure(repeats: int = 5) -> list[Row]:
    from helpers.scoring.redaction import redact

    prose = _sized(PROSE)
    baseline = median_ms_sync(lambda: redact(prose), repeats * 4)
    rows = []
    for unit in ADVERSARIAL:
        text = _sized(unit) + " "
        value = median_ms_sync(lambda text=text: redact(text), repeats, warmup=1)
        rows.append(
            ratio_row(
                "redact", f"redact 12 KB of {unit!r} repeated vs 12 KB prose", value, baseline, f"<= {AIM:g}x", AIM
            )
        )
    return rows


def main() -> list[Row]:
    return report("redaction", measure())


if __name__ == "__main__":
    main()
