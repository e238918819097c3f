"""The terminal's words (helpers/cli.py): its help, its usage errors in argparse's own form
("argument X: ..."), and its lines of output. Standard library only, like the CLI's built-in
reranker."""

from __future__ import annotations

RUNTIME_HINT = "pip install httpx jinja2 pyyaml tenacity (Agent Zero already has them)"
PROG = "python -m helpers.cli"
DESCRIPTION = "a0_reranker from a terminal"

# Each subcommand's and option's help.
HELP = {
    "api": "rerank_api (default auto)",
    "model": "rerank_model: the model id the server expects",
    "timeout": "rerank_timeout in seconds",
    "instruction": "rerank_instruction for Qwen3 rerankers",
    "api_key_env": "read the API key from this environment variable",
    "json": "print JSON",
    "rerank": "rank documents for a query (lexical BM25 when no endpoint is given)",
    "documents": "documents; or use --file / stdin, one per line",
    "file": "a file with one document per line",
    "endpoint": "reranker base URL; omit for the built-in lexical reranker",
    "top": "show only the best N",
    "probe": "detect which API an endpoint speaks and whether it ranks correctly",
    "status": "counters of this process (mostly useful inside Agent Zero)",
    "report": "summarise a decision log (rerank_shadow_log)",
    "k": "the prompt's slots: how many top results count",
}

# --- usage errors ----------------------------------------------------------------------------
BOTH_SOURCES = "argument --file: give the documents as arguments or with --file, not both"
EMPTY_QUERY = "argument query: is empty; give the question to rank the documents for"


def at_least_one(text: str) -> str:
    return f"expected a whole number of at least 1, got {text!r}"


def argument(name: str, problem: str) -> str:
    return f"argument {name}: {problem}"


def cannot_read(argument_name: str, path: str, why: str) -> str:
    return f"argument {argument_name}: cannot read {path}: {why}"


def too_many_bytes(source: str, mib: int) -> str:
    return f"{source} holds more than {mib} MiB; give fewer documents"


def not_utf8(source: str, byte: int) -> str:
    return f"{source} is not UTF-8 text (byte {byte})"


def empty_document(number: int) -> str:
    return f"argument documents: document {number} is empty"


def variable_not_set(variable: str) -> str:
    return f"argument --api-key-env: the environment variable {variable} is not set"


def no_documents(file: str | None) -> str:
    where = f" in {file} (one per line; blank lines and # comments are skipped)" if file else ""
    return f"no documents{where}: pass them as arguments, with --file, or on stdin"


def needs_endpoint(api: str) -> str:
    return f"argument --endpoint: --api {api} talks to a server; give its URL with --endpoint"


def error_line(prog: str, message: str) -> str:
    return f"{prog}: error: {message}"


def missing_package(prog: str, package: str) -> str:
    return error_line(prog, f"this needs the Python package {package}, which is not installed: {RUNTIME_HINT}")


# --- output ----------------------------------------------------------------------------------
def ranked_header(used: str, query: str) -> str:
    return f"reranker: {used}\nquery: {query}\n"


def probe_route_line(route: str, api: object, scale: object, batch_limit: object) -> str:
    return f"route: {route}  api: {api}  scale: {scale}  batch limit: {batch_limit or '-'}"


def note_line(note: str) -> str:
    return f"note: {note}"
