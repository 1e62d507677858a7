#!/usr/bin/env bash
# Builds heaplens_addr2line.wasm offline with Debian 12's Rust toolchain and packaged crates.
# Needs the apt packages in apt-packages.txt. The output is byte-for-byte reproducible; the test
# `core/symbolize/wasm-build.test.ts` (HEAPLENS_WASM_REBUILD=1) rebuilds it and compares with the committed file.
#   OUT=/path/to/file.wasm ./build.sh    # build somewhere else (the reproducibility check does this)
#   NATIVE_BENCH=1 ./build.sh            # instead, build the same code natively for the benchmark; prints its path
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"
out="${OUT:-$here/heaplens_addr2line.wasm}"

# Debian's toolchain by full path: rustup's toolchain earlier on PATH has no wasm32 standard library, and the
# standard library must match the compiler exactly.
export RUSTC=/usr/bin/rustc
CARGO=/usr/bin/cargo
# Own target folder: cargo does not notice that a registry crate changed (our patch), so artifacts from a plain
# `cargo build` (unpatched) must never be reused.
# The patch's hash is part of the default folder, so a changed patch never meets artifacts of the old one.
patch_hash="$(sha256sum "$here/addr2line-0.19-heaplens.patch" | cut -c1-12)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$here/target/build-sh-$patch_hash}"
export CARGO_HOME="$CARGO_TARGET_DIR/cargo-home"
# addr2line 0.19 with our fix for DWARF 5 DW_AT_call_file = 0 (README.md). The crates come from a scratch
# copy of Debian's registry folder (symlinks, plus the patched addr2line) used as the same directory source,
# so package ids, symbol hashes and therefore the output do not depend on where the copy is.
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
registry="$scratch/registry"
mkdir "$registry"
for crate in /usr/share/cargo/registry/*; do ln -s "$crate" "$registry/$(basename "$crate")"; done
rm "$registry/addr2line-0.19.0"
cp -r /usr/share/cargo/registry/addr2line-0.19.0 "$registry/addr2line-0.19.0"
patch -s -p1 -d "$registry/addr2line-0.19.0" < "$here/addr2line-0.19-heaplens.patch"

# Build paths must not leak into the module (reproducible across checkouts and scratch folders).
export RUSTFLAGS="--remap-path-prefix=$here=. --remap-path-prefix=$registry=registry --remap-path-prefix=/usr/share/cargo/registry=registry"
export SOURCE_DATE_EPOCH=0

if [ "${NATIVE_BENCH:-}" = 1 ]; then
  # The same code built natively for the benchmark (src/bin/native-bench.rs); not part of the module.
  "$CARGO" build --release --locked --offline -q --bin native-bench --target x86_64-unknown-linux-gnu \
    --config "source.debian.directory=\"$registry\""
  echo "$CARGO_TARGET_DIR/x86_64-unknown-linux-gnu/release/native-bench"
  exit 0
fi

# Bulk memory (memory.copy / memory.fill, in every WASM engine since 2020: Node 14+, Electron, browsers): memcpy
# and memset become single instructions instead of compiler_builtins' byte loops.
export RUSTFLAGS="$RUSTFLAGS -C target-feature=+bulk-memory"
"$CARGO" build --release --lib --locked --offline -q --config "source.debian.directory=\"$registry\""
raw="$CARGO_TARGET_DIR/wasm32-unknown-unknown/release/heaplens_addr2line.wasm"
wasm-opt -O --enable-bulk-memory "$raw" -o "$out"
echo "built $out ($(stat -c %s "$out") bytes, sha256 $(sha256sum "$out" | cut -c1-16)…)"
