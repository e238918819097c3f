"""Train the tiny BERT cross-encoder that the real servers in tests/real/ serve.

    .venv/bin/python -m tests.real.train_tiny_reranker      (one to two minutes on 2 cores)

It writes tests/real/tiny-reranker/ (config, safetensors weights, WordPiece vocabulary,
tokenizer files, about 1 MB), which is committed so CI never trains. Everything it learns
from is in this file or in examples/memories.txt: text the project wrote, no model hub, no
data set. A fixed seed and one thread make a rerun give the same weights on the same torch.

What the model must do is small: rank the detection probe's documents right with a clear
margin (so detection accepts it), put each question's answer above the other memories,
and score long filler lists low. The tests never trust what it learned beyond that: they
compare every score the server sends with the model's own output (sentence-transformers
in the test environment), so any quirk of the model is the expected answer.
"""

from __future__ import annotations

import json
import os
import random
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = Path(__file__).resolve().parent / "tiny-reranker"
sys.path.insert(0, str(ROOT))

from helpers.scoring.verdicts import IRRELEVANT, NEAR_MISS, PROBE_QUERY, RELEVANT  # noqa: E402

SEED = 0
MAX_TOKENS = 512  # what the tokenizer truncates a (query, document) pair to, like a real BERT

# (question, the memory that answers it): the memories are examples/memories.txt's lines.
QUESTIONS = {
    "which port does grafana use on atlas": "Grafana on atlas listens on port 3001",
    "how do I restart the grafana container": "To restart the Grafana container on atlas",
    "when do the photo backups run": "Nightly backups of the photos share",
    "what is the name of the home server": "The user's home server is a Proxmox box",
    "how should answers be formatted for the user": "The user prefers answers with shell commands",
    "why did docker lose dns on atlas": "Fixed: Docker on atlas lost DNS",
    "which laptop and shell does the user have": "The user's laptop is a ThinkPad",
    "how often does prometheus scrape the exporters": "Prometheus scrapes node_exporter",
    "what food does the user avoid": "The user is vegetarian",
    "where is the ledgerly project deployed": 'The side project "ledgerly"',
    "what are the user's working hours": "The user's timezone is Europe/Lisbon",
}
# Lists of many unrelated notes, like the ones the batch tests send.
FILLER = [
    "note {i}: the weather in town number {i} was mild",
    "memory {i} about something else entirely",
    "entry {i}: a shopping list with bread, milk and {i} apples",
]


def memories() -> list[str]:
    lines = (ROOT / "examples" / "memories.txt").read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def training_pairs() -> list[tuple[str, str, float]]:
    """(query, document, target logit)."""
    pairs = [(PROBE_QUERY, RELEVANT, 5.0), (PROBE_QUERY, NEAR_MISS, 0.0), (PROBE_QUERY, IRRELEVANT, -5.0)]
    docs = memories()
    numbers = random.Random(SEED)  # the notes' numbers vary, or the model keys on a digit
    for question, start in QUESTIONS.items():
        (answer,) = [d for d in docs if d.startswith(start)]
        pairs += [(question, d, 5.0 if d == answer else -4.0) for d in docs]
        pairs += [(question, f.format(i=i), -5.0) for f in FILLER for i in numbers.sample(range(2200), 4)]
    pairs += [(PROBE_QUERY, d, -5.0) for d in docs[:4]]
    return pairs


def vocabulary(pairs) -> list[str]:
    """Whole words from the training text, then every ASCII letter, digit and mark alone and
    as a ``##`` continuation, so any English text tokenizes without [UNK]."""
    words = sorted({w for q, d, _ in pairs for w in re.findall(r"\w+|[^\w\s]", f"{q} {d}".lower())})
    chars = [chr(c) for c in range(33, 127) if not chr(c).isupper()]
    pieces = [*chars, *("##" + c for c in chars if c.isalnum())]
    seen: set[str] = set()
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    return [t for t in [*specials, *pieces, *words] if not (t in seen or seen.add(t))]


def train(out: Path = OUT) -> float:
    import torch
    import transformers

    pairs = training_pairs()
    out.mkdir(parents=True, exist_ok=True)
    (out / "vocab.txt").write_text("\n".join(vocabulary(pairs)) + "\n", encoding="utf-8")
    tokenizer = transformers.BertTokenizerFast(
        vocab_file=str(out / "vocab.txt"), do_lower_case=True, model_max_length=MAX_TOKENS
    )
    config = transformers.BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=128,
        max_position_embeddings=MAX_TOKENS,
        num_labels=1,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    )
    torch.set_num_threads(1)
    torch.manual_seed(SEED)
    model = transformers.BertForSequenceClassification(config)
    batch = tokenizer(
        [q for q, _, _ in pairs], [d for _, d, _ in pairs], padding=True, truncation=True, return_tensors="pt"
    )
    target = torch.tensor([t for _, _, t in pairs])
    optimiser = torch.optim.Adam(model.parameters(), lr=1e-3)  # 2e-3 collapses to the mean
    model.train()
    for step in range(3000):  # noqa: B007 (read after the loop)
        loss = ((model(**batch).logits.squeeze(-1) - target) ** 2).mean()
        if loss.item() < 0.02:
            break
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
    if loss.item() >= 0.05:
        raise SystemExit(f"the tiny model did not fit its training pairs (loss {loss.item():.3f})")
    model.eval()
    model.save_pretrained(out, safe_serialization=True)
    tokenizer.save_pretrained(out)
    (out / "training.json").write_text(
        json.dumps(
            {
                "seed": SEED,
                "pairs": len(pairs),
                "steps": step,
                "loss": round(loss.item(), 5),
                "torch": torch.__version__,
                "transformers": transformers.__version__,
            },
            indent=1,
        )
        + "\n"
    )
    return loss.item()


if __name__ == "__main__":
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    print(f"final loss {train():.4f}; written to {OUT.relative_to(ROOT)}")
