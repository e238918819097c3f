"""Stand-in for helpers/yaml.py: safe YAML load/dump."""
import yaml


def loads(text: str):
    return yaml.safe_load(text)


def dumps(obj, **kwargs) -> str:
    return yaml.safe_dump(obj, **{"allow_unicode": True, "sort_keys": False, **kwargs})
