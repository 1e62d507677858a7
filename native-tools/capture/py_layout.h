/* Layout description of one CPython minor version, filled by the generated py_offsets.h.
 * Offsets are in bytes; -1 means "this version has no such field". */
#ifndef HEAPLENS_PY_LAYOUT_H
#define HEAPLENS_PY_LAYOUT_H
struct hl_py_layout {
    int minor;                    /* 3.<minor> */
    const char *generated_from;   /* PY_VERSION of the headers used */
    int tstate_frame;             /* PyThreadState.frame (3.9, 3.10: a PyFrameObject chain), -1 after */
    int tstate_cframe;            /* PyThreadState.cframe (3.11, 3.12) */
    int cframe_current_frame;     /* _PyCFrame.current_frame (3.11, 3.12) */
    int tstate_current_frame;     /* PyThreadState.current_frame (3.13) */
    int tstate_thread_id;         /* PyThreadState.thread_id (pthread_self() of the owner) */
    int frame_code;               /* _PyInterpreterFrame.f_code / f_executable; PyFrameObject.f_code (3.9, 3.10) */
    int frame_previous;           /* _PyInterpreterFrame.previous; PyFrameObject.f_back (3.9, 3.10) */
    int frame_instr;              /* prev_instr (3.11, 3.12) / instr_ptr (3.13) */
    int frame_instr_is_next;      /* 1 when frame_instr points at the current instruction (instr_ptr) */
    int frame_lasti;              /* PyFrameObject.f_lasti, int (3.9, 3.10); -1 before start */
    int lasti_unit;               /* bytes per f_lasti step: 1 (3.9), 2 (3.10: code units) */
    int frame_owner;              /* char */
    int frame_is_entry;           /* bool, 3.11 only */
    int owner_cstack;             /* FRAME_OWNED_BY_CSTACK (3.12+), -1 before */
    int owner_generator;          /* FRAME_OWNED_BY_GENERATOR */
    int ob_type;
    int code_filename, code_qualname, code_firstlineno, code_firsttraceable, code_code_adaptive;
                                  /* code_qualname: co_qualname (3.11+), co_name (3.9, 3.10) */
    int str_length, str_state, str_ascii_data, str_compact_data;
    unsigned int str_kind_mask; int str_kind_shift; unsigned int str_compact_mask, str_ascii_mask;
};
#endif
