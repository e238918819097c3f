#!/usr/bin/env bash
# The whole test suite, on a fresh clone with only Python >= 3.11:
#   bash tests/run.sh            (extra arguments go to pytest)
#   bash tests/run.sh --fast     the unit lane: no browser, real-server, load or local-model
#                                tests (pytest.ini's markers), and nothing built or installed
#                                for them (requirements-test-fast.txt only)
# Builds .venv with the pinned test dependencies and .venv-infinity with the real Infinity
# server, makes sure headless Chromium and the host's Alpine.js are there for the browser
# test, then runs pytest.
set -euo pipefail
cd "$(dirname "$0")/.."

fast=
if [ "${1:-}" = --fast ]; then
    fast=1
    shift
fi

python=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    "$python" -m venv .venv
fi
# the unit lane installs only its own pins (no torch, Playwright); the whole suite all of them
requirements=requirements-test.txt
if [ -n "$fast" ]; then
    requirements=requirements-test-fast.txt
fi
.venv/bin/python -m pip install -q --disable-pip-version-check -r "$requirements"

# The real-server lane (tests/real/): Infinity in a virtual environment of its own, since its
# transformers and sentence-transformers pins are not Agent Zero's. Rebuilt when its
# requirements change; a failed build is said here and fails those tests, never skips them
# (A0RR_REAL_SERVERS=skip leaves the lane out on purpose).
infinity_requirements=tests/real/requirements-infinity.txt
if [ -z "$fast" ] && [ "${A0RR_REAL_SERVERS:-}" != skip ] && ! cmp -s "$infinity_requirements" .venv-infinity/requirements.built; then
    echo "building .venv-infinity for the real-server tests (tests/real/)" >&2
    rm -rf .venv-infinity
    if "$python" -m venv .venv-infinity &&
        .venv-infinity/bin/python -m pip install -q --disable-pip-version-check -r "$infinity_requirements"; then
        cp "$infinity_requirements" .venv-infinity/requirements.built
    else
        echo "FAILED to build .venv-infinity: the tests in tests/real/ will fail" >&2
    fi
fi

if [ -n "$fast" ]; then
    # no Playwright here: the browser test's module skips itself instead of failing to import
    A0_RERANKER_SKIP_BROWSER=1 exec .venv/bin/python -m pytest -m "not browser and not real_server and not load and not local_model" "$@"
fi

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
