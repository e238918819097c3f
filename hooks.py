"""Agent Zero lifecycle hooks. The host loads this file on its own (not as a package
module), so plugin code is imported by its full ``usr.plugins.a0_reranker`` path.

``install`` must never raise: a failing install makes the host delete the plugin.
"""

import logging

log = logging.getLogger("a0_reranker")


def install():
    try:
        from usr.plugins.a0_reranker.helpers.recall import wrapper

        wrapper.ensure_wrapped()
    except Exception as exc:  # the next start or recall wraps instead
        log.warning("a0_reranker: install could not wrap the memory search: %s", exc)
    bind_unbound_key()  # after an update from a version that recorded no origins


def bind_unbound_key():
    """A key saved by an older version gets the origin of the endpoint saved with it. Never raises."""
    try:
        from helpers import dotenv, plugins
        from usr.plugins.a0_reranker.helpers import config_store
        from usr.plugins.a0_reranker.helpers.settings import PLUGIN_NAME

        config_store.bind_unbound_key(dotenv.get_dotenv_file_path(), plugins.get_plugin_config(PLUGIN_NAME))
    except Exception as exc:  # it stays bound to the endpoint configured with it until a Save
        log.warning("a0_reranker: could not record which server the stored key belongs to: %s", type(exc).__name__)


def uninstall():
    """Leave nothing behind: the wrap, background work, and the stored API key (in usr/.env
    and in this process's environment). Never raises: the host would keep the plugin."""
    _stop()
    try:
        from helpers import dotenv
        from usr.plugins.a0_reranker.helpers import config_store

        config_store.forget_stored_key(dotenv.get_dotenv_file_path())
    except Exception as exc:
        log.warning("a0_reranker: uninstall could not remove the stored API key from usr/.env: %s", exc)


def pre_update():
    # The pulled code will wrap again at the next start or recall; the key stays.
    _stop()


def _stop():
    try:
        from usr.plugins.a0_reranker.helpers.recall import wrapper

        wrapper.unwrap()
    except Exception as exc:
        log.warning("a0_reranker: could not unwrap: %s", exc)
    try:
        from usr.plugins.a0_reranker.helpers import lifecycle

        lifecycle.stop_background_work()
    except Exception as exc:
        log.warning("a0_reranker: could not stop background work: %s", exc)


def save_plugin_config(settings=None, project_name="", agent_profile="", **kwargs):
    """Validate and coerce the settings; move the API key into usr/.env. A value the plugin
    cannot use raises ``SaveRefused`` instead of being saved: the host's settings modal shows
    its message through the plugin's end extension of ``Plugins._save_config``
    (extensions/python/_functions/plugins/Plugins/_save_config/end/)."""
    from helpers import dotenv, plugins
    from usr.plugins.a0_reranker.helpers import config_store, settings_cache, stored_key
    from usr.plugins.a0_reranker.helpers.errors import SaveRefused
    from usr.plugins.a0_reranker.helpers.scoring import probing, score
    from usr.plugins.a0_reranker.helpers.settings import PLUGIN_NAME, SettingsError

    refused = config_store.scope_refusal(project_name, agent_profile)
    if refused:
        raise SaveRefused(refused)
    try:  # what this scope had before the Save (its own config, else what it inherits)
        previous = plugins.get_plugin_config(
            PLUGIN_NAME, project_name=project_name or "", agent_profile=agent_profile or ""
        )
    except Exception:  # an unreadable old config: the Save replaces it
        previous = None
    before = config_store.settings_or_none(previous)
    dotenv_path = dotenv.get_dotenv_file_path()
    try:
        saved = config_store.prepare_for_save(
            settings or {},
            config_store.dotenv_writer(dotenv_path),
            scope=(project_name or "", agent_profile or ""),
            previous=previous,
            origins=stored_key.Origins(stored_key.origins_path(dotenv_path)),
        )
    except SettingsError as exc:
        raise SaveRefused(str(exc)) from None
    settings_cache.forget()
    probing.forget()
    after = config_store.settings_or_none(saved)
    if config_store.connection_changed(before, after):
        score.close_breakers(before, after)  # the Save may be what fixes it: ask again at once
    return saved
