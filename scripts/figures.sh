#!/usr/bin/env bash
# Regenerate the committed figures: solves 3x3 to 1024 (about 20 s on 2 cores)
# into a temporary store and plots it to docs/src/images/.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
store=$(mktemp -d "${TMPDIR:-/tmp}/solve2048-figures.XXXXXX")
trap 'rm -rf "$store"' EXIT
target/release/solve2048 solve --board 3 --target 1024 --store "$store/3x3-1024" >/dev/null
target/release/solve2048 plot --store "$store/3x3-1024" --out docs/src/images/state-space-3x3-to-1024.svg
