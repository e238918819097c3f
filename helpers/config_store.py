"""Saving settings: validate and coerce them, and keep the API key out of ``config.json``.

The key goes to the host's ``usr/.env`` (``A0_RERANKER_API_KEY``, or the scope's own variable
for a project or agent-profile Save, stored_key.py), and the origin of the endpoint it was
saved for is recorded beside it; ``config.json`` and the settings panel only ever hold the
placeholder, which means "the stored key". A placeholder saved with an endpoint of another
origin is refused: that key belongs to another server. Uninstalling takes every key and the
origins out again (``forget_stored_key``).
"""

from __future__ import annotations

import os
from typing import Any, Callable, Mapping, MutableMapping

from . import envfile, stored_key, vocabulary
from .report import decision_log_path
from .vocabulary import setting_words as words
from .settings import (
    API_KEY_ENV,
    API_KEY_PLACEHOLDER,
    LIMITS,
    Settings,
    SettingsError,
    coerce,
    key_input,
    shown,
    stored_value,
)


def prepare_for_save(
    settings: Mapping[str, Any],
    save_secret: Callable[[str, str], None],
    stored: Mapping[str, str] | None = None,
    *,
    scope: tuple[str, str] = ("", ""),
    previous: Mapping[str, Any] | None = None,
    origins: stored_key.Origins | None = None,
) -> dict[str, Any]:
    """What to write to ``config.json`` at ``scope`` (project, agent profile; global: both
    empty): every known key coerced, the key replaced by the placeholder (stored through
    ``save_secret`` in the scope's variable, its origin in ``origins``). ``stored`` is where a
    saved key is found (the process environment, which the host loads usr/.env into);
    ``previous`` is the config the scope had, whose key the placeholder means. Raises
    ``SettingsError``."""
    if not isinstance(settings, Mapping):  # a list or a string from a hand-made request
        raise SettingsError("config", words.not_a_mapping(type(settings).__name__))
    stored = os.environ if stored is None else stored
    origins = stored_key.Origins(None) if origins is None else origins
    # What the form says about the stored key's variable is the browser's, not ours: dropped
    settings = {k: v for k, v in settings.items() if k != stored_key.VARIABLE_FIELD}
    checked = Settings.from_mapping(settings, origins={})  # the whole mapping must be valid, with its cross-checks
    if checked.decision_log:
        try:
            decision_log_path.resolve(checked.decision_log)
        except decision_log_path.PathRefused as exc:
            raise SettingsError("rerank_shadow_log", f"got {shown(checked.decision_log)}: {exc}") from None
    out = {key: coerce(key, value) for key, value in settings.items() if key in LIMITS}
    variable = stored_key.variable_for(*scope)
    saved_for = stored_key.origin(checked.endpoint)
    key = key_input(settings.get("rerank_api_key"))  # "none" means no key here as everywhere
    if key and key != API_KEY_PLACEHOLDER:
        save_secret(variable, key)
        origins.set(variable, saved_for)
        out["rerank_api_key"] = API_KEY_PLACEHOLDER
    elif not key:
        if stored.get(variable):
            save_secret(variable, "")  # an emptied field means: forget the stored key
        origins.set(variable, None)
        out["rerank_api_key"] = ""
    else:
        _keep_stored_key(variable, saved_for, save_secret, stored, previous, origins)
        out["rerank_api_key"] = API_KEY_PLACEHOLDER
    if variable != API_KEY_ENV:
        out[stored_key.VARIABLE_FIELD] = variable
    return out


# The longest file name the common file systems take (bytes): a longer scope name made the
# host's own write fail with a traceback after the hook had let it through.
_NAME_MAX = 255


def scope_refusal(project_name: Any, agent_profile: Any) -> str | None:
    """Why a Save's scope names no folder of its own, or None. The host builds the config's
    path from these names unchecked (``determine_plugin_asset_path``): ``../../x`` would
    write config.json outside Agent Zero, so the plugin's hook refuses it first."""
    for what, name in (("project", project_name), ("agent profile", agent_profile)):
        if name in (None, ""):
            continue
        if (
            not isinstance(name, str)
            or name.strip() in (".", "..")
            or any(c in name for c in "/\\")
            or not name.isprintable()
            or len(name.encode("utf-8", "replace")) > _NAME_MAX
        ):
            return words.scope_not_a_folder(what, shown(name))
    return None


def refusal(settings: Any) -> SettingsError | None:
    """What Save would refuse in a form, asked before Save is pressed (api/settings_check.py):
    ``prepare_for_save``'s own checks on a dry run that stores nothing, no key written and no
    origin recorded. Whether a stored key may go to the form's endpoint is left to the panel's
    key hint, which knows the server the key was saved for; this check knows no stored key."""
    try:
        prepare_for_save(settings, lambda _variable, _value: None, {}, origins=stored_key.Origins(None))
    except SettingsError as exc:
        return exc
    return None


def _keep_stored_key(
    variable: str,
    saved_for: str,
    save_secret: Callable[[str, str], None],
    stored: Mapping[str, str],
    previous: Mapping[str, Any] | None,
    origins: stored_key.Origins,
) -> None:
    """The placeholder at Save: keep the key the scope's previous config meant, for an
    endpoint of the origin it was saved for only; else refuse, naming the setting. A scope's
    first Save of an inherited key gives the scope its own copy."""
    previous = previous if isinstance(previous, Mapping) else {}
    before = stored_key.variable_named(previous) or API_KEY_ENV
    key = stored_value(before, stored)
    if not key:
        return  # nothing stored: the placeholder means no key, as before
    bound = origins.get(before)
    if bound is None:  # saved before origins were recorded: it went with the endpoint saved with it
        bound = stored_key.origin(previous.get("rerank_endpoint"))
    if bound != saved_for:
        raise SettingsError("rerank_api_key", vocabulary.key_elsewhere(bound, saved_for) + " before saving")
    if before != variable:
        save_secret(variable, key)
    origins.set(variable, bound)


def bind_unbound_key(
    dotenv_path: str, global_config: Mapping[str, Any] | None, stored: Mapping[str, str] | None = None
) -> bool:
    """At start: the global key an older version stored has no origin recorded; bind it to the
    endpoint saved with it, so a later hand edit of config.json no longer takes it along. True
    when an origin was recorded. Raises ``OSError`` when the origins cannot be written."""
    stored = os.environ if stored is None else stored
    config = global_config if isinstance(global_config, Mapping) else {}
    saved_for = stored_key.origin(config.get("rerank_endpoint"))
    if not saved_for or config.get("rerank_api_key") != API_KEY_PLACEHOLDER or not stored.get(API_KEY_ENV):
        return False  # nothing stored, or nothing it was saved with
    origins = stored_key.Origins(stored_key.origins_path(dotenv_path))
    if origins.get(API_KEY_ENV) is not None:
        return False
    origins.set(API_KEY_ENV, saved_for)
    return True


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
    """Remove every stored key (the global one and each scope's) from the dotenv file (only
    their own lines) and from the process environment the host loaded the file into, and the
    recorded origins beside it. True when the file changed. Raises ``OSError`` when the file
    exists but cannot be rewritten."""
    env = os.environ if environ is None else environ
    try:
        return envfile.remove_variables(dotenv_path, stored_key.is_own_variable)
    finally:
        for name in [n for n in env if stored_key.is_own_variable(n)]:
            env.pop(name, None)
        stored_key.Origins(stored_key.origins_path(dotenv_path)).remove_file()
