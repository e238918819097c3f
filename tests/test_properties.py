"""Properties that must hold for any input, checked with hypothesis: the response parsers,
settings coercion, the built-in BM25 scorer and the privacy redactor never fail in a way
their callers do not expect."""

import json
import math
import re

from hypothesis import HealthCheck, example, given, settings, strategies as st

from helpers.errors import MalformedResponse, ServerError
from helpers.scoring.bm25 import bm25_scores
from helpers.recall.store_search import remembering_comparator
from helpers.scoring.redaction import redact
from helpers.settings import LIMITS, Settings, SettingsError
from helpers.scoring.wire import MIXEDBREAD, RERANK, SCORE, TEI, VOYAGE
from helpers.scoring.wire._parse import decode_json

DIALECTS = (RERANK, VOYAGE, MIXEDBREAD, SCORE, TEI)
FAST = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Numbers a JSON body can carry, the awkward ones included: huge integers, NaN, infinities.
numbers = st.one_of(
    st.integers(),
    st.integers(min_value=-(10**400), max_value=10**400),
    st.floats(allow_nan=True, allow_infinity=True),
)
scalars = st.one_of(st.none(), st.booleans(), numbers, st.text(max_size=20))
json_like = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=6) | st.dictionaries(st.text(max_size=12), children, max_size=6),
    max_leaves=30,
)
# Results that are nearly right, so the parsers' success path is reached as well.
score_keys = st.sampled_from(["relevance_score", "score"])
result_items = st.lists(
    st.fixed_dictionaries(
        {
            "index": st.one_of(st.integers(-2, 8), st.booleans(), st.text(max_size=2)),
            "relevance_score": scalars | numbers,
        },
        optional={"score": numbers, "document": json_like},
    ),
    max_size=8,
)
containers = st.sampled_from(["results", "data"])
near_payloads = st.one_of(
    result_items,
    st.builds(lambda name, items: {name: items}, containers, result_items),
    st.builds(
        lambda name, items, extra: {name: items, **extra},
        containers,
        result_items,
        st.dictionaries(st.sampled_from(["error", "object", "message"]), json_like, max_size=2),
    ),
)


def _score_of(dialect, item):
    keys = dialect.score_keys if hasattr(dialect, "score_keys") else ("score",)
    return next(item[k] for k in keys if k in item)


@FAST
@given(dialect=st.sampled_from(DIALECTS), payload=st.one_of(json_like, near_payloads), n=st.integers(0, 8))
@example(dialect=RERANK, payload={"results": [{"index": 0, "relevance_score": 10**400}]}, n=1)  # too big for a float
@example(dialect=TEI, payload=[{"index": 0, "score": 1e308 * 10}], n=1)
def test_parsers_return_n_finite_scores_placed_by_index_or_raise_a_typed_error(dialect, payload, n):
    try:
        scores = dialect.parse(payload, n)
    except (MalformedResponse, ServerError):
        return
    assert len(scores) == n
    assert all(type(s) is float and math.isfinite(s) for s in scores)
    names = getattr(dialect, "containers", ("data",) if dialect is SCORE else ())
    items = (
        payload if isinstance(payload, list) else next(payload[c] for c in names if isinstance(payload.get(c), list))
    )
    assert sorted(item["index"] for item in items) == list(range(n))
    for item in items:
        assert scores[item["index"]] == float(_score_of(dialect, item))


@FAST
@given(n=st.integers(1, 12), data=st.data())
def test_a_valid_answer_in_any_order_is_read_by_index(n, data):
    order = data.draw(st.permutations(range(n)))
    values = data.draw(st.lists(st.floats(-1e6, 1e6), min_size=n, max_size=n))
    items = [{"index": i, "relevance_score": values[i], "score": values[i]} for i in order]
    for dialect in DIALECTS:
        payload = items if dialect is TEI else {"data" if dialect in (VOYAGE, MIXEDBREAD, SCORE) else "results": items}
        assert dialect.parse(json.loads(json.dumps(payload)), n) == [float(v) for v in values]


@FAST
@given(
    body=st.one_of(st.binary(max_size=200), json_like.map(lambda v: json.dumps(v, allow_nan=True).encode())),
    content_type=st.sampled_from(["", "application/json", "text/html", "text/plain"]),
)
@example(body=b"[" * 100_000, content_type="application/json")  # nesting deeper than the recursion limit
@example(body=b"1" * 5000, content_type="application/json")  # more digits than int() converts
@example(body=b"[NaN, Infinity, -Infinity]", content_type="application/json")
def test_decode_json_returns_a_value_or_raises_malformed(body, content_type):
    try:
        value = decode_json(body, content_type)
    except MalformedResponse:
        return
    # What it returns is plain JSON: no NaN or infinity slipped through.
    json.dumps(value, allow_nan=False)


settings_values = st.one_of(
    scalars,
    numbers.map(str),
    st.sampled_from(
        ["true", "off", "", " 12 ", "1e3", "nan", "inf", "-1", "http://127.0.0.1:8080/", "ftp://x", "auto", "LEXICAL"]
    ),
    st.binary(max_size=8),
    st.lists(scalars, max_size=3),
    st.dictionaries(st.text(max_size=4), scalars, max_size=2),
    st.just(10**5000),  # str() of it raises ValueError in Python >= 3.11
)


@FAST
@given(
    mapping=st.dictionaries(
        st.one_of(st.sampled_from(sorted(LIMITS)), st.text(max_size=8)), settings_values, max_size=8
    )
)
def test_settings_from_any_mapping_is_settings_or_a_settings_error_naming_a_key(mapping):
    try:
        result = Settings.from_mapping(mapping)
    except SettingsError as exc:
        assert exc.key in LIMITS
        assert exc.key in mapping  # the defaults are valid: only a given value can be wrong
        return
    assert isinstance(result, Settings)


@FAST
@given(query=st.text(max_size=200), documents=st.lists(st.text(max_size=300), max_size=20))
def test_bm25_gives_one_finite_score_per_document(query, documents):
    scores = bm25_scores(query, documents)
    assert len(scores) == len(documents)
    assert all(isinstance(s, float) and math.isfinite(s) and s >= 0 for s in scores)


EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}")
fragments = st.sampled_from(
    [
        "alice@example.com",
        "bob.smith+tag@mail.co.uk",
        "@",
        ".",
        " ",
        "password",
        "password: hunter2",
        "token is ",
        "api_key=",
        "Bearer abcdefghijklmnopqrstu",
        "sk-0123456789abcdefghijk",
        "§§secret(KEY)",
        "AKIA",
        "a1b2c3d4e5f6a1b2c3d4e5f6a1b2c3d4e5f6",
        "\n",
        "é",
        "[email]",
        "[key]",
        "https://u:p@host/",
    ]
)
texts = st.lists(st.one_of(fragments, st.text(max_size=10)), max_size=12).map("".join)


@FAST
@given(text=texts)
def test_redact_never_raises_and_never_makes_an_email(text):
    once = redact(text)
    twice = redact(once)  # not always equal: "token is [email]" is masked again as "[redacted]"
    assert set(EMAIL.findall(twice)) <= set(EMAIL.findall(once)) <= set(EMAIL.findall(text))


emails = st.from_regex(r"[a-z0-9][a-z0-9._+-]{0,11}@[a-z0-9][a-z0-9-]{0,9}\.(com|org|co\.uk|de)", fullmatch=True)
prose = st.text(alphabet=st.characters(codec="ascii", categories=["L", "N", "Zs"]), max_size=30)


@FAST
@given(before=prose, email=emails, after=prose, sep=st.sampled_from([" ", "\n", ": ", " (", ", "]))
@example(before="请联系", email="alice@example.com", after="谢谢", sep="")  # CJK text has no spaces
def test_an_email_set_off_from_the_text_is_masked(before, email, after, sep):
    text = f"{before}{sep}{email}{sep[::-1]}{after}"
    assert email not in redact(text)


CONDITIONS = [
    "area == 'main' or area == 'fragments'",
    "area == 'solutions'",
    "area in ['main', 'x']",
    "area is None",
    "knowledge_source == True",
    "n > 3 and area != 'main'",
    "n is True",
    "n == 1",
    "tags == 1",
    "not area",
    "area.startswith('m')",
    "int(n) > 2",
    "missing == 1",
    "area ==",
    "",
]
meta_values = st.one_of(
    st.sampled_from(["main", "fragments", "solutions", "", None, True, False, 1, 1.0, 0, 4]),
    st.lists(st.integers(0, 2), max_size=2),
    scalars,
)
metadata = st.dictionaries(st.sampled_from(["area", "n", "tags", "knowledge_source", "id"]), meta_values, max_size=5)


def _host_comparator(condition):
    """What the host's Memory._get_comparator does: simpleeval, and False on any error."""
    from simpleeval import simple_eval

    def comparator(data):
        try:
            return simple_eval(condition, names=data)
        except Exception:
            return False

    return comparator


@FAST
@given(condition=st.sampled_from(CONDITIONS), documents=st.lists(metadata, max_size=12))
def test_the_remembering_filter_answers_exactly_as_the_hosts(condition, documents):
    host = _host_comparator(condition)
    remembered = remembering_comparator(host, condition)
    assert [remembered(d) for d in documents] == [host(d) for d in documents]


def test_a_filter_too_long_to_read_is_asked_of_the_host_every_time():
    """A memory_load filter an LLM wrote may be a megabyte: it is not parsed on the event
    loop (1.7 s), and the host's comparator answers every document, as without the plugin."""
    condition = "area == 'main' or " * 60_000 + "False"
    asked = []

    def host(data):
        asked.append(data)
        return data.get("area") == "main"

    remembered = remembering_comparator(host, condition)
    documents = [{"area": "main"}, {"area": "main"}, {"area": "fragments"}]
    assert [remembered(d) for d in documents] == [True, True, False]
    assert len(asked) == 3  # none remembered: every one asked
