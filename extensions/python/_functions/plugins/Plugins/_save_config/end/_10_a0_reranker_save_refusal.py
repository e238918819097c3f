from helpers.extension import Extension


class A0RerankerSaveRefusal(Extension):
    """Tell the user why a Save was refused, in the settings modal.

    Agent Zero's api/plugins.py answers any exception of ``_save_config`` with a 500 whose
    body is text (the error and its traceback), and its settings modal, which reads the
    answer as JSON, then shows only "Save failed". A value this plugin cannot use (a stored
    key kept for another server, an endpoint that is no URL, a log path outside the plugin)
    is refused by its save hook with ``SaveRefused``; this end extension of the
    ``@extensible`` ``Plugins._save_config`` (module ``plugins``: the host imports api files
    by their name) answers that refusal as ``{"ok": false, "error": why}``, which the modal
    shows. Any other exception, and every other plugin's Save, is left as the host has it.
    Never raises: an exception here would replace the Save's own outcome."""

    def execute(self, data=None, **kwargs):
        try:
            refusal = data.get("exception") if isinstance(data, dict) else None
            if not _is_refusal(refusal):
                return
            from usr.plugins.a0_reranker.helpers.host_calls import for_this_plugin

            if not for_this_plugin(data):
                return
            data["result"] = {"ok": False, "error": str(refusal)}
            data["exception"] = None
        except Exception:
            pass


def _is_refusal(exc) -> bool:
    # By name and home, not isinstance: the host's purge of usr.plugins modules may leave the
    # hook raising a class object other than the one this file would import.
    kind = type(exc)
    return kind.__name__ == "SaveRefused" and kind.__module__.startswith("usr.plugins.a0_reranker.")
