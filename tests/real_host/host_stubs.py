"""The only modules this check fakes, installed before Agent Zero is imported.

whisper: helpers/settings.py imports helpers/whisper.py, which imports it at start-up, but
only speech-to-text uses it, and openai-whisper pulls in torch.

sentence_transformers: only when it cannot be imported (no torch wheel for this Python, or
not installed). Agent Zero's own embedding path still runs around it
(models.get_embedding_model -> LocalSentenceTransformerWrapper -> CacheBackedEmbeddings ->
MyFaiss); only the model inside is replaced, by a deterministic hashed-words embedder.
"""

from __future__ import annotations

import hashlib
import re
import sys
import types

import numpy as np

DIMENSIONS = 384  # all-MiniLM-L6-v2's, Agent Zero's default embedder
_TOKEN = re.compile(r"[a-z0-9]+")


def install() -> str:
    """Install the stubs; returns which embedder the host will use, for the output."""
    sys.modules["whisper"] = _whisper_stub()
    try:
        import sentence_transformers
    except Exception as exc:  # ImportError, or torch failing to load its libraries
        sys.modules["sentence_transformers"] = _sentence_transformers_standin()
        return f"stand-in (hashed words, {DIMENSIONS} dimensions; import sentence_transformers failed: {exc!r})"
    return f"sentence_transformers {getattr(sentence_transformers, '__version__', '?')} (real)"


def _whisper_stub() -> types.ModuleType:
    module = types.ModuleType("whisper")

    def load_model(*_args, **_kwargs):
        raise RuntimeError("whisper is stubbed by tests/real_host")

    module.load_model = load_model
    return module


def _embed(text: str) -> np.ndarray:
    # Words and their character trigrams hashed into signed buckets: texts sharing words
    # come out close, as with a real sentence embedder, and every run gives the same vectors.
    vector = np.zeros(DIMENSIONS, dtype=np.float32)
    for word in _TOKEN.findall(text.lower()):
        _add(vector, word, 2.0)
        for i in range(max(1, len(word) - 2)):
            _add(vector, word[i : i + 3], 0.5)
    # A shared component keeps unrelated texts mildly similar, as real sentence embeddings are;
    # without it every threshold the host uses would cut at nothing but exact word overlap.
    vector[0] += 0.8 * max(1.0, float(np.linalg.norm(vector)))
    norm = np.linalg.norm(vector)
    return vector / norm if norm else vector


def _add(vector: np.ndarray, token: str, weight: float) -> None:
    h = int.from_bytes(hashlib.blake2b(token.encode(), digest_size=8).digest(), "little")
    vector[h % DIMENSIONS] += weight if (h >> 20) & 1 else -weight


class HashedWordsSentenceTransformer:
    """What models.LocalSentenceTransformerWrapper needs of SentenceTransformer: encode()."""

    def __init__(self, model_name_or_path=None, **_kwargs):
        self.model_name = model_name_or_path

    def encode(self, sentences, convert_to_tensor=False, **_kwargs):
        single = isinstance(sentences, str)
        vectors = np.stack([_embed(s) for s in ([sentences] if single else sentences)])
        return vectors[0] if single else vectors


def _sentence_transformers_standin() -> types.ModuleType:
    module = types.ModuleType("sentence_transformers")
    module.SentenceTransformer = HashedWordsSentenceTransformer
    return module
