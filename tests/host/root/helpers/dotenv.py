"""Stand-in for helpers/dotenv.py: usr/.env under the root, loaded into os.environ."""
import os
import re
from typing import Any

from dotenv import load_dotenv as _load_dotenv

from .files import get_abs_path

KEY_AUTH_LOGIN = "AUTH_LOGIN"
KEY_AUTH_PASSWORD = "AUTH_PASSWORD"
KEY_RFC_PASSWORD = "RFC_PASSWORD"
KEY_ROOT_PASSWORD = "ROOT_PASSWORD"


def get_dotenv_file_path() -> str:
    return get_abs_path("usr/.env")


def load_dotenv() -> None:
    _load_dotenv(get_dotenv_file_path(), override=True)


def get_dotenv_value(key: str, default: Any = None):
    return os.getenv(key, default)


def save_dotenv_value(key: str, value: str) -> None:
    value = "" if value is None else value
    path = get_dotenv_file_path()
    os.makedirs(os.path.dirname(path), exist_ok=True)
    lines: list[str] = []
    if os.path.isfile(path):
        with open(path, "r") as f:
            lines = f.readlines()
    pattern = re.compile(rf"^\s*{re.escape(key)}\s*=")
    replaced = False
    for i, line in enumerate(lines):
        if pattern.match(line):
            lines[i] = f"{key}={value}\n"
            replaced = True
    if not replaced:
        lines.append(f"\n{key}={value}\n")
    with open(path, "w") as f:
        f.writelines(lines)
    load_dotenv()
