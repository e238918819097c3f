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


class LocalSentenceTransformerWrapper(Embeddings):
    """The host's wrapper for local sentence-transformers models (models.py), with the same
    two methods: a query is encoded as a one-text batch, documents as one batch, no prompt
    or prefix either way. ``model`` may be a hub name or a local directory."""

    def __init__(self, provider: str, model: str, model_config: Optional[ModelConfig] = None, **kwargs: Any):
        from sentence_transformers import SentenceTransformer

        model = model.strip().strip('"').strip("'")
        if model.startswith("sentence-transformers/"):
            model = model[len("sentence-transformers/"):]
        allowed = {"device", "cache_folder", "use_auth_token", "revision", "trust_remote_code", "model_kwargs"}
        self.model = SentenceTransformer(model, **{k: v for k, v in (kwargs or {}).items() if k in allowed})
        self.model_name = model
        self.a0_model_conf = model_config

    def embed_documents(self, texts):
        embeddings = self.model.encode(texts, convert_to_tensor=False)
        return embeddings.tolist() if hasattr(embeddings, "tolist") else embeddings

    def embed_query(self, text):
        embedding = self.model.encode([text], convert_to_tensor=False)
        return embedding[0].tolist() if hasattr(embedding[0], "tolist") else embedding[0]


class LiteLLMChatWrapper:
    """The host's chat wrapper (models.py LiteLLMChatWrapper), the part a utility-model call
    uses: ``unified_call`` sends [system, user] through ``litellm.acompletion`` as
    "<provider>/<name>" with the config's kwargs (api_base, api_key), streaming when a
    callback is given as the host does, and returns (response, reasoning)."""

    def __init__(self, model: str, provider: str, model_config: Optional[ModelConfig] = None, **kwargs: Any):
        self.model_name = f"{provider}/{model}"
        self.provider = provider
        self.kwargs = kwargs
        self.a0_model_conf = model_config

    async def unified_call(self, system_message: str = "", user_message: str = "", response_callback=None, stream: bool | None = None,
                           **kwargs: Any):
        import litellm

        messages = []
        if system_message:
            messages.append({"role": "system", "content": system_message})
        if user_message:
            messages.append({"role": "user", "content": user_message})
        stream = bool(response_callback) if stream is None else stream
        completion = await litellm.acompletion(model=self.model_name, messages=messages, stream=stream, **{**self.kwargs, **kwargs})
        if not stream:
            return completion.choices[0].message.content or "", ""
        response = ""
        async for chunk in completion:
            delta = chunk.choices[0].delta.content or "" if chunk.choices else ""
            response += delta
            if response_callback and delta:
                await response_callback(delta, response)
        return response, ""


def get_chat_model(provider: str, name: str, model_config: Optional[ModelConfig] = None, **kwargs: Any) -> LiteLLMChatWrapper:
    return LiteLLMChatWrapper(name, provider, model_config=model_config, **kwargs)
