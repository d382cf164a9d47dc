#!/usr/bin/env bash
# Reruns the store model's calibration: solves each game into a fresh local
# store while scripts/store-size.sh samples its object bytes, then prints
# the measured peak and final store next to `plan --json`'s
# store_peak_bytes and store_final_bytes (and their ratio), and the figures
# the model rests on (plan/src/store_calibration.rs, its tables in
# plan/data/exact-shares.csv and plan/data/store-layer-bytes.csv): the
# share of exact values, and bytes a state of each kind by chunks a layer,
# read from the store's objects and commit records.
#
#   scripts/store-calibrate.sh [BOARD:TARGET:INTERVAL_S[:score] ...]
#   scripts/store-calibrate.sh 3:1024:0.2 4:16:0.2        # about a minute
#   scripts/store-calibrate.sh 3:512:0.2:score            # the score objective
#   scripts/store-calibrate.sh 4:32:15                    # about 35 minutes
#
# Defaults to 3:1024:0.2 4:16:0.2. SOLVE2048 names the binary (default
# target/release/solve2048), VALUE_CODECS the example that reads values
# with their states and policy (default target/release/examples/value_codecs,
# built by `cargo build --release -p solve2048-core --example value_codecs`),
# WORK the folder for the stores (default a new temporary one), THREADS the
# solve's threads (default 2). Each game's row is printed as
# tests/data/store-calibration.csv holds it, and its values row as
# plan/data/value-bytes.csv holds it.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${SOLVE2048:-target/release/solve2048}
work=${WORK:-$(mktemp -d)}
mkdir -p "$work"
threads=${THREADS:-2}
games=("$@")
[[ ${#games[@]} -gt 0 ]] || games=(3:1024:0.2 4:16:0.2)
codecs=${VALUE_CODECS:-target/release/examples/value_codecs}
[[ -x "$bin" ]] || { echo "no binary at $bin (cargo build --release, or set SOLVE2048)" >&2; exit 2; }
[[ -x "$codecs" ]] || { echo "no example at $codecs (see above, or set VALUE_CODECS)" >&2; exit 2; }
rows=()
values_rows=()
for g in "${games[@]}"; do
  IFS=: read -r board target interval objective <<<"$g"
  objective=${objective:-win}
  store="$work/s-$board-$target-$objective"
  rm -rf "$store"
  echo "== ${board}x$board to $target, $objective (sampling every ${interval}s) into $store" >&2
  "$here/store-size.sh" "$store" "$interval" "$bin" solve --board "$board" --target "$target" \
    --objective "$objective" --threads "$threads" --store "$store" --json >"$store.out" 2>"$store.err"
  sed -n '/^folder/,$p' "$store.out" >&2
  "$bin" plan --board "$board" --target "$target" --objective "$objective" --json >"$store.plan.json"
  # The share of exact values and values and policy bytes a state (values
  # coded by afterstate are read with their states and policy).
  value_row=$("$codecs" "$store" row)
  states=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["states"])' "$store.plan.json")
  values_rows+=("$board,$target,$objective,$states,$value_row")
  rows+=("$(python3 - "$store" "$board" "$target" "$objective" "$value_row" <<'PY'
import collections, json, os, re, sys
store, board, target, objective = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
exact_share = float(sys.argv[5].split(",")[0])
plan = json.load(open(store + ".plan.json"))
by_time = collections.defaultdict(dict)
for line in open(store + ".sizes.tsv"):
    t, kind, size = line.split("\t")
    by_time[float(t)][kind] = int(size)
totals = [sum(s.values()) for _, s in sorted(by_time.items())]
peak, final = max(totals), totals[-1]
def rec(path):
    with open(path) as f:
        return json.load(f)["record"]
def du(d):
    return sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(d) for f in fs)
# States a layer, and each kind's bytes by the layer that wrote (or asked).
n = {}
for f in os.listdir(f"{store}/layers"):
    r = rec(f"{store}/layers/{f}")
    n[r["sum"]] = sum(c["count"] for p in r["parts"] for c in p["chunks"])
by = {k: collections.Counter() for k in ("runs", "requests", "responses")}
for f in os.listdir(f"{store}/commits"):
    m = re.match(r"(\w+)-s(\d+)", f)
    if not m:
        continue
    r, layer = rec(f"{store}/commits/{f}"), int(m.group(2))
    for x in r.get("Enumerated", {}).get("runs", []):
        by["runs"][layer] += x["len"]
    for x in r.get("Requests", []):
        by["requests"][layer] += x["len"]
    for x in r.get("Responses", []):
        by["responses"][x["source"]["part"]["sum"]] += x["len"]
chunk = plan["cluster"]["chunk_size"]
edges = [0, 0.003, 0.01, 0.03, 0.1, 0.3, 1, 3, 10, float("inf")]
bins = collections.defaultdict(lambda: collections.Counter())
for layer, count in n.items():
    if not count:
        continue
    c = count / chunk
    i = max(j for j in range(len(edges) - 1) if c >= edges[j])
    b = bins[i]
    b["n"] += count
    b["c"] += count * c
    b["states"] += du(f"{store}/states/s{layer:05d}")
    for k in by:
        b[k] += by[k][layer]
print(f"{board}x{board} to {target} ({objective}): exact values {exact_share:.5f}; "
      "bytes a state by chunks a layer (chunks, states, runs, requests, responses, layer states):", file=sys.stderr)
for i in sorted(bins):
    b = bins[i]
    print("  row(%.5f, %.3f, %.3f, %.3f, %.3f), // %d" % (b["c"] / b["n"], b["states"] / b["n"], b["runs"] / b["n"],
          b["requests"] / b["n"], b["responses"] / b["n"], b["n"]), file=sys.stderr)
mp, mf = plan["store_peak_bytes"], plan["store_final_bytes"]
print(f"{board},{target},{plan['states']},{peak},{final},{mp},{mf},{mp / peak:.3f},{mf / final:.3f},{objective}")
PY
)")
done
echo "board,target,states,measured_peak_bytes,measured_final_bytes,plan_peak_bytes,plan_final_bytes,peak_ratio,final_ratio,objective"
printf '%s\n' "${rows[@]}"
echo "board,target,objective,states,exact_share,values,policy"
printf '%s\n' "${values_rows[@]}"
