#!/usr/bin/env bash
# Benchmark of the players, as Markdown tables:
#
# 1. The full 4x4 game, played to the end (no target): seeded games (seeds 1
#    to K) of each player, its moves per second (the player's thinking time),
#    mean and median score, and the share of games whose largest tile reached
#    2048, 4096, 8192, 16384 and 32768.
# 2. 3x3 to 512, solved first (about 10 s): each player's win rate over its
#    games, with one standard error, beside the optimal value from the store.
#
#   scripts/bench-players.sh     # about 25 min on a 2-core machine (expectimax:4 and :5 most of it)
#   scripts/bench.sh --players   # the same, its tables written to the book's Benchmarks page
#   PLAYERS_4X4="greedy:1000 expectimax:2:100" PLAYERS_3X3="greedy:2000" scripts/bench-players.sh
#
# Each entry is SPEC:K (the last colon splits off K, the number of games);
# an empty list skips its table. Players run one after another, one core
# each; the machine's load is printed before and after, since other work on
# it slows the players down.
set -euo pipefail
cd "$(dirname "$0")/.."
net=players/networks
default_4x4="random:1000 order:LDRU:1000 greedy:1000 schain:1000 expectimax:1:1000
  expectimax:2:1000 expectimax:3:500 expectimax:4:200 expectimax:5:20 mc:20:200 mc:100:50
  ntuple:$net/4x4-rows-squares.weights:1000"
default_3x3="optimal:2000 random:2000 order:LDRU:2000 greedy:2000 schain:2000
  expectimax:1:2000 expectimax:2:2000 expectimax:3:2000 expectimax:4:1000 expectimax:5:200
  mc:20:200 mc:100:100 ntuple:$net/3x3-pentomino.weights:2000"
read -r -a players_4x4 <<< "$(echo ${PLAYERS_4X4-$default_4x4})"
read -r -a players_3x3 <<< "$(echo ${PLAYERS_3X3-$default_3x3})"
# SOLVE2048 names a binary already built; otherwise it builds one.
if [[ -z ${SOLVE2048:-} ]]; then
  cargo build --release --quiet --locked --bin solve2048
fi
bin=${SOLVE2048:-target/release/solve2048}
root=$(mktemp -d "${TMPDIR:-/tmp}/solve2048-bench-players.XXXXXX")
trap 'rm -rf "$root"' EXIT

# Run `play --json` for SPEC:K with the game's arguments; print a table row.
row() {
  local entry=$1 kind=$2
  shift 2
  local spec=${entry%:*} games=${entry##*:} start end
  start=$(date +%s.%N)
  "$bin" play --player "$spec" --games "$games" --seed 1 --json "$@" > "$root/play.json"
  end=$(date +%s.%N)
  python3 - "$root/play.json" "$spec" "$games" "$start" "$end" "$kind" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
spec, games, wall, kind = sys.argv[2], int(sys.argv[3]), float(sys.argv[5]) - float(sys.argv[4]), sys.argv[6]
s = d["summary"]
assert s["games"] == games
reached = {r["tile"]: r["share"] for r in s["reached"]}
def rate(r):
    return f"{r / 1e6:.2f} M" if r >= 1e6 else f"{r / 1e3:.1f} k" if r >= 1e4 else f"{r:,.0f}"
def share(t):
    return f"{100 * reached.get(t, 0.0):.1f}%"
if kind == "4x4":
    tiles = " | ".join(share(t) for t in (2048, 4096, 8192, 16384, 32768))
    print(f"| `{spec}` | {games} | {rate(s['moves_per_second'])} | {s['mean_score']:,.0f} "
          f"| {s['median_score']:,.0f} | {tiles} | {wall:.1f} |")
else:
    print(f"| `{spec}` | {games} | {s['win_rate']:.4f} | {s['standard_error']:.4f} "
          f"| {d['start_value']:.4f} | {rate(s['moves_per_second'])} | {wall:.1f} |")
PY
}

echo "# $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')), load average $(cut -d' ' -f1-3 /proc/loadavg)"
if (( ${#players_4x4[@]} )); then
  echo
  echo "4x4, to the end of the game, seeds 1 to K:"
  echo
  echo '| player | games | moves/s | mean score | median | 2048 | 4096 | 8192 | 16384 | 32768 | wall s |'
  echo '|---|---|---|---|---|---|---|---|---|---|---|'
  for entry in "${players_4x4[@]}"; do
    row "$entry" 4x4 --board 4
  done
fi
if (( ${#players_3x3[@]} )); then
  "$bin" solve --board 3 --target 512 --store "$root/3x3-to-512" --json > /dev/null
  echo
  echo "3x3 to 512, seeds 1 to K, beside the optimal value:"
  echo
  echo '| player | games | win rate | standard error | optimal value | moves/s | wall s |'
  echo '|---|---|---|---|---|---|---|'
  for entry in "${players_3x3[@]}"; do
    row "$entry" 3x3 --store "$root/3x3-to-512"
  done
fi
echo
echo "# done $(date -u +%Y-%m-%dT%H:%MZ), load average $(cut -d' ' -f1-3 /proc/loadavg)"
