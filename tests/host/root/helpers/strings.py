"""Stand-in for the part of helpers/strings.py the other helpers use."""


def sanitize_string(s: str, encoding: str = "utf-8") -> str:
    if not isinstance(s, str):
        s = str(s)
    return s.encode(encoding, "replace").decode(encoding, "replace")
