"""The screenshots the README and the Plugin Index draft show, in docs/screenshots/.

The browser test takes every screenshot into test-output/screenshots/<case>.png; the ones
named in SLOTS are also copied to docs/screenshots/<slot>.png, but only when asked with
A0_RERANKER_DOC_SCREENSHOTS=1:

    A0_RERANKER_DOC_SCREENSHOTS=1 bash tests/run.sh tests/test_browser_panel.py

Every run draws different pixels (servers on random ports, measured latencies), so copying
on every run would leave the committed images modified in each working tree that runs the
suite. tests/test_plugin_index.py checks that every slot's file is there.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

DOCS_SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
ENABLE = "A0_RERANKER_DOC_SCREENSHOTS"

# docs/screenshots/<slot>.png  <-  the browser test's case
SLOTS = {
    "settings-working-server": "working",
    "settings-failing-endpoint": "dead_endpoint",
    "settings-qwen3-template": "qwen3_template",
    "builtin-mode": "builtin_mode",  # the built-in mode (fusion, no server)
}
# The recall line in the chat is not here: the browser test drives the settings panel, not
# Agent Zero's chat; the README quotes the lines the tests produce instead.


def publish(case: str, screenshot: Path) -> list[Path]:
    """Copy ``case``'s screenshot into the slots it fills (when enabled); the copies made."""
    if os.environ.get(ENABLE) != "1":
        return []
    copies = []
    for slot, source in SLOTS.items():
        if source == case:
            DOCS_SCREENSHOTS.mkdir(parents=True, exist_ok=True)
            target = DOCS_SCREENSHOTS / f"{slot}.png"
            shutil.copyfile(screenshot, target)
            copies.append(target)
    return copies
