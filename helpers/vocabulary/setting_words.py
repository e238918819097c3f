"""What is wrong with a setting, in the words every view shows it with (the settings panel,
Test connection, the status tool, the CLI): the settings' own (settings.py), the decision
log's path (report/decision_log_path.py) and usr/.env's (envfile.py). Plain values in,
words out: settings.py imports this, so it imports nothing of the plugin."""

from __future__ import annotations


# --- a value against its limit (settings.Limit) ----------------------------------------------
TRUE_OR_FALSE = "true or false"
OR_EMPTY_FOR_OFF = " (or empty for off)"


def one_of(choices: tuple[str, ...]) -> str:
    return "one of " + ", ".join(choices)


def number_range(whole: bool, low: str, high: str) -> str:
    return f"{'a whole number' if whole else 'a number'} from {low} to {high}"


def text_at_most(chars: int) -> str:
    return f"text of at most {chars:,} characters"


def one_line_at_most(chars: int) -> str:
    """A model name's limit, said where it held a control character (a NUL, a line break)."""
    return f"one line of printable text, at most {chars:,} characters"


def no_control_characters_at_most(chars: int) -> str:
    """The Qwen3 instruction's limit, said where it held a control character other than a
    line break or a tab."""
    return f"text without control characters other than line breaks and tabs, at most {chars:,} characters"


AT_AFTER_HOST = "an '@' after the host: a password holding '/', '?' or '#' must be percent-encoded (%2F, %3F, %23)"
HOLDS_THE_KEY = "holds the API key (not shown): type the key into the API key field only"


def scope_not_a_folder(what: str, shown: str) -> str:
    return f"the {what} name {shown} is not a folder name: nothing was saved"


def got_expected(shown: str, expected: str) -> str:
    return f"got {shown}, expected {expected}"


NESTED_TOO_DEEPLY = "a value nested too deeply"  # quoted in place of a value repr() cannot reach the end of


def got_chars_expected(chars: int, expected: str) -> str:
    return f"got {chars:,} characters, expected {expected}"


def got_kind_expected_text(kind: str) -> str:
    return f"got a {kind}, expected text"


def not_a_mapping(kind: str) -> str:
    return f"expected a mapping of settings, got {kind}"


def defaults_out_of_step(missing: object, unknown: object) -> str:
    return f"default_config.yaml out of step: missing {missing}, unknown {unknown}"


# --- the endpoint and the key ----------------------------------------------------------------
URL_SPACES = "a URL cannot hold spaces or control characters"
URL_QUERY = (
    "an endpoint is a base URL, or one with its rerank path, without a ?query or #fragment "
    "(an API key belongs in the API key field)"
)
URL_UNUSABLE = "the HTTP client cannot use this URL (a character the host name cannot hold?)"
KEY_NOT_PRINTABLE = (
    "holds a space, a line break, a control character or a non-ASCII character; "
    "an API key is printable ASCII without spaces"
)


def not_an_http_url(shown: str) -> str:
    return f"got {shown}, expected an http:// or https:// URL with a host"


def endpoint_problem(shown: str, problem: str) -> str:
    return f"got {shown}: {problem}"


def unknown_key_variable(field: str) -> str:
    return f"{field} names a variable that is not one of this plugin's keys"


def stored_key_where(variable: str) -> str:
    return f"the stored key ({variable} in usr/.env) "


DOTENV_LINE_BREAK = "a dotenv value written here cannot hold a line break"


# --- the decision log's path -----------------------------------------------------------------
PATH_CONTROL = "a path cannot hold control characters"
PATH_DOTDOT = "a path cannot hold '..'"


def path_suffix(suffix: str, example: str) -> str:
    return f"expected a {suffix} file name, like {example}"


def path_outside_usr(usr: object, root: object, example: str) -> str:
    return f"expected a file inside Agent Zero's usr/ folder ({usr}); relative paths start at {root}, like {example}"


def path_symlink(step: object) -> str:
    return f"{step} is a symbolic link; the log is written only to a real file inside usr/"


def path_unusable(why: str) -> str:
    return f"the file system refuses this path ({why})"


def path_no_folder(folder: object) -> str:
    return f"the folder {folder} does not exist (the log creates no folders)"


def path_not_file(target: object) -> str:
    return f"{target} is not a regular file"
