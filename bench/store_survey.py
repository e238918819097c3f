"""What store_agreement's survey says of each store of the relevance bench: the own bench's
memories, LoCoMo's ten conversations as observations and turn by turn, and MemoryBank's
fifteen people's chats message by message (when its data is there). The vectors are
all-MiniLM-L6-v2's (the bench's embedder), the sample the one the plugin takes (evenly spread,
SURVEY_SIZE at most), the bar SURVEY_BAR.

    python -m bench.store_survey [--locomo DIR] [--memorybank DIR]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import yaml

from bench import locomo, memorybank
from bench.relevance import minilm_path
from helpers.recall import store_agreement


def stores(folder: str, memorybank_folder: str | None = None):
    with open("bench/relevance_corpus/memories.yaml", encoding="utf-8") as f:
        yield "own bench", "both", [m["text"] for m in yaml.safe_load(f)]
    for turns in (False, True):
        for conv in locomo.load(folder, turns=turns):
            kind = "turns" if turns else "observations"
            yield (
                f"LoCoMo {conv.name} {kind}",
                locomo.HALF_OF.get(conv.name, "tuned"),
                [m["text"] for m in conv.memories],
            )
    if memorybank_folder:
        for conv in memorybank.load(memorybank_folder):
            yield f"MemoryBank {conv.name}", "held", [m["text"] for m in conv.memories]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--locomo", default=str(locomo.DEFAULT_DIR))
    parser.add_argument("--memorybank", default=str(memorybank.DEFAULT_DIR), help="skipped when not a folder")
    args = parser.parse_args(argv)
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(minilm_path(), device="cpu")
    print(
        f"{'store':32} {'half':6} {'memories':>8} {'agreement':>9}  words lead first (bar {store_agreement.SURVEY_BAR})"
    )
    memorybank_folder = args.memorybank if Path(args.memorybank).is_dir() else None
    for name, half, texts in stores(args.locomo, memorybank_folder):
        picks = np.linspace(0, len(texts) - 1, min(store_agreement.SURVEY_SIZE, len(texts))).round().astype(int)
        vectors = model.encode([texts[i] for i in picks], normalize_embeddings=True, batch_size=64)
        agreement = store_agreement.agreement_of(vectors, [texts[i] for i in picks])
        led = agreement is not None and agreement < store_agreement.SURVEY_BAR
        shown = "-" if agreement is None else f"{agreement:.2f}"
        print(f"{name:32} {half:6} {len(texts):>8} {shown:>9}  {'yes' if led else 'no'}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
