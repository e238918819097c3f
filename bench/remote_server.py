"""Run a test server in its own process, so its CPU work does not share the benchmark's
GIL and the client is measured, not the server's thread scheduling.

    with remote("tei19", delay=0.02, max_client_batch_size=32) as url: ...
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_CHILD = """
import json, sys, time
from tests.servers import start
options = json.loads(sys.argv[2])
faults = options.pop("faults", None)
if options.pop("cheap_scorer", False):
    # Word overlap: ranks the probe right and costs next to nothing, so the server's own
    # CPU (GIL-bound Python) does not stand in for a GPU's parallel batches. It knows the
    # calibration set's answers, as a reranker worth asking does: one that earned no say
    # is not asked at all (recall/pipeline.py score), and the rows measure one that is.
    from tests.servers.scoring import calibration_label

    def cheap(q, d):
        label = calibration_label(q, d)
        if label is not None:
            return 6.5 if label else -5.0
        return 4.0 * len(set(q.lower().split()) & set(d.lower().split())) - 3.0

    options["scorer"] = cheap
elif options.pop("word_overlap", False):
    # Shared words alone, blind to the calibration set: a reranker that earns no say.
    from tests.servers.scoring import word_overlap

    options["scorer"] = word_overlap
srv = start(sys.argv[1], **options)
if faults:
    srv.set_faults(**faults)
print(srv.url, flush=True)
for line in sys.stdin:          # commands from the parent, one JSON object per line
    command = json.loads(line)
    if command.get("recover"):
        srv.recover()
    elif "faults" in command:
        srv.set_faults(**command["faults"])
    print("ok", flush=True)
srv.stop()
"""


class RemoteServer:
    def __init__(self, kind: str, **options):
        self.process = subprocess.Popen(
            [sys.executable, "-c", _CHILD, kind, json.dumps(options)],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.url = self.process.stdout.readline().strip()
        if not self.url.startswith("http"):
            self.stop()
            raise RuntimeError(f"server {kind} did not start")

    def _command(self, command: dict) -> None:
        self.process.stdin.write(json.dumps(command) + "\n")
        self.process.stdin.flush()
        self.process.stdout.readline()

    def set_faults(self, **faults) -> None:
        self._command({"faults": faults})

    def recover(self) -> None:
        self._command({"recover": True})

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            self.process.stdin.close()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()


@contextlib.contextmanager
def remote(kind: str, **options):
    server = RemoteServer(kind, **options)
    try:
        yield server
    finally:
        server.stop()
