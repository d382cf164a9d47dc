#!/usr/bin/env bash
# Checks plan's durations against measured runs: one game solved on this
# machine at 1 and 2 threads (embedded), and by a coordinator with 1 and 2
# workers of 1 thread on loopback, each beside what `plan` says for the
# same shape (`--workers W --threads-per-worker T`). Prints one line a run:
# shape, measured wall seconds, planned seconds, measured/planned, and the
# digest (every run must give the same). Run it on an idle machine.
#
#   scripts/durations.sh [BOARD TARGET]      (default: 4 16)
#   BIN=target/release/solve2048 scripts/durations.sh 3 1024
set -euo pipefail
board=${1:-4} target=${2:-16}
bin=${BIN:-target/release/solve2048}
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
export SOLVE2048_TOKEN=durations-check-0123456789
game=(--board "$board" --target "$target")

planned() { # workers threads
  "$bin" plan "${game[@]}" --workers "$1" --threads-per-worker "$2" --json \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["duration"]["total_seconds"])'
}

report() { # shape start end planned digest
  python3 -c "import sys; m=float(sys.argv[3])-float(sys.argv[2]); p=float(sys.argv[4]); print(f'{sys.argv[1]:<22} measured {m:7.1f} s  planned {p:7.1f} s  ratio {m/p:5.2f}  digest {sys.argv[5]}')" "$@"
}

digest() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["digest"])' "$1"; }

for threads in 1 2; do
  store="$work/embedded-$threads"
  start=$(date +%s.%N)
  "$bin" solve "${game[@]}" --threads "$threads" --store "$store" --json >"$work/out.json" 2>/dev/null
  end=$(date +%s.%N)
  report "1 worker x $threads threads" "$start" "$end" \
    "$(planned 1 "$threads")" "$(digest "$work/out.json")"
done

for workers in 1 2; do
  store="$work/cluster-$workers"
  port=$((20000 + RANDOM % 12000))
  start=$(date +%s.%N)
  "$bin" coordinator "${game[@]}" --store "$store" --listen "127.0.0.1:$port" --json \
    >"$work/out.json" 2>/dev/null &
  coord=$!
  for _ in $(seq "$workers"); do
    "$bin" worker --coordinator "http://127.0.0.1:$port" --threads 1 >/dev/null 2>&1 &
  done
  wait "$coord"
  end=$(date +%s.%N)
  wait
  report "$workers workers x 1 thread" "$start" "$end" \
    "$(planned "$workers" 1)" "$(digest "$work/out.json")"
done
