"""The leak oracle for the secret tests: every run of a key (or a password) that any reading
of an output holds (as sent, URL-decoded, JSON-unescaped, base64-decoded, any letter case, split
in a repr), and the reranker_status tool's text as the agent reads it."""

import base64
import binascii
import re
from urllib.parse import unquote, unquote_plus

# Quotes, a backslash, a slash and a plus: each is written differently by JSON, repr and URLs.
KEY = 'sk-"echo"\\key/+0123456789abcdefXYZ'
PIECE = 8  # a run of the key this long in an output is a leak


def _readings(text: str) -> list[str]:
    readings = [text, unquote(text), unquote_plus(text), text.replace("\\\\", "\\").replace('\\"', '"')]
    for run in re.findall(r"[A-Za-z0-9+/_-]{12,}", text):
        run = run.replace("-", "+").replace("_", "/")
        for start in range(4):
            piece = run[start:][: len(run[start:]) // 4 * 4]
            try:
                readings.append(base64.b64decode(piece).decode("latin-1"))
            except (binascii.Error, ValueError):
                pass
    for run in re.findall(r"[0-9A-Fa-f]{16,}", text):
        readings += [bytes.fromhex(run[start:][: (len(run) - start) // 2 * 2]).decode("latin-1") for start in (0, 1)]
    return readings


def leaked_pieces(text: str, key: str = KEY) -> list[str]:
    """Runs of the key (PIECE characters, any letter case, with or without the characters
    a repr or a list puts between its parts) found in any reading of ``text``."""
    strip = lambda s: re.sub(r"""["'\s,+\\|\[\]]""", "", s.lower())  # noqa: E731
    pieces = {key.lower()[i : i + PIECE] for i in range(len(key) - PIECE + 1)}
    pieces |= {strip(key)[i : i + PIECE] for i in range(len(strip(key)) - PIECE + 1)}
    found = []
    for reading in _readings(text):
        for candidate in (reading.lower(), strip(reading)):
            found += [p for p in pieces if p in candidate]
    return sorted(set(found))


async def status_tool_text(agent) -> str:
    tool = agent.get_tool(name="reranker_status", method=None, args={"probe": True}, message="", loop_data=None)
    return (await tool.execute(probe=True)).message
