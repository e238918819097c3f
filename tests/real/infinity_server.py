"""The real Infinity server (`infinity_emb v2`, from .venv-infinity) as a child process on
127.0.0.1: started, waited for, stopped and started again on the same port.

Its environment is built here, not inherited: no INFINITY_* or HF_* setting of the machine
leaks in, usage telemetry is off by both of Infinity's switches (DO_NOT_TRACK and
INFINITY_ANONYMOUS_USAGE_STATS), and the hub is never asked for anything (HF_HUB_OFFLINE,
with a private, empty HF_HOME).
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from tests.real.server_process import ServerProcess, free_port, kept_env, missing_venv

ROOT = Path(__file__).resolve().parents[2]
VENV = ROOT / ".venv-infinity"
REQUIREMENTS = Path(__file__).resolve().parent / "requirements-infinity.txt"


def missing_environment() -> str | None:
    """Why the real server cannot run here, or None when .venv-infinity is built and current."""
    return missing_venv(VENV, VENV / "bin" / "infinity_emb", REQUIREMENTS)


class InfinityProcess(ServerProcess):
    start_timeout_s = 240.0  # three servers loading torch at once on a loaded 2-core machine

    def __init__(
        self,
        name: str,
        models: Sequence[Path],
        workdir: Path,
        *,
        env: dict[str, str] | None = None,
        url_prefix: str = "",
        api_key: str = "",
    ) -> None:
        self.name, self.label = name, f"infinity ({name})"
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.ready_url = self.url + "/health"
        self.log_path = workdir / f"infinity-{name}.log"
        self.args = [
            str(VENV / "bin" / "infinity_emb"),
            "v2",
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--engine",
            "torch",
            "--device",
            "cpu",
            "--no-model-warmup",
        ]
        for model in models:
            self.args += ["--model-id", str(model)]
        if url_prefix:
            self.args += ["--url-prefix", url_prefix]
        if api_key:
            self.args += ["--api-key", api_key]
        home = workdir / "hf-home"
        home.mkdir(exist_ok=True)
        self.env = kept_env()
        self.env.update(
            HOME=str(workdir),
            HF_HOME=str(home),
            INFINITY_HOME=str(workdir),
            HF_HUB_OFFLINE="1",
            TRANSFORMERS_OFFLINE="1",
            DO_NOT_TRACK="1",
            INFINITY_ANONYMOUS_USAGE_STATS="0",
            OMP_NUM_THREADS="1",
            PYTHONUNBUFFERED="1",
            COLUMNS="200",
            **(env or {}),
        )
