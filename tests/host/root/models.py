"""Stand-in for Agent Zero's models.py: the embedding-model pieces memory.py uses.
get_embedding_model() returns whatever `embedding_factory` builds (the test harness sets
it; by default a deterministic hashing embedding)."""
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Callable, Optional

from langchain_core.embeddings import Embeddings


class ModelType(Enum):
    CHAT = "Chat"
    EMBEDDING = "Embedding"


@dataclass
class ModelConfig:
    type: ModelType
    provider: str
    name: str
    api_key: str = ""
    api_base: str = ""
    ctx_length: int = 0
    limit_requests: int = 0
    limit_input: int = 0
    limit_output: int = 0
    vision: bool = False
    kwargs: dict = field(default_factory=dict)

    def build_kwargs(self):
        built = dict(self.kwargs or {})
        if self.api_key and "api_key" not in built:
            built["api_key"] = self.api_key
        if self.api_base and "api_base" not in built:
            built["api_base"] = self.api_base
        return built


# stand-in only: (provider, name, **kwargs) -> Embeddings
embedding_factory: Optional[Callable[..., Embeddings]] = None


def get_embedding_model(provider: str, name: str, model_config: Optional[ModelConfig] = None,
                        **kwargs: Any) -> Embeddings:
    if embedding_factory is None:
        raise RuntimeError("stand-in models.embedding_factory is not set")
    return embedding_factory(provider, name, **kwargs)
