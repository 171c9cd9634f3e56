/* layout.h - where each supported CPython keeps threads, frames, code and strings, for an outside
 * reader.
 *
 * An external sampler reads another process's memory and walks
 *   _PyRuntime -> interpreters -> thread states -> frames -> code objects -> str / bytes.
 * Every byte offset and size it needs is one uint64_t field of sonde_py_layout.  The layouts of
 * 3.8 to 3.12 are fixed tables (layout_3X.c, generated and checked with tools/gen_layout.sh);
 * 3.13 and later publish their own layout in _Py_DebugOffsets at the start of _PyRuntime, parsed
 * by sonde_py_layout_from_debug_offsets() (debug_offsets.c).  Offsets that a version does not
 * have are SONDE_PY_ABSENT (0 is a real offset in several structs).  Everything read from the
 * target is untrusted: callers bound every read, and the helpers here never trust a value they
 * are handed. */
#ifndef SONDE_SAMPLER_PYTHON_LAYOUT_H
#define SONDE_SAMPLER_PYTHON_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

/* An offset, bit or value the version does not have. */
#define SONDE_PY_ABSENT UINT64_MAX

/* Bytes to read at _PyRuntime for sonde_py_layout_from_debug_offsets() (fewer only where the
 * mapping ends first); more than any supported version's _Py_DebugOffsets. */
#define SONDE_PY_DEBUG_OFFSETS_READ 1024

/* How a thread state leads to its innermost Python frame. */
enum sonde_py_frame_link {
    SONDE_PY_LINK_FRAME_OBJECT = 1, /* ts_frame holds a PyFrameObject * */
    SONDE_PY_LINK_CFRAME = 2,       /* ts_frame holds a _PyCFrame *; its cframe_current_frame
                                       holds the _PyInterpreterFrame * */
    SONDE_PY_LINK_IFRAME = 3,       /* ts_frame holds the _PyInterpreterFrame * */
};

/* What the frame's instruction field holds (see sonde_py_instr_index()). */
enum sonde_py_instr {
    SONDE_PY_INSTR_LASTI_BYTES = 1, /* int: byte offset of the last instruction, -1 before it */
    SONDE_PY_INSTR_LASTI_UNITS = 2, /* int: code-unit index of the last instruction, -1 before */
    SONDE_PY_INSTR_POINTER = 3,     /* _Py_CODEUNIT *: a code unit inside the code object at
                                       code_code_adaptive; before it while the frame starts */
};

/* Where an instance of a heap type keeps its attributes (see attr.h). */
enum sonde_py_attrs {
    SONDE_PY_ATTRS_DICT = 1,          /* a dict at obj + type.tp_dictoffset (<= 3.10) */
    SONDE_PY_ATTRS_VALUES_311 = 2,    /* values array at obj - 32, else a dict at obj - 24 */
    SONDE_PY_ATTRS_TAGGED_312 = 3,    /* at obj - 24: values pointer - 1 (odd), or a dict */
    SONDE_PY_ATTRS_INLINE_313 = 4,    /* values inline at obj + tp_basicsize (when valid),
                                         else a dict at obj - 24 */
};

/* The format of the code object's line table (see linetable.h). */
enum sonde_py_line_format {
    SONDE_PY_LNOTAB = 1,         /* co_lnotab: (byte delta u8, line delta i8) pairs */
    SONDE_PY_LINETABLE_310 = 2,  /* co_linetable: (byte length u8, line delta i8 or -128) pairs */
    SONDE_PY_LOCATIONS_311 = 3,  /* co_linetable: location entries in code units */
};

/* Every field is a byte offset from the start of the named struct unless it says otherwise. */
typedef struct sonde_py_layout {
    uint64_t major, minor;               /* the CPython version, e.g. 3 and 12 */

    /* _PyRuntimeState (the _PyRuntime symbol) */
    uint64_t rt_interpreters_head;       /* PyInterpreterState *interpreters.head */
    uint64_t rt_gilstate_tstate_current; /* PyThreadState *gilstate.tstate_current, the GIL
                                            holder or NULL; ABSENT from 3.12 (thread-local) */

    /* PyInterpreterState */
    uint64_t interp_next;                /* PyInterpreterState *next */
    uint64_t interp_id;                  /* int64_t id */
    uint64_t interp_threads_head;        /* PyThreadState *tstate_head / threads.head */
    uint64_t interp_ceval_gil;           /* struct _gil_runtime_state *ceval.gil; ABSENT <= 3.11 */
    uint64_t gil_last_holder;            /* PyThreadState *last_holder inside the gil struct */
    uint64_t gil_locked;                 /* int locked inside the gil struct: the holder counts
                                            only while it is nonzero (and not -1) */
    uint64_t rt_gc_collecting;           /* int gc.collecting in _PyRuntimeState: nonzero while
                                            the collector runs; 3.8 only, else ABSENT */
    uint64_t interp_gc_collecting;       /* the same in PyInterpreterState, where each
                                            interpreter has its collector; ABSENT in 3.8 */

    /* PyThreadState */
    uint64_t ts_next;                    /* PyThreadState *next */
    uint64_t ts_interp;                  /* PyInterpreterState *interp */
    uint64_t ts_frame_link;              /* enum sonde_py_frame_link */
    uint64_t ts_frame;                   /* frame (<= 3.10), cframe (3.11/3.12), current_frame */
    uint64_t cframe_current_frame;       /* _PyInterpreterFrame *current_frame in _PyCFrame;
                                            ABSENT unless ts_frame_link is CFRAME */
    uint64_t ts_thread_id;               /* unsigned long thread_id: pthread_self() */
    uint64_t ts_native_thread_id;        /* unsigned long native_thread_id: the kernel TID;
                                            ABSENT <= 3.10 */
    uint64_t ts_datastack_chunk;         /* _PyStackChunk *datastack_chunk; ABSENT <= 3.10 */
    uint64_t ts_datastack_top;           /* PyObject **datastack_top: the end of the used part
                                            of that chunk, where 3.11+ keeps its frames;
                                            ABSENT <= 3.10 */
    uint64_t ts_status;                  /* unsigned int _status bit field; ABSENT <= 3.11 */
    uint64_t ts_status_active_bit;       /* bit number of _status.active; ABSENT <= 3.11 */
    uint64_t ts_status_holds_gil_bit;    /* bit number of _status.holds_gil: 3.13 only (3.14
                                            made it a field of its own), else ABSENT */

    /* PyFrameObject (<= 3.10) or _PyInterpreterFrame (3.11+) */
    uint64_t frame_previous;             /* f_back / previous */
    uint64_t frame_code;                 /* PyCodeObject *f_code / PyObject *f_executable */
    uint64_t frame_instr;                /* f_lasti / prev_instr / instr_ptr */
    uint64_t frame_instr_kind;           /* enum sonde_py_instr */
    uint64_t frame_instr_size;           /* bytes in the instruction field: 4 or 8 */
    uint64_t frame_owner;                /* char owner; ABSENT <= 3.10 */
    uint64_t frame_owner_cstack;         /* owner values >= this mark shim frames to skip
                                            (FRAME_OWNED_BY_CSTACK; 3.14+ the lower
                                            FRAME_OWNED_BY_INTERPRETER); ABSENT <= 3.11 */
    uint64_t frame_is_entry;             /* bool is_entry: first frame of a C-level eval loop;
                                            3.11 only, else ABSENT */
    uint64_t frame_owner_generator;      /* the owner value of a generator's or coroutine's
                                            frame (FRAME_OWNED_BY_GENERATOR); ABSENT <= 3.10 */
    uint64_t frame_code_tag_bits;        /* low bits of frame_code that tag it, not address it
                                            (3.14+: a _PyStackRef, Py_TAG_BITS); 0 before */

    /* PyCodeObject */
    uint64_t code_filename;              /* PyObject *co_filename (str) */
    uint64_t code_name;                  /* PyObject *co_name (str) */
    uint64_t code_qualname;              /* PyObject *co_qualname (str); ABSENT <= 3.10 */
    uint64_t code_firstlineno;           /* int co_firstlineno */
    uint64_t code_flags;                 /* int co_flags, read where frames have no owner to
                                            tell a generator's: <= 3.10, else ABSENT */
    uint64_t code_linetable;             /* PyObject *co_lnotab / co_linetable (bytes) */
    uint64_t code_line_format;           /* enum sonde_py_line_format */
    uint64_t code_code_adaptive;         /* _Py_CODEUNIT co_code_adaptive[] (inline in the code
                                            object); ABSENT <= 3.10 */
    uint64_t code_type_addr;             /* address of PyCode_Type in the target, for checking
                                            *(code + ob_type); 0 in the tables: the attacher fills
                                            its copy from the symbol (0 = skip the check) */

    /* PyASCIIObject / PyCompactUnicodeObject (see unicode.h) */
    uint64_t str_length;                 /* Py_ssize_t length, in code points */
    uint64_t str_state;                  /* the 32-bit state bit field */
    uint64_t str_kind_shift;             /* state >> this & 7 = bytes per code point (1, 2, 4) */
    uint64_t str_compact_bit;            /* bit number of state.compact */
    uint64_t str_ascii_bit;              /* bit number of state.ascii */
    uint64_t str_ascii_size;             /* sizeof(PyASCIIObject): compact ASCII data start */
    uint64_t str_compact_size;           /* sizeof(PyCompactUnicodeObject): other compact data */

    /* PyBytesObject */
    uint64_t bytes_size;                 /* Py_ssize_t ob_size */
    uint64_t bytes_sval;                 /* char ob_sval[] */

    /* PyObject */
    uint64_t ob_type;                    /* PyTypeObject *ob_type */

    /* Reading an object's attributes (attr.h): thread names */
    uint64_t frame_localsplus;           /* the frame's locals: f_localsplus / localsplus */
    uint64_t type_basicsize;             /* Py_ssize_t tp_basicsize */
    uint64_t type_flags;                 /* unsigned long tp_flags */
    uint64_t type_dictoffset;            /* Py_ssize_t tp_dictoffset */
    uint64_t heaptype_cached_keys;       /* PyDictKeysObject *ht_cached_keys (shared keys) */
    uint64_t dict_keys;                  /* PyDictKeysObject *ma_keys */
    uint64_t dict_values;                /* values array *ma_values (split tables) */
    uint64_t attrs;                      /* enum sonde_py_attrs */
    uint64_t keys_311;                   /* 1: 3.11's keys layout (log2 sizes, kinds) */

    /* The exception a thread handles (sampling --mode exception), as sys.exc_info() finds it */
    uint64_t ts_exc_info;                /* _PyErr_StackItem *exc_info in PyThreadState: the
                                            innermost handler's item */
    uint64_t exc_item_value;             /* PyObject *exc_value in _PyErr_StackItem: the
                                            exception, or NULL / None where none is handled */
    uint64_t exc_item_previous;          /* _PyErr_StackItem *previous_item: the next outer */
    uint64_t type_name;                  /* const char *tp_name in PyTypeObject */

    /* The asyncio task graph (dump --async), where each thread keeps its tasks in a list
     * that the _asyncio module's own debug offsets describe (asyncio_tasks.h): task_lists 1,
     * and the rest of this group set; all 0 where the version has no such lists. */
    uint64_t task_lists;
    uint64_t frame_stackpointer;         /* _PyStackRef *stackpointer: above the frame's
                                            value stack */
    uint64_t gen_iframe;                 /* the frame inside a coroutine (or generator) */
    uint64_t gen_frame_state;            /* int8_t gi_frame_state */
    uint64_t gen_awaiting_state;         /* that state while suspended awaiting the object on
                                            top of the frame's stack (FRAME_SUSPENDED_YIELD_
                                            FROM), stored as its int8 value's byte */
    uint64_t gen_awaiting_state_2;       /* another such state (3.15's _LOCKED), or the same */
    uint64_t gen_awaited_slot;           /* that object is stackpointer[-this] */
    uint64_t set_used;                   /* PySetObject: Py_ssize_t used */
    uint64_t set_table;                  /* setentry *table (entries of {key, hash}) */
    uint64_t set_mask;                   /* Py_ssize_t mask: entries - 1 */
    uint64_t long_tag;                   /* PyLongObject: uintptr_t lv_tag */
    uint64_t long_digit;                 /* digit ob_digit[] (30-bit digits in uint32) */
} sonde_py_layout;

/* The fixed tables, one per layout_3X.c; reach them through sonde_py_layout_for(). */
extern const sonde_py_layout sonde_py_layout_38, sonde_py_layout_39, sonde_py_layout_310,
    sonde_py_layout_311, sonde_py_layout_312;

/* The fixed layout of CPython major.minor (3.8 to 3.12), or NULL. */
const sonde_py_layout *sonde_py_layout_for(int major, int minor);

/* Builds *out from the _Py_DebugOffsets at the start of _PyRuntime (3.13+), given `len` bytes
 * read there (at least that version's struct; SONDE_PY_DEBUG_OFFSETS_READ is enough).  Checks the
 * cookie, the version, the build (free-threaded builds are refused) and that every offset lies
 * inside its struct.  0, or -1 with a message in err (errlen bytes, may be 0). */
int sonde_py_layout_from_debug_offsets(const void *bytes, size_t len, sonde_py_layout *out,
                                       char *err, size_t errlen);

/* The code-unit index to look up in the line table (linetable.h), from `raw`, the frame's
 * instruction field as read (frame_instr_size bytes, zero-extended), and `code`, the code
 * object's address.  -1 when the frame has not started an instruction yet (the caller may use
 * co_firstlineno) or the value is out of range. */
int sonde_py_instr_index(const sonde_py_layout *l, uint64_t raw, uint64_t code,
                         uint32_t *index);

#endif
