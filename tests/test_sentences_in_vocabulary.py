"""Every sentence a user reads is written in the vocabulary (helpers/vocabulary/): a test
fails when one is written anywhere else in the plugin's runtime code (tests/sentences.py says
what counts as one). The few left out are not for a user to read, or must be written where
they are; each says why."""

import textwrap

from tests import sentences

# (module, the literal as the scan reads it: an f-string's parts joined with {}) -> why it is left there
NOT_IN_THE_VOCABULARY = {
    ("helpers/scoring/verdicts.py", "What is the capital of France?"): "the probe's query, sent to a reranker",
    ("helpers/scoring/verdicts.py", "Paris is the capital and largest city of France."): "a probe document",
    (
        "helpers/scoring/verdicts.py",
        "Lyon is a large city in the south-east of France, known for its cuisine.",
    ): "a probe document",
    (
        "helpers/scoring/verdicts.py",
        "Photosynthesis converts sunlight into chemical energy in green plants.",
    ): "a probe document",
    ("tools/reranker_status.py", "The reranker status could not be read: {}: "): "the tool's last word, likewise",
}
STOPWORDS = "helpers/scoring/bm25.py"  # the word matcher's stop words: data, not a sentence


def _found():
    return {
        (module, text): line
        for module, found in sentences.outside_vocabulary().items()
        for line, text in found
        if module != STOPWORDS or not text.startswith("a an and are")
    }


def test_no_sentence_a_user_reads_is_written_outside_the_vocabulary():
    elsewhere = [
        f"{m}:{line}: {text[:100]!r}" for (m, text), line in _found().items() if (m, text) not in NOT_IN_THE_VOCABULARY
    ]
    assert not elsewhere, "write these in helpers/vocabulary/:\n" + "\n".join(sorted(elsewhere))


def test_every_sentence_left_out_is_still_there_and_says_why():
    found = _found()
    assert [key for key in NOT_IN_THE_VOCABULARY if key not in found] == []
    assert all(why.strip() for why in NOT_IN_THE_VOCABULARY.values())


def test_the_scan_sees_a_sentence_and_not_docstrings_logs_or_code(tmp_path):
    module = tmp_path / "module.py"
    module.write_text(
        textwrap.dedent(
            '''
            """A module docstring with enough words in it."""
            import logging
            log = logging.getLogger("x")
            PATTERN = r"(?:some words here)\\s+"
            table: "dict[str, list[int]]" = {}

            def f(name):
                """A function docstring, also long enough."""
                log.info("an operator reads this log line %s", name)
                if name:
                    raise ValueError(f"the setting {name} holds no value a user can use")
                return "a plain sentence the user reads"
            '''
        ),
        encoding="utf-8",
    )
    assert [text for _, text in sentences.sentences(module)] == [
        "the setting {} holds no value a user can use",
        "a plain sentence the user reads",
    ]


def test_the_vocabulary_itself_is_where_they_are():
    inside = sum(
        len(sentences.sentences(path))
        for path in sentences.runtime_files()
        if sentences.VOCABULARY in path.relative_to(sentences.ROOT).parents
    )
    assert inside > 150  # the package holds them: the scan reads its modules too
