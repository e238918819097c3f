"""Stand-in for helpers/functions.py: call a function with only the arguments it declares."""
import inspect


def safe_call(func, *args, **kwargs):
    params = inspect.signature(func).parameters.values()
    kinds = {p.kind for p in params}
    if inspect.Parameter.VAR_POSITIONAL not in kinds:
        positional = [p for p in params
                      if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        args = args[: len(positional)]
    if inspect.Parameter.VAR_KEYWORD not in kinds:
        names = {p.name for p in params}
        kwargs = {k: v for k, v in kwargs.items() if k in names}
    return func(*args, **kwargs)
