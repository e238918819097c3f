"""Stand-in for helpers/dirty_json.py: strict JSON first, then a lenient retry."""
import json
import re


def try_parse(json_string: str):
    try:
        return json.loads(json_string)
    except json.JSONDecodeError:
        return DirtyJson.parse_string(json_string)


class DirtyJson:
    @staticmethod
    def parse_string(json_string: str):
        text = (json_string or "").strip()
        text = re.sub(r"^```(?:json)?\s*|\s*```$", "", text)
        match = re.search(r"[\[{].*[\]}]", text, flags=re.DOTALL)
        candidate = match.group(0) if match else text
        candidate = re.sub(r",\s*([\]}])", r"\1", candidate)
        try:
            return json.loads(candidate)
        except json.JSONDecodeError:
            return text or None
