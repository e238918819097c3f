"""The plugin's command line (python -m helpers.cli) run the way a user runs it, in a
subprocess from the plugin's folder, optionally with no site-packages (a fresh machine), and
the check that a bad input is a usage error: one line naming the argument, exit status 2."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent


def cli(*args, isolated=False, stdin="", env=None, preexec_fn=None):
    # -S: no site-packages, as on a fresh machine (a guard test in tests/test_cli.py checks that the
    # runtime packages are really out of reach); -E: no PYTHONPATH bringing them back
    flags = ["-E", "-S"] if isolated else []
    return subprocess.run(
        [sys.executable, *flags, "-m", "helpers.cli", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        input=stdin,
        timeout=60,
        env=env,
        preexec_fn=preexec_fn,
    )


def assert_usage_error(out, command: str, message: str):
    assert "Traceback" not in out.stderr, out.stderr
    assert out.returncode == 2, (out.returncode, out.stderr)
    assert out.stdout == ""
    lines = out.stderr.splitlines()
    assert len(lines) == 1, out.stderr
    assert lines[0].startswith(f"python -m helpers.cli{' ' + command if command else ''}: error: "), lines[0]
    assert message in lines[0], lines[0]
