"""Uninstall leaves nothing behind: the stored API key leaves usr/.env (its own lines only,
every other byte unchanged) and the process environment, and the plugin's background
threads stop. Driven through the stand-in host's hook call path and its dotenv helpers;
the removal itself is checked against python-dotenv, the parser the host loads usr/.env
with."""

from __future__ import annotations

import asyncio
import io
import logging
import os
import re
import shutil
import sys
import threading
from pathlib import Path

import pytest
from dotenv import dotenv_values
from dotenv.parser import parse_stream
from hypothesis import given, settings as hsettings, strategies as st

from helpers import envfile, lifecycle
from helpers.settings import API_KEY_ENV
from tests.host.harness import MOUNT_EXCLUDE, REPO_ROOT, host_root

KEY = API_KEY_ENV
SECRET = "sk-uninstall-0123456789"


# --- the removal, case by case ---------------------------------------------------------------

CASES = [
    # (file, expected after removing KEY)
    (f"A=1\n\n{KEY}=sk-1\n", "A=1\n\n"),  # the blank line Agent Zero's save put before it stays
    (f"# top\nA=1\n{KEY}=sk-1\n# tail\nB=2\n", "# top\nA=1\n# tail\nB=2\n"),
    (f"A=1\r\nexport {KEY} = 'x y'  # note\r\nB=2\r\n", "A=1\r\nB=2\r\n"),  # CRLF kept
    (f"A=1\n{KEY}=x", "A=1"),  # no final newline before: none after
    (f"A=1\r\n{KEY}=x", "A=1"),
    (f"A=1\n\n{KEY}=x", "A=1\n"),
    (f"{KEY}=x", ""),
    (f"A=1\n{KEY}=1\n{KEY}=2", "A=1"),  # every binding of it
    (f'A=1\n{KEY}="multi\nline\nvalue"\nB=2\n', "A=1\nB=2\n"),  # all of a multi-line value
    (f"A=1\n{KEY}='it\\'s\nstill the value'\nB=2\n", "A=1\nB=2\n"),
    (f'OTHER="one\n{KEY}=inside another value\n"\nB=2\n', None),  # not a binding: untouched
    (f"{KEY}_OLD=1\nX{KEY}=2\n# {KEY}=3\n", None),  # other names, a comment
    (f"   {KEY}=indented\nA=1\n", "A=1\n"),
    (f"\t{KEY} =\tspaced # comment\nA=1\n", "A=1\n"),
    (f"'{KEY}'=quoted-key\nA=1\n", "A=1\n"),
    (f"{KEY}\nA=1\n", "A=1\n"),  # a bare name is a binding too (value None)
    (f"{KEY}=\nA=1\n", "A=1\n"),
    (f'{KEY}="unterminated\nB=2\n', None),  # python-dotenv rejects the line: the host never loaded it
    (f"\ufeff{KEY}=x\nA=1\n", "\ufeffA=1\n"),  # a byte-order mark stays
    (f"A=1\n\n\n{KEY}=x\n\n\nB=2\n", "A=1\n\n\n\n\nB=2\n"),
    ("A=1\nB=2\n", None),
    ("", None),
]


@pytest.mark.parametrize("text, expected", CASES)
def test_without_removes_only_the_variables_own_lines(text, expected):
    assert envfile.without(text, KEY) == (text if expected is None else expected)


def test_remove_variable_rewrites_in_place_and_keeps_bytes_that_are_not_utf8(tmp_path):
    path = tmp_path / ".env"
    path.write_bytes(b"LATIN=caf\xe9\r\n" + f"{KEY}=x\r\n".encode() + b"B=\xff\xfe")
    inode = path.stat().st_ino
    path.chmod(0o640)
    assert envfile.remove_variable(str(path), KEY) is True
    assert path.read_bytes() == b"LATIN=caf\xe9\r\nB=\xff\xfe"
    assert path.stat().st_ino == inode and path.stat().st_mode & 0o777 == 0o640  # a bind mount stays one
    assert envfile.remove_variable(str(path), KEY) is False  # nothing left to remove
    assert envfile.remove_variable(str(tmp_path / "missing.env"), KEY) is False
    assert not (tmp_path / "missing.env").exists()


# --- the removal against python-dotenv, on generated files ------------------------------------

LINES = [
    "A=1",
    "B = two words",
    "export C=3",
    "'D'=4",
    "E='single quoted'",
    'F="not # a comment"',
    "G=x # comment",
    "# comment",
    "",
    "   ",
    "  H=indented",
    'ESC="a\\"b"',
    "Q='it\\'s'",
    f"{KEY}=sk-1",
    f"export {KEY} = 'sk 2'",
    f'{KEY}="multi\nline"',
    f"  {KEY}=x  # c",
    f"'{KEY}'=y",
    KEY,
    f"{KEY}=",
    f"{KEY}_OLD=1",
    f"X{KEY}=2",
    f"# {KEY}=3",
    f'OTHER="one\n{KEY}=inside\n"',
    'BROKEN="unterminated',
    "=novalue",
    'K="a" trailing',
    "'",
    f'{KEY}="a\\"b"',
    f'{KEY}="ends in an escaped quote\\"',
    f"{KEY}='x\\\\'",
    'W="\\\\"',
    "'Z'",
    f"{KEY}#not-the-value=1",
    "HASH#IN=1",
]


def _dotenv_oracle(text: str) -> str:
    """What removing KEY must give for an LF-only ``text``, from python-dotenv's own parse:
    each of KEY's bindings loses its lines, keeping the blank lines python-dotenv counts
    as the binding's leading whitespace."""
    out = []
    for binding in parse_stream(io.StringIO(text)):
        original = binding.original.string
        if binding.key == KEY and not binding.error:
            leading = re.match(r"\s*", original).group()
            original = leading[: leading.rfind("\n") + 1]
        out.append(original)
    kept = "".join(out)
    if not text.endswith("\n") and kept.endswith("\n"):
        kept = kept[:-1]
    return kept


@hsettings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(LINES), max_size=12), st.booleans(), st.booleans())
def test_removal_matches_python_dotenv(lines, final_newline, crlf):
    text = "\n".join(lines) + ("\n" if final_newline and lines else "")
    expected = _dotenv_oracle(text)
    if crlf:  # the host reads in text mode, so CRLF parses as LF; the bytes must stay CRLF
        text, expected = text.replace("\n", "\r\n"), expected.replace("\n", "\r\n")
    parsed = [b.key for b in parse_stream(io.StringIO(text.replace("\r\n", "\n"))) if b.key is not None]
    # (a quoted key may span lines: compare it as the host reads it)
    assert [b.key.replace("\r\n", "\n") for b in envfile.bindings(text) if b.key is not None] == parsed
    kept = envfile.without(text, KEY)
    assert kept == expected
    normalized = kept.replace("\r\n", "\n")
    values = dotenv_values(stream=io.StringIO(text.replace("\r\n", "\n")))
    values.pop(KEY, None)
    assert dotenv_values(stream=io.StringIO(normalized)) == values
    assert KEY not in dotenv_values(stream=io.StringIO(normalized))


# --- through the host: the uninstall hook ------------------------------------------------------


def test_uninstall_takes_the_saved_key_out_of_usr_env_and_the_environment(host):
    from helpers import dotenv

    env_path = host.root / "usr" / ".env"
    before = b"# Agent Zero settings\nAPI_KEY_OPENAI=sk-openai\n\nAUTH_LOGIN=admin\nA0_SET_x__y='quoted value'  # why\n"
    env_path.write_bytes(before)
    dotenv.load_dotenv()
    host.save_config({"rerank_endpoint": "https://api.example.com", "rerank_api_key": SECRET})  # the panel's Save
    assert env_path.read_bytes() == before + f"{KEY}={SECRET}\n".encode()
    assert dotenv.get_dotenv_value(KEY) == SECRET

    assert host.call_hook("uninstall") is None

    assert env_path.read_bytes() == before  # only the key's line went
    assert dotenv.get_dotenv_value(KEY) is None
    dotenv.load_dotenv()  # what the next start does: the key does not come back
    assert dotenv.get_dotenv_value(KEY) is None
    assert dotenv.get_dotenv_value("API_KEY_OPENAI") == "sk-openai"
    assert dotenv.get_dotenv_value("A0_SET_x__y") == "quoted value"


def test_uninstall_keeps_a_hand_edited_usr_env_byte_for_byte(host):
    """CRLF, an exported multi-line key, a look-alike inside another value, no final newline."""
    from helpers import dotenv

    env_path = host.root / "usr" / ".env"
    lines = [
        "# edited on Windows",
        "AUTH_LOGIN=admin",
        "",
        f'export {KEY}="{SECRET}',
        'continued"  # mine',
        'NOTES="remember:',
        f"{KEY}=not a binding",
        '"',
        "   ",
        f"{KEY}_BACKUP=keep-me",
        "TAIL=1",
    ]
    env_path.write_bytes("\r\n".join(lines).encode())
    dotenv.load_dotenv()
    assert dotenv.get_dotenv_value(KEY) == f"{SECRET}\ncontinued"

    host.call_hook("uninstall")

    kept = lines[:3] + lines[5:]
    assert env_path.read_bytes() == "\r\n".join(kept).encode()
    assert dotenv.get_dotenv_value(KEY) is None
    assert dotenv.get_dotenv_value(f"{KEY}_BACKUP") == "keep-me"


def test_uninstall_without_usr_env_creates_none(host):
    host.setenv(KEY, SECRET)  # from the container's environment, say
    host.call_hook("uninstall")
    assert not (host.root / "usr" / ".env").exists()
    assert KEY not in os.environ


def test_uninstall_never_raises_when_usr_env_cannot_be_rewritten(host, caplog):
    (host.root / "usr" / ".env").mkdir()  # not a file: reading it fails
    host.setenv(KEY, SECRET)
    with caplog.at_level(logging.WARNING, logger="a0_reranker"):
        assert host.call_hook("uninstall") is None
    assert "could not remove the stored API key" in caplog.text
    assert SECRET not in caplog.text
    assert KEY not in os.environ


def test_pre_update_keeps_the_key(host):
    from helpers import dotenv

    host.save_config({"rerank_api_key": SECRET})
    saved = (host.root / "usr" / ".env").read_bytes()
    host.call_hook("pre_update")
    assert (host.root / "usr" / ".env").read_bytes() == saved
    assert dotenv.get_dotenv_value(KEY) == SECRET


def test_deleting_the_plugin_from_the_ui_path_removes_the_key(tmp_path, monkeypatch):
    """plugins.uninstall_plugin, as the Plugins panel's delete calls it: the hook, then the
    files. On a copy of the repository, since the plugin folder is deleted."""
    copy = tmp_path / "repo"
    shutil.copytree(REPO_ROOT, copy, ignore=shutil.ignore_patterns(*MOUNT_EXCLUDE, "test-output", "bench", "docs"))
    # the host finds only the copy (the harness takes the mounted repository off sys.path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if Path(p or ".").resolve() != REPO_ROOT])
    h = host_root(tmp_path / "host", repo=copy)
    try:
        from helpers import dotenv, plugins

        env_path = h.root / "usr" / ".env"
        env_path.write_text("AUTH_LOGIN=admin\n")
        h.save_config({"rerank_api_key": SECRET})
        plugins.uninstall_plugin("a0_reranker")
        assert not h.plugin_dir.exists()
        assert env_path.read_text() == "AUTH_LOGIN=admin\n"
        assert dotenv.get_dotenv_value(KEY) is None
    finally:
        h.close()


# --- background work -------------------------------------------------------------------------------

LEXICAL = {"rerank_api": "lexical"}


def _plugin_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith(lifecycle.THREAD_PREFIX) and t.is_alive()]


def test_uninstall_stops_the_sync_bridge_and_the_shadow_log_writer(host):
    reranker = host.import_plugin("helpers.reranker")
    decision_log = host.import_plugin("helpers.report.decision_log")
    assert reranker.rerank("grafana port", ["grafana listens on 3000", "tea"], config=LEXICAL)[0][0] == 0
    log_path = host.root / "usr" / "shadow.jsonl"  # the only place the log may be written
    decision_log.record(str(log_path), {"n": 1})
    names = {t.name for t in _plugin_threads()}
    assert {"a0_reranker-sync", "a0_reranker-decision-log"} <= names

    host.call_hook("uninstall")

    assert _plugin_threads() == []
    assert log_path.read_text() == '{"n": 1}\n'  # a line queued before the stop was written
    # work starts again when asked for (after pre_update, the new code asks)
    assert reranker.rerank("grafana port", ["tea", "grafana listens on 3000"], config=LEXICAL)[0][0] == 1
    host.call_hook("pre_update")
    assert _plugin_threads() == []


def test_uninstall_stops_threads_an_older_copy_of_the_modules_started(host):
    """The host purges usr.plugins on plugin changes; a fresh copy of the modules does not
    know the old copy's threads, and uninstall must stop them anyway."""
    old = host.import_plugin("helpers.scoring.sync")
    old.rerank("q", ["a", "b"], config=LEXICAL)
    old_thread = host.import_plugin("helpers.scoring.own_loop").thread()
    host.purge("usr.plugins")
    assert host.import_plugin("helpers.scoring.sync") is not old
    host.call_hook("uninstall")
    assert not old_thread.is_alive()


def test_a_sync_call_waiting_while_uninstall_stops_the_loop_gets_its_default(host):
    reranker = host.import_plugin("helpers.reranker")
    reranker.rerank("q", ["a"], config=LEXICAL)  # the loop is running
    started, release = threading.Event(), threading.Event()

    async def slow():
        started.set()
        while not release.is_set():
            await asyncio.sleep(0.01)
        return "finished"

    results = []
    caller = threading.Thread(
        target=lambda: results.append(host.import_plugin("helpers.scoring.sync")._run_sync(slow, 30, "default"))
    )
    caller.start()
    assert started.wait(10)
    host.call_hook("uninstall")
    caller.join(10)
    release.set()
    assert results == ["default"]


# --- the registry ---------------------------------------------------------------------------------


def test_stop_background_work_runs_every_stopper_once_and_never_raises(caplog):
    calls = []

    def broken():
        calls.append("broken")
        raise RuntimeError("cannot stop")

    def fine():
        calls.append("fine")

    lifecycle.register_stopper(broken)
    lifecycle.register_stopper(fine)
    lifecycle.register_stopper(fine)
    with caplog.at_level(logging.WARNING, logger="a0_reranker"):
        assert lifecycle.stop_background_work() == []
    assert calls == ["broken", "fine"]
    assert "cannot stop" in caplog.text
    assert lifecycle.stop_background_work() == [] and calls == ["broken", "fine"]  # registrations are used up


def test_a_thread_that_does_not_stop_is_reported_not_waited_for_forever():
    done = threading.Event()
    thread = lifecycle.start_thread(done.wait, name="stubborn", stop=lambda: None)
    try:
        assert "a0_reranker-stubborn" in lifecycle.stop_background_work(timeout=0.2)
    finally:
        done.set()
        thread.join(5)
    assert not thread.is_alive()
