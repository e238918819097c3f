"""The real Infinity server (`infinity_emb v2`, from .venv-infinity) as a child process on
127.0.0.1: started, waited for, stopped and started again on the same port.

Its environment is built here, not inherited: no INFINITY_* or HF_* setting of the machine
leaks in, usage telemetry is off by both of Infinity's switches (DO_NOT_TRACK and
INFINITY_ANONYMOUS_USAGE_STATS), and the hub is never asked for anything (HF_HUB_OFFLINE,
with a private, empty HF_HOME).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Sequence

import httpx

ROOT = Path(__file__).resolve().parents[2]
VENV = ROOT / ".venv-infinity"
REQUIREMENTS = Path(__file__).resolve().parent / "requirements-infinity.txt"
BUILT_STAMP = VENV / "requirements.built"  # tests/run.sh writes it once the install succeeded
START_TIMEOUT_S = 240.0  # three servers loading torch at once on a loaded 2-core machine
_KEPT = ("PATH", "LANG", "LC_ALL", "TMPDIR", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")


def missing_environment() -> str | None:
    """Why the real server cannot run here, or None when .venv-infinity is built and current."""
    if not (VENV / "bin" / "infinity_emb").exists():
        return f"{VENV.name} is not built"
    if not BUILT_STAMP.exists() or BUILT_STAMP.read_bytes() != REQUIREMENTS.read_bytes():
        return f"{VENV.name} was not built from the current {REQUIREMENTS.name}"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class InfinityProcess:
    def __init__(self, name: str, models: Sequence[Path], workdir: Path, *, env: dict[str, str] | None = None,
                 url_prefix: str = "", api_key: str = "") -> None:
        self.name = name
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = workdir / f"infinity-{name}.log"
        self.args = [str(VENV / "bin" / "infinity_emb"), "v2", "--host", "127.0.0.1", "--port", str(self.port),
                     "--engine", "torch", "--device", "cpu", "--no-model-warmup"]
        for model in models:
            self.args += ["--model-id", str(model)]
        if url_prefix:
            self.args += ["--url-prefix", url_prefix]
        if api_key:
            self.args += ["--api-key", api_key]
        home = workdir / "hf-home"
        home.mkdir(exist_ok=True)
        self.env = {k: os.environ[k] for k in _KEPT if k in os.environ}
        self.env.update(HOME=str(workdir), HF_HOME=str(home), INFINITY_HOME=str(workdir), HF_HUB_OFFLINE="1",
                        TRANSFORMERS_OFFLINE="1", DO_NOT_TRACK="1", INFINITY_ANONYMOUS_USAGE_STATS="0",
                        OMP_NUM_THREADS="1", PYTHONUNBUFFERED="1", COLUMNS="200", **(env or {}))
        self.process: subprocess.Popen | None = None

    def start(self) -> "InfinityProcess":
        log = open(self.log_path, "ab")
        # Its own process group, so stopping it never signals the test runner.
        self.process = subprocess.Popen(self.args, env=self.env, stdout=log, stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL, start_new_session=True)
        log.close()
        return self

    def wait_ready(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"infinity ({self.name}) exited with {self.process.returncode}:\n{self.log_tail()}")
            try:
                if httpx.get(self.url + "/health", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.25)
        raise RuntimeError(f"infinity ({self.name}) not ready after {START_TIMEOUT_S:g} s:\n{self.log_tail()}")

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        os.killpg(self.process.pid, signal.SIGINT)  # uvicorn's graceful shutdown
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)

    def log_text(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace") if self.log_path.exists() else ""

    def log_tail(self, lines: int = 40) -> str:
        return "\n".join(self.log_text().splitlines()[-lines:])
