#!/usr/bin/env bash
# Builds native-tools/capture/build/libheaplens_capture.so with gcc. Needs no Python: the CPython
# struct offsets are in the committed py_offsets.h (regenerate with gen-py-offsets.sh).
# The library is written under a temporary name and renamed: test files that build it in parallel
# never load a half-written one.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p "$here/build"
CC="${CC:-gcc}"
out="$here/build/libheaplens_capture.so"
"$CC" -std=gnu11 -O2 -g -fPIC -shared -fvisibility=hidden -fno-omit-frame-pointer \
  -Wall -Wextra -Wno-unused-parameter -Werror=implicit-function-declaration \
  -o "$out.$$.tmp" "$here/heaplens_capture.c" -ldl -lpthread
mv -f "$out.$$.tmp" "$out"
echo "built $out"
