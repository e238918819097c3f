"""The relevance corpus stays valid, and "shares no content word" means what its README says."""

import pytest

import bench.relevance_corpus as corpus
from bench.relevance_corpus import check, content_words, shared_words


def test_the_corpus_passes_its_own_check():
    check()


def test_inflections_of_one_word_meet():
    assert content_words("nightly backups") & content_words("the backup ran") == {"backup"}
    assert content_words("I configured it") == content_words("configuring it") == content_words("configure it")
    assert content_words("the caches") == content_words("a cache") == {"cach"}


def test_a_paraphrase_shares_nothing():
    # the issue's own example of how people really ask
    assert not content_words("what's my dog called?") & content_words("The user's golden retriever is named Biscuit")


def test_stop_words_corpus_words_and_short_tokens_are_dropped():
    assert content_words("Dan asked the user how to fix it, again") == set()
    assert content_words("pve1's zfs_arc_max on 192.168.1.10") == {"pve1", "zfs", "arc", "max", "192", "168"}


def test_shared_words_reads_the_message_not_the_history():
    text_by_id = {"m1": "Pickle's vet is in Campo de Ourique."}
    question = {
        "message": "when is the dog's jab due?",
        "history": "User: the vet in Campo de Ourique",
        "relevant": ["m1"],
    }
    assert shared_words(question, text_by_id) == set()
    assert shared_words({**question, "message": "which vet does Pickle see?"}, text_by_id) == {"vet", "pickl"}


def test_check_rejects_questions_that_echo_their_answers(monkeypatch):
    memories, questions = corpus.load()
    text_by_id = {m["id"]: m["text"] for m in memories}
    echoed = [{**q, "message": f"{text_by_id[q['relevant'][0]]} ({q['id']})"} for q in questions]
    monkeypatch.setattr(corpus, "load", lambda: (memories, echoed))
    with pytest.raises(AssertionError, match="share no content word"):
        check()


def _with_questions(monkeypatch, change):
    memories, questions = corpus.load()
    monkeypatch.setattr(corpus, "load", lambda: (memories, change([dict(q) for q in questions])))


def _first(questions):
    return next(q for q in questions if q["kind"] == "first")


def test_check_rejects_a_first_question_that_carries_a_history(monkeypatch):
    def change(questions):
        donor = next(q for q in questions if q["kind"] == "direct")
        _first(questions)["history"] = donor["history"]
        return questions

    _with_questions(monkeypatch, change)
    with pytest.raises(AssertionError, match="history must be empty"):
        check()


def test_check_rejects_a_question_with_history_that_has_none(monkeypatch):
    def change(questions):
        next(q for q in questions if q["kind"] == "direct")["history"] = ""
        return questions

    _with_questions(monkeypatch, change)
    with pytest.raises(AssertionError, match="history has 0 chars"):
        check()


def test_check_rejects_an_unknown_turns_on(monkeypatch):
    def change(questions):
        _first(questions)["turns_on"] = "place"
        return questions

    _with_questions(monkeypatch, change)
    with pytest.raises(AssertionError, match="turns_on 'place'"):
        check()


def test_check_wants_a_quarter_of_the_questions_to_open_a_new_chat(monkeypatch):
    _with_questions(monkeypatch, lambda questions: [q for q in questions if q["kind"] != "first"] + [_first(questions)])
    with pytest.raises(AssertionError, match="first questions of"):
        check()


def test_check_wants_questions_that_turn_on_a_name_a_date_or_a_number(monkeypatch):
    def change(questions):
        for q in questions:
            q.pop("turns_on", None)
        return questions

    _with_questions(monkeypatch, change)
    with pytest.raises(AssertionError, match="turn on a name, a date or a number"):
        check()


def test_the_follow_up_share_counts_only_questions_with_a_history(monkeypatch):
    # The corpus itself has fewer follow-ups than a third of ALL questions and passes, so the
    # first questions don't count. Keep under half as many follow-ups as direct questions:
    # then they are under a third of the questions with a history, and check() refuses.
    def change(questions):
        directs = sum(q["kind"] == "direct" for q in questions)
        followups = [q for q in questions if q["kind"] == "followup"][: directs // 2 - 1]
        return [q for q in questions if q["kind"] != "followup"] + followups

    _with_questions(monkeypatch, change)
    with pytest.raises(AssertionError, match="followups of .* with a history"):
        check()
