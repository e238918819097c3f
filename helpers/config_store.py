"""Saving settings: validate and coerce them, and keep the API key out of ``config.json``.

The key goes to the host's ``usr/.env`` (``A0_RERANKER_API_KEY``); ``config.json`` and the
settings panel only ever hold the placeholder, which means "the stored key". Uninstalling
takes it out again (``forget_stored_key``).
"""

from __future__ import annotations

import os
from typing import Any, Callable, Mapping, MutableMapping

from . import envfile
from .report import shadow_path
from .settings import API_KEY_ENV, API_KEY_PLACEHOLDER, LIMITS, Settings, SettingsError, coerce, key_input, shown


def prepare_for_save(
    settings: Mapping[str, Any], save_secret: Callable[[str, str], None], stored: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """What to write to ``config.json``: every known key coerced, the key replaced by the
    placeholder (stored through ``save_secret``). ``stored`` is where a saved key is found
    (the process environment, which the host loads usr/.env into). Raises ``SettingsError``."""
    stored = os.environ if stored is None else stored
    checked = Settings.from_mapping(settings)  # the whole mapping must be valid, with its cross-checks
    if checked.shadow_log:
        try:
            shadow_path.resolve(checked.shadow_log)
        except shadow_path.PathRefused as exc:
            raise SettingsError("rerank_shadow_log", f"got {shown(checked.shadow_log)}: {exc}") from None
    out = {key: coerce(key, value) for key, value in settings.items() if key in LIMITS}
    key = key_input(settings.get("rerank_api_key"))  # "none" means no key here as everywhere
    if key and key != API_KEY_PLACEHOLDER:
        save_secret(API_KEY_ENV, key)
        out["rerank_api_key"] = API_KEY_PLACEHOLDER
    elif not key:
        if stored.get(API_KEY_ENV):
            save_secret(API_KEY_ENV, "")  # an emptied field means: forget the stored key
        out["rerank_api_key"] = ""
    else:
        out["rerank_api_key"] = API_KEY_PLACEHOLDER
    return out


def settings_or_none(mapping: Mapping[str, Any] | None) -> Settings | None:
    """The settings ``mapping`` makes (its key resolved as recall would), or None if it makes none."""
    try:
        return Settings.from_mapping(mapping or {})
    except SettingsError:
        return None


def connection_changed(before: Settings | None, after: Settings | None) -> bool:
    """Does a Save change what the reranker is asked with: the endpoint, the key, the model or
    the API? (An unreadable side counts as changed.)"""
    if before is None or after is None:
        return True
    seen = lambda s: (s.endpoint, s.key_fingerprint, s.model, s.api)  # noqa: E731
    return seen(before) != seen(after)


def dotenv_writer(dotenv_path: str, environ: MutableMapping[str, str] | None = None) -> Callable[[str, str], None]:
    """A ``save_secret`` for ``prepare_for_save`` that writes the host's usr/.env itself,
    instead of the host's ``save_dotenv_value``: that one writes the value raw (a line break
    in a key would add variables, ``${X}`` would send another secret, ``#`` would cut it)
    and turns CRLF into LF. An empty value removes the variable. The process environment
    gets the value the host would load from the file."""
    env = os.environ if environ is None else environ

    def save(name: str, value: str) -> None:
        if value:
            envfile.set_variable(dotenv_path, name, value)
            env[name] = value
        else:
            envfile.remove_variable(dotenv_path, name)
            env.pop(name, None)

    return save


def forget_stored_key(dotenv_path: str, environ: MutableMapping[str, str] | None = None) -> bool:
    """Remove the stored key from the dotenv file (only its own lines) and from the process
    environment the host loaded the file into. True when the file changed. Raises
    ``OSError`` when the file exists but cannot be rewritten."""
    try:
        return envfile.remove_variable(dotenv_path, API_KEY_ENV)
    finally:
        (os.environ if environ is None else environ).pop(API_KEY_ENV, None)
