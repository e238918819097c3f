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
