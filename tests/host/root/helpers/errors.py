"""Stand-in for helpers/errors.py."""
import traceback


def error_text(e: Exception) -> str:
    return str(e)


def format_error(e: BaseException, start_entries: int = 6, end_entries: int = 4) -> str:
    text = "".join(traceback.format_exception(type(e), e, e.__traceback__))
    return text.strip() or f"{type(e).__name__}: {e}"


def handle_error(e: Exception):
    import asyncio
    if isinstance(e, asyncio.CancelledError):
        raise e


class RepairableException(Exception):
    """An error the LLM can repair; forwarded to it instead of ending the turn."""


class InterventionException(Exception):
    """Raised when the user intervenes; ends the current step."""


class HandledException(Exception):
    """An exception that has already been logged and ends the turn."""
