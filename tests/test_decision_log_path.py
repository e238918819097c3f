"""The decision log's path as hostile input: only a .jsonl file inside the Agent Zero tree's
usr/ is ever written. The settings modal's Save refuses any other path naming
rerank_shadow_log; a path that goes bad after the save (a link put in its place, a
config.json edited by hand) gets a warning once and no line, and never stops the writer."""

from __future__ import annotations

import logging
import threading

import pytest

from tests.host.recall import QUESTION, enabled_store


def recall_with_log(host, agent, path: str) -> None:
    """One recall with ``path`` in config.json as written by hand (no save hook), the log's
    lines written before returning."""
    host.set_config({"rerank_shadow_log": path, "rerank_cache": False})
    host.import_plugin("helpers.settings_cache").forget()
    result = host.run(host.recall(agent, QUESTION))
    assert result["error"] is None and result["memories"]
    host.import_plugin("helpers.report.decision_log").flush()


@pytest.fixture
def outside(tmp_path):
    """A folder outside the Agent Zero tree holding a ~/.bashrc-like file."""
    folder = tmp_path / "home"
    folder.mkdir()
    (folder / ".bashrc").write_text("export PATH=$PATH:/opt/bin\n")
    (folder / "log.jsonl").write_text("")
    return folder


REFUSED = {
    "home dotfile": lambda root, out: str(out / ".bashrc"),
    "tilde dotfile": lambda root, out: "~/.bashrc",
    "absolute .jsonl outside": lambda root, out: str(out / "log.jsonl"),
    "climbing out of usr": lambda root, out: "usr/../../home/log.jsonl",
    "dot-dot that stays inside": lambda root, out: "usr/plugins/../shadow.jsonl",
    "the agent zero folder, not usr": lambda root, out: "shadow.jsonl",
    "not a .jsonl file": lambda root, out: "usr/shadow.txt",
    "only a suffix": lambda root, out: "usr/.jsonl",
    "NUL": lambda root, out: "usr/sha\x00dow.jsonl",
    "line break": lambda root, out: "usr/sha\ndow.jsonl",
    "a folder that does not exist": lambda root, out: "usr/logs/shadow.jsonl",
    "a folder": lambda root, out: "usr/plugins.jsonl",
    # The file system's own refusal (ENAMETOOLONG), not a traceback out of Save.
    "a name longer than a file system allows": lambda root, out: "usr/" + "a" * 300 + ".jsonl",
    "a folder name longer than that": lambda root, out: "usr/" + "b" * 256 + "/x.jsonl",
}


@pytest.mark.parametrize("path_for", REFUSED.values(), ids=REFUSED.keys())
def test_save_refuses_a_shadow_log_path_outside_usr_naming_the_setting(host, outside, path_for):
    (host.root / "usr" / "plugins.jsonl").mkdir()
    with pytest.raises(ValueError, match="rerank_shadow_log"):
        host.save_config({"rerank_shadow_log": path_for(host.root, outside)})
    assert not host.config_path().exists()


def test_save_refuses_a_link_as_the_file_or_as_a_folder_inside_usr(host, outside):
    usr = host.root / "usr"
    (usr / "link.jsonl").symlink_to(outside / "log.jsonl")
    (usr / "logs").symlink_to(outside, target_is_directory=True)
    for path in ("usr/link.jsonl", "usr/logs/log.jsonl", str(usr / "logs" / "log.jsonl")):
        with pytest.raises(ValueError, match="rerank_shadow_log.*symbolic link"):
            host.save_config({"rerank_shadow_log": path})
    assert not host.config_path().exists()


def test_a_path_inside_usr_is_saved_relative_to_the_agent_zero_folder_and_written(host, monkeypatch, tmp_path):
    agent, _ = enabled_store(host)
    monkeypatch.chdir(tmp_path)  # relative to the Agent Zero folder, not to wherever the process is
    (host.root / "usr" / "logs").mkdir()
    for path in ("usr/logs/shadow.jsonl", str(host.root / "usr" / "absolute.jsonl")):
        host.save_config({"rerank_shadow_log": path})
        host.import_plugin("helpers.settings_cache").forget()
        host.run(host.recall(agent, QUESTION))
        host.import_plugin("helpers.report.decision_log").flush()
    assert (host.root / "usr" / "logs" / "shadow.jsonl").read_text().count("\n") >= 1
    assert (host.root / "usr" / "absolute.jsonl").read_text().count("\n") >= 1
    assert not (tmp_path / "usr").exists()


def test_a_hand_edited_path_outside_usr_is_warned_about_once_and_never_written(host, outside, monkeypatch, caplog):
    agent, _ = enabled_store(host)
    monkeypatch.setenv("HOME", str(outside))
    before = {p.name: p.read_bytes() for p in outside.iterdir()}
    with caplog.at_level(logging.WARNING, logger="a0_reranker"):
        for path in ("~/.bashrc", str(outside / "log.jsonl"), str(outside / "new" / "made.jsonl")):
            recall_with_log(host, agent, path)
            recall_with_log(host, agent, path)
    assert {p.name: p.read_bytes() for p in outside.iterdir()} == before  # no line, no new folder
    warnings = [r.getMessage() for r in caplog.records if "rerank_shadow_log" in r.getMessage()]
    assert len(warnings) == 3, warnings  # one per bad path, not one per recall


def test_a_link_put_in_place_of_the_log_after_save_gets_no_line(host, outside, caplog):
    agent, _ = enabled_store(host)
    log_file = host.root / "usr" / "shadow.jsonl"
    host.save_config({"rerank_shadow_log": "usr/shadow.jsonl"})
    log_file.unlink(missing_ok=True)
    log_file.symlink_to(outside / ".bashrc")
    before = (outside / ".bashrc").read_bytes()
    with caplog.at_level(logging.WARNING, logger="a0_reranker"):
        host.import_plugin("helpers.settings_cache").forget()
        host.run(host.recall(agent, QUESTION))
        host.import_plugin("helpers.report.decision_log").flush()
    assert (outside / ".bashrc").read_bytes() == before
    assert any("symbolic link" in r.getMessage() for r in caplog.records)


def test_a_nul_in_the_path_does_not_stop_the_writer(host, monkeypatch):
    agent, _ = enabled_store(host)
    crashed = []
    monkeypatch.setattr(threading, "excepthook", lambda args: crashed.append(args.exc_value))
    recall_with_log(host, agent, "usr/a\x00b.jsonl")
    recall_with_log(host, agent, "usr/after.jsonl")
    assert crashed == []
    assert (host.root / "usr" / "after.jsonl").read_text().count("\n") >= 1
