"""Stand-in for helpers/defer.py: the host's background task runner, reduced to a
thread running its own event loop per task."""
import asyncio
import threading


class DeferredTask:
    def __init__(self, thread_name: str = "Background"):
        self.thread_name = thread_name
        self._thread: threading.Thread | None = None
        self.result = None

    def start_task(self, func, *args, **kwargs):
        def runner():
            value = func(*args, **kwargs)
            if asyncio.iscoroutine(value):
                value = asyncio.run(value)
            self.result = value

        self._thread = threading.Thread(target=runner, name=self.thread_name, daemon=True)
        self._thread.start()
        return self

    def kill(self):
        pass
