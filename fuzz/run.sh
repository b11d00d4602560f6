#!/usr/bin/env bash
# Fuzzes every target of package fuzz in turn (go test -fuzz takes one
# target per run).
#
#   bash fuzz/run.sh [duration per target] [target regexp]
#
# The duration defaults to $FUZZTIME, else 3s (what CI runs); e.g.
# `bash fuzz/run.sh 10m 'Segment|SQL'` fuzzes the segment and SQL targets
# ten minutes each. A failure leaves its input in fuzz/testdata/fuzz/<Target>/
# (a regression test from then on) and the script exits 1 after running the
# remaining targets.
set -uo pipefail
cd "$(dirname "$0")/.."
fuzztime=${1:-${FUZZTIME:-3s}}
filter=${2:-.}

targets=$(go test ./fuzz -run '^$' -list '^Fuzz' | grep '^Fuzz' | grep -E -- "$filter" || true)
if [ -z "$targets" ]; then
  echo "fuzz/run.sh: no target matches $filter" >&2
  exit 2
fi
failed=()
for t in $targets; do
  echo "--- fuzz $t for $fuzztime"
  # New inputs are minimised for at most 100 runs: the default (60s per
  # input) stalls short runs on targets whose every input is new coverage.
  if ! go test ./fuzz -run '^$' -fuzz "^${t}\$" -fuzztime "$fuzztime" -fuzzminimizetime 100x; then
    failed+=("$t")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz/run.sh: failed: ${failed[*]}" >&2
  exit 1
fi
