"""Where the decision log (``rerank_shadow_log``) may be written: a ``.jsonl`` file inside the
Agent Zero tree's ``usr/`` folder, and nowhere else.

The log holds the user's words (the reranker's query), so a path typed into the settings
panel or written by an LLM must not reach ``~/.bashrc``, a file outside Agent Zero, or a
symbolic link that points out of ``usr/``. The rule lives here; the save hook refuses a
path it breaks, and the log's writer asks again before every line (a link made after the
save, a config.json edited by hand), writing nothing when it is broken.

The Agent Zero folder is the one holding this plugin at ``<root>/usr/plugins/<plugin>``,
taken from where the host imported the plugin, not resolved (a plugin folder mounted from
elsewhere still belongs to the tree it is mounted in). That is the host's own base folder
(``helpers.files.get_base_dir``: the parent of its ``helpers/``, whose ``usr/plugins`` the
plugin is loaded from). A copy outside such a tree (a checkout running the CLI) takes the
current folder, which is where the host runs from. Relative paths start at that folder:
``usr/reranker-shadow.jsonl``.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePath

from ..vocabulary import setting_words as words

SUFFIX = ".jsonl"
EXAMPLE = "usr/reranker-shadow.jsonl"


class PathRefused(ValueError):
    """The path breaks the rule; the message says how, without naming the setting."""


def agent_zero_root() -> Path:
    plugin = Path(os.path.abspath(__file__)).parents[
        2
    ]  # helpers/report/ -> the plugin; abspath: normalised, links kept
    if plugin.parent.name == "plugins" and plugin.parent.parent.name == "usr":
        return plugin.parent.parent.parent
    return Path.cwd()


def resolve(raw: str, root: Path | None = None) -> Path:
    """The file ``raw`` names, checked against the rule as the disk is now. Raises
    ``PathRefused``."""
    if any(not c.isprintable() for c in raw):
        raise PathRefused(words.PATH_CONTROL)
    if not raw.endswith(SUFFIX) or raw.endswith("/" + SUFFIX):
        raise PathRefused(words.path_suffix(SUFFIX, EXAMPLE))
    if ".." in PurePath(raw).parts:
        raise PathRefused(words.PATH_DOTDOT)
    root = agent_zero_root() if root is None else root
    usr = root / "usr"
    target = Path(os.path.normpath(raw if os.path.isabs(raw) else root / raw))
    try:
        inside = target.relative_to(usr).parts
    except ValueError:
        inside = ()
    if not inside:
        raise PathRefused(words.path_outside_usr(usr, root, EXAMPLE))
    try:
        _check_on_disk(usr, inside, target)
    except OSError as exc:  # a name longer than the file system allows, a folder it may not read
        raise PathRefused(words.path_unusable(exc.strerror or type(exc).__name__)) from None
    return target


def _check_on_disk(usr: Path, inside: tuple[str, ...], target: Path) -> None:
    step = usr
    for part in inside:
        step = step / part
        if step.is_symlink():
            raise PathRefused(words.path_symlink(step))
    if not target.parent.is_dir():
        raise PathRefused(words.path_no_folder(target.parent))
    if target.exists() and not target.is_file():
        raise PathRefused(words.path_not_file(target))


def open_for_append(target: Path) -> int:
    """A descriptor appending to ``target``, refusing a link put in its place since
    ``resolve`` looked (O_NOFOLLOW). Raises ``OSError``."""
    return os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
