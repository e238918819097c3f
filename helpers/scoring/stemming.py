"""The word search's stemmer: M. F. Porter's algorithm (1980), as the paper states it.

BM25 only matches what it stems alike. The suffix strip this replaced cut "-es" and "-s"
blindly, so "loves" became "lov" and never met "love", "hikes" never met "hike", "studies"
never met "study": in chat, where the question says "love" and the memory "loves", the word
search missed what it was for. Porter's stemmer is what Lucene's English analyzer and Anserini's
BM25 baselines use; no rule of it was chosen on this project's benches.

Only words of letters are stemmed: "2024-05-01", "c++", "node.js" and "v16" are kept whole.
"""

from __future__ import annotations

from functools import lru_cache

_VOWELS = frozenset("aeiou")


def _consonants(word: str) -> list[bool]:
    """Which letters are the paper's consonants: not a vowel, and "y" only first or after a
    vowel ("yes", "toy"; "syzygy" has two vowel y's). One pass: a run of y's alternates, and
    a memory of 4,000 y's costs no more than 4,000 other letters (asking each letter by
    asking the one before it recursed, and a long run of y's overflowed the stack)."""
    out: list[bool] = []
    for i, letter in enumerate(word):
        out.append(letter not in _VOWELS and (letter != "y" or i == 0 or not out[i - 1]))
    return out


def _measure(stem: str) -> int:
    """m in [C](VC)^m[V]: how many vowel-consonant runs the stem has."""
    kinds = _consonants(stem)
    return sum(1 for i in range(1, len(kinds)) if kinds[i] and not kinds[i - 1])


def _has_vowel(stem: str) -> bool:
    return not all(_consonants(stem))


def _double_consonant(word: str) -> bool:
    return len(word) >= 2 and word[-1] == word[-2] and _consonants(word)[-1]


def _cvc(word: str) -> bool:
    """Ends consonant-vowel-consonant, the last not w, x or y ("hop", "fil", but not "snow")."""
    if len(word) < 3 or word[-1] in "wxy":
        return False
    kinds = _consonants(word)
    return kinds[-3] and not kinds[-2] and kinds[-1]


def _step1a(word: str) -> str:
    if word.endswith(("sses", "ies")):
        return word[:-2]
    if word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def _step1b(word: str) -> str:
    if word.endswith("eed"):
        return word[:-1] if _measure(word[:-3]) > 0 else word
    for suffix in ("ed", "ing"):
        if word.endswith(suffix) and _has_vowel(word[: -len(suffix)]):
            stem = word[: -len(suffix)]
            if stem.endswith(("at", "bl", "iz")):
                return stem + "e"
            if _double_consonant(stem) and stem[-1] not in "lsz":
                return stem[:-1]
            if _measure(stem) == 1 and _cvc(stem):
                return stem + "e"
            return stem
    return word


def _step1c(word: str) -> str:
    return word[:-1] + "i" if word.endswith("y") and _has_vowel(word[:-1]) else word


_STEP2 = (
    ("ational", "ate"), ("tional", "tion"), ("enci", "ence"), ("anci", "ance"), ("izer", "ize"),
    ("abli", "able"), ("alli", "al"), ("entli", "ent"), ("eli", "e"), ("ousli", "ous"),
    ("ization", "ize"), ("ation", "ate"), ("ator", "ate"), ("alism", "al"), ("iveness", "ive"),
    ("fulness", "ful"), ("ousness", "ous"), ("aliti", "al"), ("iviti", "ive"), ("biliti", "ble"),
)  # fmt: skip
_STEP3 = (("icate", "ic"), ("ative", ""), ("alize", "al"), ("iciti", "ic"), ("ical", "ic"), ("ful", ""), ("ness", ""))
# Longest first, so "ement" is tried before "ment" and "ent", as the paper's table reads.
_STEP4 = (
    "ement", "ance", "ence", "able", "ible", "ment", "ant", "ent", "ion", "ism", "ate", "iti", "ous",
    "ive", "ize", "al", "er", "ic", "ou",
)  # fmt: skip


def _replace(word: str, rules: tuple[tuple[str, str], ...]) -> str:
    """The first rule whose suffix the word ends with decides: replaced when m > 0, else kept."""
    for suffix, replacement in rules:
        if word.endswith(suffix):
            stem = word[: -len(suffix)]
            return stem + replacement if _measure(stem) > 0 else word
    return word


def _step4(word: str) -> str:
    for suffix in _STEP4:
        if word.endswith(suffix):
            stem = word[: -len(suffix)]
            if _measure(stem) > 1 and (suffix != "ion" or stem.endswith(("s", "t"))):
                return stem
            return word
    return word


def _step5(word: str) -> str:
    if word.endswith("e"):
        stem = word[:-1]
        m = _measure(stem)
        if m > 1 or (m == 1 and not _cvc(stem)):
            word = stem
    if word.endswith("ll") and _measure(word) > 1:
        word = word[:-1]
    return word


@lru_cache(maxsize=65_536)  # a store's vocabulary: each distinct word is stemmed once
def stem(word: str) -> str:
    """The Porter stem of one lowercase word; words of two letters or fewer, and anything
    not made of letters alone, unchanged."""
    if len(word) <= 2 or not word.isalpha() or not word.isascii():
        return word
    word = _step1c(_step1b(_step1a(word)))
    word = _replace(word, _STEP2)
    word = _replace(word, _STEP3)
    return _step5(_step4(word))
