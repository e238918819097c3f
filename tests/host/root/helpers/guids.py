"""Stand-in for helpers/guids.py."""
import random
import string

_ALPHABET = string.ascii_letters + string.digits


def generate_id(length: int = 8) -> str:
    return "".join(random.choice(_ALPHABET) for _ in range(length))
