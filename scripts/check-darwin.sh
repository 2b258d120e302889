#!/usr/bin/env bash
# Type-checks the whole workspace for macOS (x64 and arm64) from any host: `cargo check` needs only
# the targets' standard libraries, no Apple linker or SDK, so this proves the darwin packages
# compile, not that they link or run. .ci/run installs the targets when they are missing and runs
# this before the tests.
set -euo pipefail
cd "$(dirname "$0")/.."

targets=(x86_64-apple-darwin aarch64-apple-darwin)

if ! command -v rustup >/dev/null 2>&1; then
  echo "check-darwin: rustup is not installed; it is needed to add the macOS targets" >&2
  exit 2
fi
installed=$(rustup target list --installed)
missing=()
for t in "${targets[@]}"; do
  grep -qx "$t" <<<"$installed" || missing+=("$t")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "check-darwin: missing Rust targets: ${missing[*]}" >&2
  echo "check-darwin: install them with: rustup target add ${missing[*]}" >&2
  exit 2
fi

for t in "${targets[@]}"; do
  echo "check-darwin: cargo check --workspace --all-targets --target $t"
  cargo check --workspace --all-targets --target "$t"
done
echo "check-darwin: both macOS targets type-check"
