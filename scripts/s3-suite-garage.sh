#!/usr/bin/env bash
# Runs the S3 integration tests (tests/e2e/s3.rs) against Garage, a
# production S3 server, instead of s3s-fs: a one-node Garage on loopback,
# started, stopped and restarted by the tests themselves.
#
# Reuses the `garage` on PATH, or the binary named by $GARAGE. If there is
# none, installs Garage 2.5.0 with cargo first: that build takes 15-25 min
# on 2 cores and needs a C compiler.
#
# Garage ignores If-None-Match / If-Match (a second create overwrites); the
# project never relies on conditional writes, so the suite is the same.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
want="2.5.0"
if [ -z "${GARAGE:-}" ]; then
  if ! command -v garage >/dev/null; then
    echo "garage not found: installing garage $want with cargo (takes 15-25 min)" >&2
    cargo install garage --locked --version "$want" --quiet
  fi
  GARAGE=$(command -v garage)
fi
export GARAGE
echo "using $("$GARAGE" --version 2>/dev/null | head -1) ($GARAGE)" >&2
SOLVE2048_S3_SERVER=garage cargo test --locked --test e2e s3::
