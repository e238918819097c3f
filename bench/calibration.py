"""The calibration set, measured: how much say each kind of reranker earns on it, and how
stable that say is from one run of a noisy reranker to the next.

    python -m bench.calibration                 # the set as shipped: every scorer's MRR and say
    python -m bench.calibration --write         # rebuild the items drawn from the tuning half
    python -m bench.calibration --local DIR     # also a cross-encoder in process (a model folder)

The set (helpers/scoring/calibration_set.json) has two parts. The first 12 items were
written by hand in the traps embeddings and keywords fall into. The rest are drawn from the
relevance bench's own corpus, **its tuning half only** (never a held-out question): each
first-message or direct question of that half, its first relevant memory as the answer, and
four memories that answer it not: the two the embedder ranks highest and the two BM25 ranks
highest (over the whole corpus), so neither a dense nor a word search passes by itself.

A reranker's say is its mean reciprocal rank of the answer against the embedder's
(scoring/calibration.py). With 12 items a noisy reranker's say moved between "some" and
"none" by chance; the spread printed here (over NOISE_RUNS seeds of the same noise) is how
far a rerun can move it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import statistics
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SET_PATH = REPO / "helpers" / "scoring" / "calibration_set.json"
HAND_WRITTEN = 12  # the first items of the set, written by hand; the rest are drawn here
NEGATIVES_DENSE, NEGATIVES_WORDS = 2, 2
UNRELATED = 3  # memories about something else entirely, per question
NOISE_RUNS = 200
DRAWN_TRAP = "drawn from the bench's tuning half: the embedder's and BM25's best wrong answers"


def _embedder():
    from sentence_transformers import SentenceTransformer

    from bench.relevance import minilm_path

    return SentenceTransformer(minilm_path(), device="cpu")


def _cosines(model, query: str, texts: list[str]) -> list[float]:
    vectors = model.encode([query, *texts], normalize_embeddings=True)
    return [float(vectors[0] @ v) for v in vectors[1:]]


def drawn_items(model) -> list[dict]:
    """The items drawn from the tuning half (see the module docstring), in the corpus's order."""
    from bench.relevance import classify
    from bench.relevance_corpus import load
    from helpers.scoring.bm25 import bm25_scores

    memories, questions = load()
    texts = [m["text"].strip() for m in memories]
    ids = [m["id"] for m in memories]
    items = []
    for q in classify(questions, memories):
        if q.half != "tuned" or q.data["kind"] not in ("first", "direct"):
            continue
        relevant = set(q.data["relevant"])
        query = q.data["message"].strip()
        dense = _cosines(model, query, texts)
        words = bm25_scores(query, texts)
        wrong = [i for i in range(len(texts)) if ids[i] not in relevant]
        picks: list[int] = []
        for scores, n in ((dense, NEGATIVES_DENSE), (words, NEGATIVES_WORDS)):
            picks += [i for i in sorted(wrong, key=lambda i: -scores[i]) if i not in picks][:n]
        answer_text = texts[ids.index(q.data["relevant"][0])]
        candidates = [texts[i] for i in picks]
        # The answer's place, fixed by a hash of the question: never always first or last.
        at = int(hashlib.sha1(query.encode()).hexdigest(), 16) % (len(candidates) + 1)
        candidates.insert(at, answer_text)
        items.append({"trap": DRAWN_TRAP, "query": query, "answer": at, "candidates": candidates, "from": q.data["id"]})
    return items


def _relevant_texts() -> dict[str, set[str]]:
    """The bench corpus's question id -> the texts of its relevant memories."""
    from bench.relevance_corpus import load

    memories, questions = load()
    text_of = {m["id"]: m["text"].strip() for m in memories}
    return {q["id"]: {text_of[r] for r in q["relevant"]} for q in questions}


def with_unrelated(items: list[dict], model) -> list[dict]:
    """Each item with UNRELATED memories about something else entirely: the other items'
    answers the embedder finds least like its question (never one of its own candidates,
    nor one the bench labels relevant to the question it was drawn from). A reranker's
    share of them at or above the answer tells an order from noise (calibration.py)."""
    answers = [item["candidates"][item["answer"]] for item in items]
    relevant = _relevant_texts()
    answer_vectors = model.encode(answers, normalize_embeddings=True)  # once, not once per question
    for item in items:
        own = set(item["candidates"]) | relevant.get(item.get("from", ""), set())
        likeness = [float(v) for v in answer_vectors @ model.encode([item["query"]], normalize_embeddings=True)[0]]
        order = sorted(range(len(answers)), key=lambda j: (likeness[j], j))
        item["unrelated"] = [answers[j] for j in order if answers[j] not in own][:UNRELATED]
    return items


def write() -> None:
    data = json.loads(SET_PATH.read_text(encoding="utf-8"))
    hand = data["items"][:HAND_WRITTEN]
    model = _embedder()
    data["items"] = with_unrelated(hand + drawn_items(model), model)
    SET_PATH.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(
        f"{SET_PATH.relative_to(REPO)}: {HAND_WRITTEN} written by hand + {len(data['items']) - HAND_WRITTEN} drawn",
        file=sys.stderr,
    )


# --- measuring ------------------------------------------------------------------------------
def _measured(items, score, scale: str | None = None) -> tuple[float, float | None, float | None]:
    """(MRR of the answer among each item's candidates, the shares of its unrelated memories
    scored at or above the answer and called relevant on ``scale``), as calibration.measure
    reads a scorer's answers."""
    from helpers.scoring.calibration import mean_reciprocal_rank, unrelated_above, unrelated_called_relevant

    answers = [[float(x) for x in score(i.query, [*i.candidates, *i.unrelated])] for i in items]
    return (
        mean_reciprocal_rank(answers, items),
        unrelated_above(answers, items),
        unrelated_called_relevant(answers, items, scale),
    )


def _where_words_lead(trust) -> str:
    """The say ``trust`` has in a new chat's search of a store whose words lead."""
    from helpers.scoring import calibration

    return calibration.lend_say(trust, new_chat=True, words_led=True).say


def _noisy(sigma: float, seed: int):
    def score(query: str, candidates: list[str]) -> list[float]:
        out = []
        for text in candidates:
            noise = random.Random(f"{seed}|{sigma}|{query}|{text}").gauss(0.0, sigma)
            out.append(noise + (2.0 if text == _answer_of[query] else -2.0))
        return out

    return score


_answer_of: dict[str, str] = {}


def measure(local: str | None = None) -> dict:
    from helpers.scoring import calibration
    from helpers.scoring.bm25 import bm25_scores

    items = calibration.ITEMS
    _answer_of.update({i.query: i.candidates[i.answer] for i in items})
    model = _embedder()
    rows = {
        "Agent Zero's embedder (all-MiniLM-L6-v2)": _measured(items, lambda q, c: _cosines(model, q, c)),
        "built-in BM25": _measured(items, bm25_scores),
    }
    if local:
        from sentence_transformers import CrossEncoder

        encoder = CrossEncoder(local, device="cpu")
        rows[f"cross-encoder {Path(local).name}"] = _measured(
            items, lambda q, c: [float(s) for s in encoder.predict([(q, t) for t in c])], "probability"
        )
    embedder = rows["Agent Zero's embedder (all-MiniLM-L6-v2)"][0]
    out = {"items": len(items), "embedder": round(embedder, 3), "scorers": {}, "noise": {}}
    for name, (mrr, unrelated, called) in rows.items():
        trust = calibration.Trust.from_figures(
            mrr, embedder, questions=len(items), unrelated_above=unrelated, unrelated_relevant=called
        )
        out["scorers"][name] = {
            "mrr": round(mrr, 3),
            "say": trust.say,
            "unrelated_above": None if unrelated is None else round(unrelated, 3),
            "unrelated_relevant": None if called is None else round(called, 3),
            "means_relevant": trust.means_relevant,
            "where_words_lead": _where_words_lead(trust),
        }
    for sigma in (1.0, 2.0, 3.0, 4.0, 6.0):
        runs = [_measured(items, _noisy(sigma, seed), "logit") for seed in range(NOISE_RUNS)]
        trusts = [
            calibration.Trust.from_figures(m, embedder, questions=len(items), unrelated_above=u, unrelated_relevant=r)
            for m, u, r in runs
        ]
        says = [t.say for t in trusts]
        led = [_where_words_lead(t) for t in trusts]
        shares = [u for _, u, _ in runs if u is not None]
        called = [r for _, _, r in runs if r is not None]
        out["noise"][f"σ{sigma:g}"] = {
            "mean": round(statistics.mean(m for m, _, _ in runs), 3),
            "sd": round(statistics.pstdev(m for m, _, _ in runs), 3),
            **{s: round(says.count(s) / len(says), 3) for s in ("none", "some", "full")},
            "unrelated_above": round(statistics.mean(shares), 3) if shares else None,
            "unrelated_above_min": round(min(shares), 3) if shares else None,
            "full_where_words_lead": round(led.count("full") / len(led), 3),
            "unrelated_relevant": round(statistics.mean(called), 3) if called else None,
            "unrelated_relevant_min": round(min(called), 3) if called else None,
            "keeps_below": round(sum(t.keeps_unrelated_below for t in trusts) / len(trusts), 3),
            "means_relevant": round(sum(t.means_relevant for t in trusts) / len(trusts), 3),
        }
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="rebuild the items drawn from the tuning half")
    parser.add_argument("--local", metavar="DIR", help="also a cross-encoder model folder, in process")
    parser.add_argument(
        "--hand-written-only", action="store_true", help="measure the first 12 items alone (the set before)"
    )
    args = parser.parse_args(argv)
    if args.write:
        write()
        return
    from helpers.scoring import calibration

    if args.hand_written_only:
        calibration.ITEMS = calibration.ITEMS[:HAND_WRITTEN]
    result = measure(args.local)
    print(f"{result['items']} items; Agent Zero's embedder MRR {result['embedder']}")
    for name, row in result["scorers"].items():
        print(
            f"  {name:45} MRR {row['mrr']:.3f}  say {row['say']}  unrelated at or above the answer "
            f"{row['unrelated_above']}, called relevant {row['unrelated_relevant']} (its line read: "
            f"{row['means_relevant']})  where the words lead: {row['where_words_lead']}"
        )
    print(
        f"noise on the oracle's logit (±2), {NOISE_RUNS} runs each: MRR mean ± sd, share of runs per say; the share "
        "of unrelated memories at or above the answer (mean, lowest run) and called relevant (a logit of 0 or more); "
        "share of runs with full say where the words lead, that keep them below, whose line can be read"
    )
    for name, row in result["noise"].items():
        print(
            f"  {name:5} {row['mean']:.3f} ± {row['sd']:.3f}   none {row['none']:.2f}  some {row['some']:.2f}  full "
            f"{row['full']:.2f}   unrelated {row['unrelated_above']} (lowest {row['unrelated_above_min']})   "
            f"full where the words lead {row['full_where_words_lead']:.2f}   called relevant "
            f"{row['unrelated_relevant']} (lowest {row['unrelated_relevant_min']})   "
            f"keep below {row['keeps_below']:.2f}   line read {row['means_relevant']:.2f}"
        )
    if not math.isfinite(result["embedder"]):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
