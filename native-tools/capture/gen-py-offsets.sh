#!/usr/bin/env bash
# Regenerates py_offsets.h: the CPython struct offsets the capture library needs, taken from each
# supported version's own headers (compiled with Py_BUILD_CORE so the internal structs are visible).
# Only maintainers run this; building the library needs no Python (py_offsets.h is committed).
#
# usage: gen-py-offsets.sh [INCLUDE_DIR ...]     (each INCLUDE_DIR is .../include/python3.X)
# default: the pyenv 3.9.18, 3.10.13, 3.11.7, 3.12.1 and 3.13.0 headers; Debian's /usr/include/python3.11 is
# checked for agreement with the 3.11 entry when present (same minor => same layout is our assumption).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$here/py_offsets.h"
pyenv="${PYENV_ROOT:-/root/.pyenv}/versions"
if [ "$#" -eq 0 ]; then
  set -- "$pyenv/3.9.18/include/python3.9" "$pyenv/3.10.13/include/python3.10" "$pyenv/3.11.7/include/python3.11" "$pyenv/3.12.1/include/python3.12" "$pyenv/3.13.0/include/python3.13"
fi
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT

cat > "$tmp/probe.c" <<'C'
#define Py_BUILD_CORE 1
#include <Python.h>
#include <stdio.h>
#include <stddef.h>
#include <string.h>
#if PY_MINOR_VERSION >= 11
#include "internal/pycore_frame.h"
#include "internal/pycore_code.h"
#else
#include <frameobject.h>
#endif

/* bit masks of PyASCIIObject.state, found by setting each bitfield in a zeroed object */
static unsigned int state_word(PyASCIIObject *o) {
    unsigned int w; memcpy(&w, (char *)o + offsetof(PyASCIIObject, state), sizeof w); return w;
}

int main(void) {
    PyASCIIObject o;
    unsigned int kind_mask, compact_mask, ascii_mask;
    int kind_shift = 0;
    memset(&o, 0, sizeof o); o.state.kind = 7; kind_mask = state_word(&o);
    while (!((kind_mask >> kind_shift) & 1)) kind_shift++;
    memset(&o, 0, sizeof o); o.state.compact = 1; compact_mask = state_word(&o);
    memset(&o, 0, sizeof o); o.state.ascii = 1; ascii_mask = state_word(&o);

    printf("    { .minor = %d,\n", PY_MINOR_VERSION);
    printf("      .generated_from = \"%s\",\n", PY_VERSION);
#if PY_MINOR_VERSION <= 10
    /* 3.9, 3.10: one PyFrameObject per Python call, linked by f_back, evaluated by its own
     * _PyEval_EvalFrameDefault call; the position is f_lasti (3.9: bytes, 3.10: code units) */
    printf("      .tstate_frame = %zu, .tstate_cframe = -1, .cframe_current_frame = -1, .tstate_current_frame = -1,\n",
           offsetof(PyThreadState, frame));
    printf("      .tstate_thread_id = %zu,\n", offsetof(PyThreadState, thread_id));
    printf("      .frame_code = %zu, .frame_previous = %zu, .frame_instr = -1, .frame_instr_is_next = 0,\n",
           offsetof(PyFrameObject, f_code), offsetof(PyFrameObject, f_back));
    printf("      .frame_lasti = %zu, .lasti_unit = %d,\n", offsetof(PyFrameObject, f_lasti),
           PY_MINOR_VERSION == 9 ? 1 : (int)sizeof(_Py_CODEUNIT));
    printf("      .frame_owner = -1,\n");
    printf("      .frame_is_entry = -1, .owner_cstack = -1,\n");
    printf("      .owner_generator = -1,\n");
#else
#if PY_MINOR_VERSION >= 13
    printf("      .tstate_frame = -1, .tstate_cframe = -1, .cframe_current_frame = -1, .tstate_current_frame = %zu,\n",
           offsetof(PyThreadState, current_frame));
#else
    printf("      .tstate_frame = -1, .tstate_cframe = %zu, .cframe_current_frame = %zu, .tstate_current_frame = -1,\n",
           offsetof(PyThreadState, cframe), offsetof(_PyCFrame, current_frame));
#endif
    printf("      .tstate_thread_id = %zu,\n", offsetof(PyThreadState, thread_id));
#if PY_MINOR_VERSION >= 13
    printf("      .frame_code = %zu, .frame_previous = %zu, .frame_instr = %zu, .frame_instr_is_next = 1,\n",
           offsetof(_PyInterpreterFrame, f_executable), offsetof(_PyInterpreterFrame, previous),
           offsetof(_PyInterpreterFrame, instr_ptr));
#else
    printf("      .frame_code = %zu, .frame_previous = %zu, .frame_instr = %zu, .frame_instr_is_next = 0,\n",
           offsetof(_PyInterpreterFrame, f_code), offsetof(_PyInterpreterFrame, previous),
           offsetof(_PyInterpreterFrame, prev_instr));
#endif
    printf("      .frame_lasti = -1, .lasti_unit = 0,\n");
    printf("      .frame_owner = %zu,\n", offsetof(_PyInterpreterFrame, owner));
#if PY_MINOR_VERSION == 11
    printf("      .frame_is_entry = %zu, .owner_cstack = -1,\n", offsetof(_PyInterpreterFrame, is_entry));
#else
    printf("      .frame_is_entry = -1, .owner_cstack = %d,\n", (int)FRAME_OWNED_BY_CSTACK);
#endif
    printf("      .owner_generator = %d,\n", (int)FRAME_OWNED_BY_GENERATOR);
#endif
    printf("      .ob_type = %zu,\n", offsetof(PyObject, ob_type));
#if PY_MINOR_VERSION <= 10
    /* no co_qualname before 3.11 (the qualified name is the function object's, which the frame does
     * not reference): the code object's co_name stands in */
    printf("      .code_filename = %zu, .code_qualname = %zu, .code_firstlineno = %zu,\n",
           offsetof(PyCodeObject, co_filename), offsetof(PyCodeObject, co_name),
           offsetof(PyCodeObject, co_firstlineno));
    printf("      .code_firsttraceable = -1, .code_code_adaptive = -1,\n");
#else
    printf("      .code_filename = %zu, .code_qualname = %zu, .code_firstlineno = %zu,\n",
           offsetof(PyCodeObject, co_filename), offsetof(PyCodeObject, co_qualname),
           offsetof(PyCodeObject, co_firstlineno));
    printf("      .code_firsttraceable = %zu, .code_code_adaptive = %zu,\n",
           offsetof(PyCodeObject, _co_firsttraceable), offsetof(PyCodeObject, co_code_adaptive));
#endif
    printf("      .str_length = %zu, .str_state = %zu, .str_ascii_data = %zu, .str_compact_data = %zu,\n",
           offsetof(PyASCIIObject, length), offsetof(PyASCIIObject, state),
           sizeof(PyASCIIObject), sizeof(PyCompactUnicodeObject));
    printf("      .str_kind_mask = 0x%x, .str_kind_shift = %d, .str_compact_mask = 0x%x, .str_ascii_mask = 0x%x },\n",
           kind_mask, kind_shift, compact_mask, ascii_mask);
    return 0;
}
C

entry_for() {
  local inc="$1"
  gcc -std=gnu11 -w -I"$inc" -I"$inc/internal" "$tmp/probe.c" -o "$tmp/probe" && "$tmp/probe"
}

{
  echo "/* Generated by gen-py-offsets.sh from each CPython version's own headers. Do not edit. */"
  echo "/* Regenerate: native-tools/capture/gen-py-offsets.sh [include dirs]   (needs gcc and the headers) */"
  echo "#ifndef HEAPLENS_PY_OFFSETS_H"
  echo "#define HEAPLENS_PY_OFFSETS_H"
  echo "#include \"py_layout.h\""
  echo "static const struct hl_py_layout hl_py_layouts[] = {"
  for inc in "$@"; do entry_for "$inc"; done
  echo "};"
  echo "#endif"
} > "$tmp/out.h"

# Debian's 3.11 (if installed) must agree with the 3.11 entry, except for the version string.
if [ -d /usr/include/python3.11/internal ] && grep -q '.minor = 11' "$tmp/out.h"; then
  entry_for /usr/include/python3.11 | grep -v generated_from > "$tmp/deb311"
  awk '/.minor = 11,/{f=1} f&&!/generated_from/{print} f&&/\},$/{exit}' "$tmp/out.h" > "$tmp/ours311"
  if cmp -s "$tmp/deb311" "$tmp/ours311"; then echo "Debian python3.11 headers agree with the 3.11 entry" >&2
  else echo "WARNING: Debian python3.11 headers differ from the 3.11 entry:" >&2; diff "$tmp/ours311" "$tmp/deb311" >&2 || true; fi
fi
mv "$tmp/out.h" "$out"
echo "wrote $out" >&2
