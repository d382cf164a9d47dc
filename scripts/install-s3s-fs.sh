#!/usr/bin/env bash
# Installs s3s-fs, a small S3 server over local files, used by the S3
# integration tests. Version 0.14.1 is pinned: later ones need a newer Rust.
# Skips the install when the right version is already on PATH.
set -euo pipefail
want="0.14.1"
if command -v s3s-fs >/dev/null && s3s-fs --version 2>/dev/null | grep -q "$want"; then
  exit 0
fi
cargo install "s3s-fs@$want" --features binary --locked --quiet
