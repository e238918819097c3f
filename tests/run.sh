#!/usr/bin/env bash
# The whole test suite, on a fresh clone with only Python >= 3.11:
#   bash tests/run.sh            (extra arguments go to pytest)
# Builds .venv with the pinned test dependencies, makes sure headless Chromium and the
# host's Alpine.js are there for the browser test, then runs pytest.
set -euo pipefail
cd "$(dirname "$0")/.."

python=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    "$python" -m venv .venv
fi
.venv/bin/python -m pip install -q --disable-pip-version-check -r requirements-test.txt

if ! command -v chromium >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ]; then
        echo "installing Debian's chromium for the browser test" >&2
        apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
    else
        echo "the browser test needs Chromium: sudo apt-get install chromium" >&2
    fi
fi
# Alpine.js at the host's version, from the npm registry (cached under tests/browser/.cache)
.venv/bin/python -m tests.browser.alpine >/dev/null

exec .venv/bin/python -m pytest "$@"
