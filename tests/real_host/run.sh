#!/usr/bin/env bash
# The plugin inside a real Agent Zero: copies the checkout given (never touching it), clones
# this repository's committed HEAD into the copy's usr/plugins/a0_reranker, builds a venv with
# the host's pins, runs the check scripts and the comparison with the tests' stand-in host.
# Exits non-zero when any check fails. See docs/real-host.md.
#
#   tests/real_host/run.sh AGENT_ZERO_DIR [PYTHON]
#
# AGENT_ZERO_DIR, PYTHON: or the environment's AGENT_ZERO_DIR, A0RR_REAL_HOST_PYTHON
#   (default python3.12, the Python Agent Zero's image runs).
# A0RR_REAL_HOST_WORK: where the copy, the venv and the reports go
#   (default ${TMPDIR:-/tmp}/a0_reranker-real-host; the venv is kept while its Python and
#   requirements.txt stay the same, the copy is made afresh every run).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(git -C "$HERE" rev-parse --show-toplevel)"
A0="${1:-${AGENT_ZERO_DIR:-}}"
PYTHON="${2:-${A0RR_REAL_HOST_PYTHON:-python3.12}}"
WORK="${A0RR_REAL_HOST_WORK:-${TMPDIR:-/tmp}/a0_reranker-real-host}"

if [ -z "$A0" ] || [ ! -f "$A0/agent.py" ] || [ ! -f "$A0/initialize.py" ]; then
  echo "usage: $0 AGENT_ZERO_DIR [PYTHON]  (AGENT_ZERO_DIR: an Agent Zero checkout, with agent.py)" >&2
  exit 2
fi
A0="$(cd "$A0" && pwd -P)"
mkdir -p "$WORK"
WORK="$(cd "$WORK" && pwd -P)"
case "$WORK/" in
  "$A0"/*) echo "A0RR_REAL_HOST_WORK ($WORK) is inside $A0: the checkout must stay untouched" >&2; exit 2 ;;
esac
COPY="$WORK/agent-zero"
VENV="$WORK/venv"
REPORTS="$WORK/reports"

echo "=== copy of $A0 -> $COPY"
rm -rf "$COPY" "$REPORTS"
mkdir -p "$COPY" "$REPORTS"
if [ "$(git -C "$A0" rev-parse --show-toplevel 2>/dev/null || true)" = "$A0" ]; then
  # A checkout: its files as they are now (local changes included), without what it ignores
  # (its usr/ data, venvs, caches). Deleted files are still listed by git; skip them.
  (cd "$A0" && git ls-files -z --cached --others --exclude-standard \
    | while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done \
    | tar --null -T - -cf -) | tar -xf - -C "$COPY"
  echo "agent zero: $(git -C "$A0" rev-parse HEAD)$(git -C "$A0" diff --quiet HEAD || echo ' (with local changes)')"
else
  tar -C "$A0" --exclude=./.git --exclude=./usr --exclude=.venv --exclude=venv --exclude=__pycache__ \
    -cf - . | tar -xf - -C "$COPY"
fi
# A fresh usr/: the user's memories, settings and other plugins would change what is recalled.
rm -rf "$COPY/usr"
mkdir -p "$COPY"/usr/{agents,knowledge/main,knowledge/solutions,plugins,skills,workdir}
git clone -q "$REPO" "$COPY/usr/plugins/a0_reranker"
echo "plugin: $(git -C "$COPY/usr/plugins/a0_reranker" log -1 --format='%h %s' | cut -c1-100) (committed HEAD of $REPO)"

STAMP="$("$PYTHON" -c 'import sys; print(sys.version)') $(sha256sum "$HERE/requirements.txt" | cut -c1-64)"
if [ ! -x "$VENV/bin/python" ] || [ "$(cat "$VENV/.real-host-stamp" 2>/dev/null)" != "$STAMP" ]; then
  echo "=== venv $VENV ($("$PYTHON" --version)); a first build takes minutes"
  rm -rf "$VENV"
  "$PYTHON" -m venv "$VENV"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check -r "$HERE/requirements.txt"
  echo "$STAMP" > "$VENV/.real-host-stamp"
fi

rc=0
for script in check_install_and_recall.py check_modes_and_purges.py check_later_turn.py check_api_routes.py; do
  log="$REPORTS/${script%.py}.log"
  echo "=== $script"
  status=0
  "$VENV/bin/python" "$HERE/$script" "$COPY" "$REPORTS" > "$log" 2>&1 || status=$?
  # the host colours its own output; the check lines are ours
  sed 's/\x1b\[[0-9;]*m//g' "$log" | grep -E '^(embedder|PASS|FAIL)' | cut -c1-200 || true
  if [ "$status" -ne 0 ]; then
    rc=1
    echo "($script exited $status; full log: $log)"
  fi
done

echo "=== compare_signatures.py"
"$VENV/bin/python" "$HERE/compare_signatures.py" "$COPY" "$REPORTS" || rc=1

passed="$(cat "$REPORTS"/check_*.log | sed 's/\x1b\[[0-9;]*m//g' | grep -c '^PASS' || true)"
failed="$(cat "$REPORTS"/check_*.log | sed 's/\x1b\[[0-9;]*m//g' | grep -c '^FAIL' || true)"
echo "=== $passed checks passed, $failed failed; reports and logs in $REPORTS"
exit "$rc"
