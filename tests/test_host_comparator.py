"""The host's filter comparator is asked one call at a time (store_search._ASKING_THE_HOST).

It evaluates its condition with simpleeval, so Python's ast, on every call, and two threads
building ASTs at once can fail in CPython ("AST constructor recursion depth mismatch"):
the host answers False for that memory and the search loses it. The plugin's word search
and vector scan run in two worker threads at once; both ask the same comparator."""

import threading

from helpers.recall import store_search
from helpers.recall.store_search import remembering_comparator
from tests.host.recall import QUESTION, enabled_store


class OneAtATimeWitness:
    """A host comparator that, on each thread's first call, waits a little for another
    thread to be inside it too: how many were ever inside at once, and which threads asked."""

    def __init__(self, answer, wait_s: float = 0.3):
        self.answer, self.wait_s = answer, wait_s
        self.inside = self.most_inside = 0
        self.threads: set[int] = set()
        self._count = threading.Lock()
        self._someone_else_inside = threading.Event()

    def __call__(self, metadata: dict):
        me = threading.get_ident()
        with self._count:
            first = me not in self.threads
            self.threads.add(me)
            self.inside += 1
            self.most_inside = max(self.most_inside, self.inside)
            if self.inside > 1:
                self._someone_else_inside.set()
        try:
            if first:
                self._someone_else_inside.wait(self.wait_s)
            return self.answer(metadata)
        finally:
            with self._count:
                self.inside -= 1


def _two_threads_ask(comparator, documents):
    answers = {}

    def ask(name):
        answers[name] = [comparator(d) for d in documents]

    threads = [threading.Thread(target=ask, args=(n,)) for n in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return answers


def test_two_threads_never_ask_the_hosts_comparator_at_once():
    documents = [{"area": "main"}, {"area": "fragments"}, {"area": "main"}]
    for condition in ("area == 'main'", "str(area) == 'main'"):  # remembered, and asked every time
        witness = OneAtATimeWitness(lambda data: data.get("area") == "main")
        answers = _two_threads_ask(remembering_comparator(witness, condition), documents)
        assert answers == {"a": [True, False, True], "b": [True, False, True]}
        assert len(witness.threads) == 2 and witness.most_inside == 1, condition


def test_a_recall_asks_the_hosts_comparator_one_call_at_a_time_from_both_searches(host, monkeypatch):
    """Through the stand-in host: the vector scan's thread and the word search's thread
    both filter by the host's comparator, never at the same moment."""
    agent, memory = enabled_store(host)
    host.run(host.recall(agent, QUESTION, []))  # the store's word index is built
    hosts_own = type(memory)._get_comparator
    witnesses = []

    def witnessed(condition):
        witnesses.append(OneAtATimeWitness(hosts_own(condition)))
        return witnesses[-1]

    monkeypatch.setattr(type(memory), "_get_comparator", staticmethod(witnessed))
    # As for a filter that calls a function: every memory each search looks at is asked.
    monkeypatch.setattr(store_search, "_names_read", lambda condition: None)
    result = host.run(host.recall(agent, QUESTION, []))
    assert result["memories"]
    asked_from_two_threads = [w for w in witnesses if len(w.threads) >= 2]
    assert asked_from_two_threads, "the word search and the vector scan both filtered"
    assert all(w.most_inside == 1 for w in witnesses)


def test_a_filter_whose_parse_collides_with_another_threads_is_asked_of_the_host(monkeypatch):
    """CPython's SystemError from a colliding parse: this search asks the host every time,
    and the next one parses the filter again (the collision is not remembered)."""
    condition = "area == 'collided'"
    store_search._names_parsed.cache_clear()
    real_parse = store_search.ast.parse
    calls = []

    def colliding(source, *args, **kwargs):
        calls.append(source)
        if len(calls) == 1:
            raise SystemError("AST constructor recursion depth mismatch (before=42, after=40)")
        return real_parse(source, *args, **kwargs)

    monkeypatch.setattr(store_search.ast, "parse", colliding)
    assert store_search._names_read(condition) is None
    assert store_search._names_read(condition) == ("area",)
