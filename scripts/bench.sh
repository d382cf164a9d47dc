#!/usr/bin/env bash
# The benchmarks: runs them and rewrites their sections of the book's
# Benchmarks page (docs/src/reference/benchmarks.md) with what it measured,
# each row with its command, the machine, the build and the date. Rows and
# sections a run does not measure keep their last figures.
#
#   scripts/bench.sh                      # 3x3 to 1024 and 4x4 to 16 (minutes on 2 cores)
#   scripts/bench.sh --big                # also 4x4 to 32 (about half an hour on 2 cores)
#   scripts/bench.sh --games "2:16 3:64"  # these games only (BOARD:TARGET)
#   scripts/bench.sh --players            # also scripts/bench-players.sh (about 25 min)
#   scripts/bench.sh --evaluate           # also evaluate players on 3x3 to 512 and 1024
#   scripts/bench.sh --export             # also export 3x3 to 256 to Parquet
#   scripts/bench.sh --serve              # also the web API's answer time on 3x3 to 1024
#   scripts/bench.sh --tests              # also the whole test suite (.ci/run)
#   THREADS=16 scripts/bench.sh           # kernel threads [default: every core]
#   SOLVE2048=target/release/solve2048 scripts/bench.sh   # a binary already built
#   BENCH_PAGE=/tmp/page.md scripts/bench.sh ...          # rewrite a copy of the page instead
#
# Every solve runs on a fresh store: `solve2048 solve --board B --target T
# --threads N --store DIR --json`, its core time and peak RSS taken from the
# kernel's account of the process (wait4). Each solved store is then read
# back by `verify`. Other work on the machine slows every figure down: run
# it on a quiet machine, and compare only rows of one machine and build.
set -euo pipefail
cd "$(dirname "$0")/.."
games="3:1024 4:16"
extra=()
while (($#)); do
  case $1 in
    --big) games="$games 4:32" ;;
    --games) games=$2; shift ;;
    --players | --evaluate | --export | --serve | --tests) extra+=("${1#--}") ;;
    *) echo "usage: scripts/bench.sh [--big] [--games \"B:T ...\"] [--players] [--evaluate] [--export] [--serve] [--tests]" >&2; exit 1 ;;
  esac
  shift
done
if [[ -z ${SOLVE2048:-} ]]; then
  cargo build --release --quiet --locked --bin solve2048
  SOLVE2048=target/release/solve2048
  build_kind=release
else
  build_kind="binary $SOLVE2048"
fi
if [[ " ${extra[*]} " == *" serve "* ]]; then
  cargo build --release --quiet --locked -p solve2048-serve --example load
fi
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
[[ -z $(git status --porcelain --untracked-files=no 2>/dev/null) ]] || commit="$commit+changes"
root=$(mktemp -d "${TMPDIR:-/tmp}/solve2048-bench.XXXXXX")
trap 'rm -rf "$root"' EXIT
export SOLVE2048 BENCH_ROOT=$root BENCH_BUILD="$commit, $build_kind"
python3 scripts/bench.py "${THREADS:-$(nproc)}" "$games" "${extra[@]}"
