"""Stand-in for plugins/_model_config/helpers/model_config.py: the embedding model
config object Memory uses (provider/name from this plugin's config)."""
import models
from helpers import plugins


def get_embedding_model_config_object(agent=None) -> models.ModelConfig:
    config = plugins.get_plugin_config("_model_config", agent) or {}
    section = config.get("embedding_model") or {}
    return models.ModelConfig(
        type=models.ModelType.EMBEDDING,
        provider=section.get("provider", "huggingface"),
        name=section.get("name", "sentence-transformers/all-MiniLM-L6-v2"),
        api_base=section.get("api_base", ""),
        kwargs=dict(section.get("kwargs") or {}),
    )


def get_utility_model_config(agent=None) -> dict:
    """The utility_model section of this plugin's config (no per-chat override here)."""
    config = plugins.get_plugin_config("_model_config", agent) or {}
    return config.get("utility_model") or {}


def build_utility_model(agent=None):
    """The host's utility model: a LiteLLMChatWrapper from the utility_model section."""
    section = get_utility_model_config(agent)
    config = models.ModelConfig(type=models.ModelType.CHAT, provider=section.get("provider", ""), name=section.get("name", ""),
                                api_key=section.get("api_key", ""), api_base=section.get("api_base", ""),
                                kwargs=dict(section.get("kwargs") or {}))
    return models.get_chat_model(config.provider, config.name, model_config=config, **config.build_kwargs())
