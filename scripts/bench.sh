#!/usr/bin/env bash
# End-to-end benchmark: runs whole solves on a fresh store and prints wall time
# per phase, states per second per core and peak RSS.
#
#   scripts/bench.sh            # 3x3 to 1024 and 4x4 to 16
#   scripts/bench.sh --big      # also 4x4 to 32 (about 1.57 billion states)
#   THREADS=16 scripts/bench.sh # on a bigger machine
set -euo pipefail
cd "$(dirname "$0")/.."
threads=${THREADS:-$(nproc)}
games=("3 1024" "4 16")
[[ "${1:-}" == "--big" ]] && games+=("4 32")
cargo build --release --quiet
root=$(mktemp -d "${TMPDIR:-/tmp}/solve2048-bench.XXXXXX")
trap 'rm -rf "$root"' EXIT
printf '%-12s %12s %10s %10s %14s %14s %10s %10s\n' game states enum_s solve_s enum_st/s/core solve_st/s/core peak_GiB value
for g in "${games[@]}"; do
  set -- $g
  json=$(target/release/solve2048 solve --board "$1" --target "$2" --threads "$threads" \
         --store "$root/$1x$1-$2" --json)
  python3 - "$json" "$threads" "$1x$1-to-$2" <<'PY'
import json, sys
d = json.loads(sys.argv[1]); t = int(sys.argv[2])
e, s, n = d["enumerate_seconds"], d["solve_seconds"], d["states"]
print(f'{sys.argv[3]:<12} {n:>12} {e:>10.1f} {s:>10.1f} {n/e/t:>14.0f} {n/s/t:>14.0f} '
      f'{d["peak_rss_bytes"]/2**30:>10.2f} {d["start_value"]:>10.6f}')
PY
  rm -rf "$root/$1x$1-$2"
done
