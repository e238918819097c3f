"""Stand-in for Agent Zero's helpers/files.py: paths are relative to the root that
contains this helpers/ folder (the temporary Agent Zero root in tests)."""

import glob
import json
import os
import re
import shutil
from fnmatch import fnmatch
from typing import Any

from helpers import yaml as yaml_helper

AGENTS_DIR = "agents"
PLUGINS_DIR = "plugins"
PROJECTS_DIR = "projects"
EXTENSIONS_DIR = "extensions"
USER_DIR = "usr"
TEMP_DIR = "tmp"
API_DIR = "api"

# the Agent Zero root is the parent of helpers/
_base_dir = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def get_base_dir() -> str:
    return _base_dir


def _resolve_path(*parts: str) -> str:
    if len(parts) == 1 and os.path.isabs(parts[0]):
        return parts[0]
    return os.path.join(_base_dir, *parts)


def get_abs_path(*relative_paths: str) -> str:
    return _resolve_path(*relative_paths)


def deabsolute_path(path: str) -> str:
    return os.path.relpath(path, _base_dir)


def is_in_dir(path: str, dir: str) -> bool:
    a, d = os.path.abspath(path), os.path.abspath(dir)
    return os.path.commonpath([a, d]) == d


def is_in_base_dir(path: str) -> bool:
    return is_in_dir(path, _base_dir)


def normalize_a0_path(path: str) -> str:
    return "/a0/" + deabsolute_path(path) if is_in_base_dir(path) else path


def exists(*relative_paths: str) -> bool:
    return os.path.exists(_resolve_path(*relative_paths))


def is_file(*relative_paths: str) -> bool:
    return os.path.isfile(_resolve_path(*relative_paths))


def is_dir(*relative_paths: str) -> bool:
    return os.path.isdir(_resolve_path(*relative_paths))


def basename(path: str, suffix: str | None = None) -> str:
    name = os.path.basename(path)
    return name.removesuffix(suffix) if suffix else name


def dirname(path: str) -> str:
    return os.path.dirname(path)


def read_file(relative_path: str, encoding: str = "utf-8") -> str:
    with open(get_abs_path(relative_path), "r", encoding=encoding) as f:
        return f.read()


def read_file_json(relative_path: str, encoding: str = "utf-8"):
    return json.loads(read_file(relative_path, encoding))


def read_file_yaml(relative_path: str, encoding: str = "utf-8"):
    return yaml_helper.loads(read_file(relative_path, encoding))


def write_file(relative_path: str, content: str, encoding: str = "utf-8") -> None:
    path = get_abs_path(relative_path)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding=encoding) as f:
        f.write(content)


def delete_file(relative_path: str) -> None:
    path = get_abs_path(relative_path)
    if os.path.exists(path):
        os.remove(path)


def delete_dir(relative_path: str) -> None:
    path = get_abs_path(relative_path)
    if os.path.islink(path):
        os.unlink(path)
    elif os.path.exists(path):
        shutil.rmtree(path, ignore_errors=True)


def make_dirs(relative_path: str) -> None:
    os.makedirs(os.path.dirname(get_abs_path(relative_path)), exist_ok=True)


def list_files(relative_path: str, filter: str = "*") -> list[str]:
    path = get_abs_path(relative_path)
    if not os.path.isdir(path):
        return []
    return [name for name in os.listdir(path) if fnmatch(name, filter)]


def get_subdirectories(relative_path: str, include: str | list[str] = "*",
                       exclude: str | list[str] | None = None) -> list[str]:
    path = get_abs_path(relative_path)
    if not os.path.isdir(path):
        return []
    inc = [include] if isinstance(include, str) else include
    exc = [exclude] if isinstance(exclude, str) else (exclude or [])
    return [
        name for name in os.listdir(path)
        if os.path.isdir(os.path.join(path, name))
        and any(fnmatch(name, p) for p in inc)
        and not any(fnmatch(name, p) for p in exc)
    ]


def find_existing_paths_by_pattern(pattern: str) -> list[str]:
    if not pattern:
        return []
    return sorted(glob.glob(get_abs_path(pattern), recursive=True))


def safe_file_name(filename: str) -> str:
    return re.sub(r"[^a-zA-Z0-9-._]", "_", filename)


# --- prompt files (a reduced form of the real templating: {{name}} placeholders) ----

def find_file_in_dirs(_filename: str, _directories: list[str]) -> str:
    for directory in _directories:
        candidate = get_abs_path(directory, _filename)
        if os.path.isfile(candidate):
            return candidate
    raise FileNotFoundError(
        f"File '{_filename}' not found in any of the provided directories."
    )


def replace_placeholders_text(_content: str, **kwargs) -> str:
    for key, value in kwargs.items():
        _content = _content.replace("{{" + key + "}}", str(value))
    return _content


def replace_placeholders_json(_content: str, **kwargs) -> str:
    for key, value in kwargs.items():
        _content = _content.replace("{{" + key + "}}", json.dumps(value))
    return _content


def remove_code_fences(text: str) -> str:
    return re.sub(r"(```|~~~)(.*?\n)(.*?)(\1)", lambda m: m.group(3), text, flags=re.DOTALL)


def is_full_json_template(text: str) -> bool:
    return bool(re.fullmatch(r"^\s*(```|~~~)\s*json\s*\n(.*?)\n\1\s*$", text.strip(), flags=re.DOTALL))


def read_prompt_file(_file: str, _directories: list[str] | None = None,
                     _encoding: str = "utf-8", **kwargs) -> str:
    dirs = list(_directories or [])
    if os.path.dirname(_file):
        dirs.insert(0, os.path.dirname(_file))
        _file = os.path.basename(_file)
    path = find_file_in_dirs(_file, dirs)
    with open(path, "r", encoding=_encoding) as f:
        content = f.read()
    variables = {k: v for k, v in kwargs.items() if not k.startswith("_")}
    return replace_placeholders_text(content, **variables)


def parse_file(_filename: str, _directories: list[str] | None = None,
               _encoding: str = "utf-8", **kwargs) -> Any:
    path = find_file_in_dirs(_filename, list(_directories or []))
    with open(path, "r", encoding=_encoding) as f:
        content = f.read()
    variables = {k: v for k, v in kwargs.items() if not k.startswith("_")}
    if is_full_json_template(content):
        return json.loads(replace_placeholders_json(remove_code_fences(content), **variables))
    return replace_placeholders_text(remove_code_fences(content), **variables)
