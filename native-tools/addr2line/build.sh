#!/usr/bin/env bash
# Builds heaplens_addr2line.wasm offline with Debian 12's Rust toolchain and packaged crates.
# Needs the apt packages in apt-packages.txt. The output is byte-for-byte reproducible; the test
# `symbolize/wasm-build.test.ts` (HEAPLENS_WASM_REBUILD=1) rebuilds it and compares with the committed file.
#   OUT=/path/to/file.wasm ./build.sh    # build somewhere else (the reproducibility check does this)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"
out="${OUT:-$here/heaplens_addr2line.wasm}"

# Debian's toolchain by full path: rustup's toolchain earlier on PATH has no wasm32 standard library, and the
# standard library must match the compiler exactly.
export RUSTC=/usr/bin/rustc
CARGO=/usr/bin/cargo
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$here/target}"
export CARGO_HOME="$CARGO_TARGET_DIR/cargo-home"
# addr2line 0.19 with our fix for DWARF 5 DW_AT_call_file = 0 (README.md).
patched="$CARGO_TARGET_DIR/patched/addr2line-0.19.0"

# Build paths must not leak into the module (reproducible across checkouts and target folders). rustc applies
# the last matching prefix, so the most specific one comes last.
export RUSTFLAGS="--remap-path-prefix=$here=. --remap-path-prefix=/usr/share/cargo/registry=registry --remap-path-prefix=$patched=patched/addr2line-0.19.0"
export SOURCE_DATE_EPOCH=0
rm -rf "$patched"
mkdir -p "$(dirname "$patched")"
cp -r /usr/share/cargo/registry/addr2line-0.19.0 "$patched"
patch -s -p1 -d "$patched" < "$here/addr2line-0.19-heaplens.patch"

"$CARGO" build --release --lib --locked --offline -q --config "patch.crates-io.addr2line.path=\"$patched\""
raw="$CARGO_TARGET_DIR/wasm32-unknown-unknown/release/heaplens_addr2line.wasm"
wasm-opt -O "$raw" -o "$out"
echo "built $out ($(stat -c %s "$out") bytes, sha256 $(sha256sum "$out" | cut -c1-16)…)"
