"""The Qwen3 judge prompt, pinned character for character (rerank-protocols.md 8.1, 8.3)."""

from helpers.scoring import qwen3
from helpers.settings import Settings

PREFIX = (
    "<|im_start|>system\nJudge whether the Document meets the requirements based on the Query and the "
    'Instruct provided. Note that the answer can only be "yes" or "no".<|im_end|>\n<|im_start|>user\n'
)
SUFFIX = "<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"
INSTRUCTION = "Given a web search query, retrieve relevant passages that answer the query"


def test_rendered_halves_are_exactly_the_official_prompt():
    query, docs = qwen3.render("What is the capital of China?", ["The capital of China is Beijing."], INSTRUCTION, 8000)
    assert query == PREFIX + f"<Instruct>: {INSTRUCTION}\n<Query>: What is the capital of China?\n"
    assert docs == ["<Document>: The capital of China is Beijing." + SUFFIX]
    # vLLM <= 0.13 concatenates query + document: that is the README prompt, exactly.
    assert query + docs[0] == (
        PREFIX + f"<Instruct>: {INSTRUCTION}\n<Query>: What is the capital of China?\n"
        "<Document>: The capital of China is Beijing." + SUFFIX
    )


def test_the_instruction_comes_from_settings():
    settings = Settings.from_mapping({"rerank_instruction": "Given the user's request, retrieve past memories"})
    query = qwen3.render_query("q", settings.instruction)
    assert "<Instruct>: Given the user's request, retrieve past memories\n<Query>: q\n" in query


def test_documents_are_cut_before_rendering_so_the_suffix_survives():
    doc = qwen3.render_document("x" * 50_000, max_chars=100)
    assert doc == "<Document>: " + "x" * 100 + SUFFIX


def test_template_syntax_in_memory_text_is_not_evaluated():
    doc = qwen3.render_document("{{ 7 * 7 }} {% if x %}", 1000)
    assert doc == "<Document>: {{ 7 * 7 }} {% if x %}" + SUFFIX


def test_test_servers_share_the_same_strings():
    from tests.servers import qwen3 as server_qwen3

    assert server_qwen3.PREFIX == PREFIX and server_qwen3.SUFFIX == SUFFIX
