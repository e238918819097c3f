"""The README in Agent Zero's plugin list: the host renders it in its own page, where a link
or image relative to the repository is broken (it serves only a plugin's webui/ folder; seen
in the real web UI at agent0ai/agent-zero 2d95cd9f: 4 broken images, 19 links to "Not
Found"). The plugin's end extension of ``Plugins._get_doc`` shows them as text naming the
file; the README itself is unchanged."""

from __future__ import annotations

import re
from pathlib import Path

from helpers.readme_view import for_agent_zero

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
RELATIVE = re.compile(r"\]\((?!#|[a-z]+:|/)[^)]+\)", re.IGNORECASE)


def test_repository_links_and_images_become_text_naming_the_file():
    assert for_agent_zero("see [how it works](docs/how-it-works.md#the-wire).") == (
        "see how it works (`docs/how-it-works.md`)."
    )
    assert for_agent_zero("| ![A working server](docs/screenshots/a.png) |") == (
        "| _A working server_ (`docs/screenshots/a.png`) |"
    )
    assert for_agent_zero("[docs/settings.md](docs/settings.md)") == "`docs/settings.md`"
    assert for_agent_zero("[`LICENSE`](LICENSE) and ![](x.png)") == "`LICENSE` and `x.png`"


def test_page_anchors_and_absolute_urls_are_kept():
    text = "[judges](#choosing-a-judge), [TEI](https://github.com/x/y), [mail](mailto:a@b.c), [root](/api)"
    assert for_agent_zero(text) == text


def test_the_readme_keeps_no_relative_link_and_every_word():
    shown = for_agent_zero(README)
    assert RELATIVE.findall(README), "the README links its docs: this test would check nothing"
    assert not RELATIVE.findall(shown)
    assert shown.count("docs/screenshots/") == README.count("docs/screenshots/")
    for words in ("Choosing a judge", "Two commands", "What it must never do"):
        assert (words in README) == (words in shown)


def test_the_host_shows_the_readme_so_and_nothing_else_changed(host):
    def get_doc(doc: str, plugin: str = "a0_reranker"):
        answer = host.run(host.call_api("plugins", {"action": "get_doc", "plugin_name": plugin, "doc": doc}))
        return answer.get_json()

    readme = get_doc("readme")
    assert readme["ok"] and readme["filename"] == "README.md"
    assert readme["content"] == for_agent_zero(README) != README
    assert get_doc("license")["content"] == (host.plugin_dir / "LICENSE").read_text(encoding="utf-8")

    other = host.mount_plugin("other_plugin", {"README.md": "![shot](docs/a.png) [doc](docs/b.md)\n"})
    assert get_doc("readme", "other_plugin")["content"] == (other / "README.md").read_text()
