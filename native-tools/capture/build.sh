#!/usr/bin/env bash
# Builds native-tools/capture/build/libheaplens_capture.so with gcc. Needs no Python: the CPython
# struct offsets are in the committed py_offsets.h (regenerate with gen-py-offsets.sh).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p "$here/build"
CC="${CC:-gcc}"
"$CC" -std=gnu11 -O2 -g -fPIC -shared -fvisibility=hidden -fno-omit-frame-pointer \
  -Wall -Wextra -Wno-unused-parameter -Werror=implicit-function-declaration \
  -o "$here/build/libheaplens_capture.so" "$here/heaplens_capture.c" -ldl -lpthread
echo "built $here/build/libheaplens_capture.so"
