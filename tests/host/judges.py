"""Scripted stand-ins for Agent Zero's utility model as the judge (rerank_api: utility): they
read the plugin's own prompt as a model would, answer the connection probe and the calibration
questions sensibly, and record every call. Shared by the utility-judge tests."""

import asyncio

from bench.relevance_judges import read_prompt
from tests.host.recall import HISTORY, QUESTION, set_plugin
from tests.servers.scoring import calibration_answer as scoring_answer, calibration_question_in


def shown_memories(message: str) -> list[tuple[int, str]]:
    """The numbered memories of the judge's prompt, as a model reads them."""
    return read_prompt(message)[1]


def is_probe(message: str) -> bool:
    return "capital of France" in message


def is_ours(message: str) -> bool:
    return "\n# Memories (quoted" in message  # the host's post-filter prompt has "## Memories:"


def probe_answer(message: str) -> str:
    """What a sensible model answers to the connection probe: the Paris memory only."""
    return str([n for n, text in shown_memories(message) if "Paris" in text])


def calibration_answer(message: str) -> str | None:
    """What a capable model answers to one of the plugin's calibration questions
    (helpers/scoring/calibration_set.json): the memory that answers it; None for any
    other prompt."""
    question = calibration_question_in(message)
    if question is None:
        return None
    answer = " ".join(scoring_answer(question).split())
    return str([n for n, text in shown_memories(message) if answer.startswith(text.rstrip(".… "))][:1])


class Judge:
    """A scripted utility model: ``pick(memories) -> answer text`` for recall prompts, a
    sensible answer to the probe (unless ``probe`` says otherwise); records every call."""

    def __init__(self, pick, probe=probe_answer, calibrated=True):
        self.pick, self.probe, self.calibrated = pick, probe, calibrated
        self.calls: list[tuple[str, str]] = []

    def __call__(self, system: str, message: str) -> str:
        self.calls.append((system, message))
        if is_probe(message):
            return self.probe(message)
        if self.calibrated and (known := calibration_answer(message)) is not None:
            return known
        if not is_ours(message):  # the host's own post-filter asks the same model
            return "[0]"
        return self.pick(shown_memories(message))

    @property
    def recall_calls(self):
        return [c for c in self.calls if is_ours(c[1]) and not is_probe(c[1]) and calibration_question_in(c[1]) is None]


class SlowJudge(Judge):
    """Answers well, after ``delay`` seconds (awaited, as an LLM call is)."""

    def __init__(self, delay: float, **kwargs):
        super().__init__(lambda memories: "[0]", **kwargs)
        self.delay = delay

    async def __call__(self, system: str, message: str) -> str:  # type: ignore[override]
        await asyncio.sleep(self.delay)
        return super().__call__(system, message)


def use_utility_model(agent, model) -> None:
    from agent import Agent

    agent.set_data(Agent.DATA_NAME_UTILITY_MODEL, model)


def recall(host, agent):
    return host.run(host.recall(agent, QUESTION, HISTORY))


def contents(result):
    return [d.page_content for d in result["memories"]], [d.page_content for d in result["solutions"]]


def judged(host, agent, model, **config):
    """One recall with ``model`` as the agent's utility model and rerank_api: utility:
    (the recall's result, the counters after it)."""
    use_utility_model(agent, model)
    set_plugin(host, rerank_api="utility", **config)
    stats = host.import_plugin("helpers.report.stats").STATS
    stats.forget()
    result = recall(host, agent)
    assert result["error"] is None
    return result, stats.snapshot()
