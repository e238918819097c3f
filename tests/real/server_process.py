"""A real server as a child process on 127.0.0.1, for the real-server lane: its own
virtual environment (built by tests/run.sh), its own process group, its own environment
(built, not inherited), a log file, and a URL that answers 200 once it is ready."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import httpx

# What of the machine's environment a server keeps; everything else is set by its class.
KEPT_ENV = ("PATH", "LANG", "LC_ALL", "TMPDIR", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def kept_env() -> dict[str, str]:
    return {k: os.environ[k] for k in KEPT_ENV if k in os.environ}


def missing_venv(venv: Path, executable: Path, requirements: Path) -> str | None:
    """Why ``venv`` cannot run its server, or None when it is built from the current pins
    (tests/run.sh writes ``requirements.built`` once the install succeeded)."""
    stamp = venv / "requirements.built"
    if not executable.exists():
        return f"{venv.name} is not built"
    if not stamp.exists() or stamp.read_bytes() != requirements.read_bytes():
        return f"{venv.name} was not built from the current {requirements.name}"
    return None


class ServerProcess:
    """Set by a subclass: ``label`` (how errors name it), ``args``, ``env``, ``log_path``,
    ``ready_url`` and ``start_timeout_s``."""

    label: str
    args: list[str]
    env: dict[str, str]
    log_path: Path
    ready_url: str
    start_timeout_s: float
    process: subprocess.Popen | None = None

    def start(self):
        log = open(self.log_path, "ab")
        # Its own process group, so stopping it never signals the test runner.
        self.process = subprocess.Popen(
            self.args,
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        log.close()
        return self

    def wait_ready(self):
        deadline = time.monotonic() + self.start_timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.label} exited with {self.process.returncode}:\n{self.log_tail()}")
            try:
                if httpx.get(self.ready_url, timeout=2).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.25)
        raise RuntimeError(f"{self.label} not ready after {self.start_timeout_s:g} s:\n{self.log_tail()}")

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        os.killpg(self.process.pid, signal.SIGINT)  # a graceful shutdown first (uvicorn's, llama's)
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)

    def log_text(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace") if self.log_path.exists() else ""

    def log_tail(self, lines: int = 40) -> str:
        return "\n".join(self.log_text().splitlines()[-lines:])

    def __enter__(self):
        return self.start().wait_ready()

    def __exit__(self, *exc) -> None:
        self.stop()
