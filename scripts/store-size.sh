#!/usr/bin/env bash
# The store's size over a run: samples the object bytes (the files' sizes,
# as an object store holds them; no folder entries) of each top folder of a
# local store while a command runs, then prints the peak of each folder, the
# peak of the whole store (the largest sum of one sample) and the final
# sizes, in bytes and bytes a state. INTERVAL_S may be a fraction.
#
#   scripts/store-size.sh STORE INTERVAL_S COMMAND...
#   scripts/store-size.sh /tmp/s 15 target/release/solve2048 solve \
#       --board 4 --target 32 --store /tmp/s --json
#
# The states are read from the store's summary.json when the run ends
# (else from STATES in the environment). Samples go to STORE.sizes.tsv.
set -euo pipefail
if [[ $# -lt 3 ]]; then
  sed -n '2,12p' "$0" >&2
  exit 2
fi
store=$1 interval=$2
shift 2
samples="$store.sizes.tsv"
: >"$samples"
"$@" &
pid=$!
sample() {
  [[ -d "$store" ]] || return 0
  local t now
  now=$(date +%s.%N)
  for d in "$store"/*/; do
    [[ -d "$d" ]] || continue
    t=$(find "$d" -type f -printf '%s\n' 2>/dev/null | awk '{s += $1} END {print s + 0}') || continue
    printf '%s\t%s\t%s\n' "$now" "$(basename "$d")" "${t:-0}" >>"$samples"
  done
}
while kill -0 "$pid" 2>/dev/null; do
  sample
  sleep "$interval"
done
wait "$pid"
status=$?
sample
python3 - "$samples" "$store" "${STATES:-0}" <<'PY'
import collections, json, os, sys
samples, store, states = sys.argv[1], sys.argv[2], int(sys.argv[3])
try:
    with open(os.path.join(store, "summary.json")) as f:
        states = json.load(f)["record"]["states"]
except (OSError, KeyError, ValueError):
    pass
by_time = collections.defaultdict(dict)
for line in open(samples):
    t, kind, size = line.split("\t")
    by_time[float(t)][kind] = int(size)
times = sorted(by_time)
kinds = sorted({k for s in by_time.values() for k in s})
per = lambda b: f"{b / states:.3f}" if states else "-"
print(f"{'folder':<12} {'peak_bytes':>14} {'peak_B/state':>12} {'final_bytes':>14} {'final_B/state':>13}")
for k in kinds:
    peak = max(s.get(k, 0) for s in by_time.values())
    final = by_time[times[-1]].get(k, 0)
    print(f"{k:<12} {peak:>14} {per(peak):>12} {final:>14} {per(final):>13}")
totals = [sum(by_time[t].values()) for t in times]
print(f"{'total':<12} {max(totals):>14} {per(max(totals)):>12} {totals[-1]:>14} {per(totals[-1]):>13}")
print(f"samples: {len(times)}, states: {states}")
PY
exit "$status"
