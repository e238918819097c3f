"""Stand-in for the project lookups of helpers/projects.py."""
from typing import TYPE_CHECKING

from helpers import files

if TYPE_CHECKING:
    from agent import AgentContext

PROJECTS_PARENT_DIR = "usr/projects"
PROJECT_META_DIR = ".a0proj"
CONTEXT_DATA_KEY_PROJECT = "project"


def get_projects_parent_folder() -> str:
    return files.get_abs_path(PROJECTS_PARENT_DIR)


def get_project_folder(name: str) -> str:
    return files.get_abs_path(get_projects_parent_folder(), name)


def get_project_meta(name: str, *sub_dirs: str) -> str:
    return files.get_abs_path(get_project_folder(name), PROJECT_META_DIR, *sub_dirs)


def get_context_project_name(context: "AgentContext") -> str | None:
    return context.get_data(CONTEXT_DATA_KEY_PROJECT)
