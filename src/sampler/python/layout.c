/* layout.c - picks a CPython layout: the fixed tables, 3.13's _Py_DebugOffsets; see layout.h. */
#include "layout.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const sonde_py_layout *sonde_py_layout_for(int major, int minor)
{
    if (major != 3)
        return NULL;
    switch (minor) {
    case 8: return &sonde_py_layout_38;
    case 9: return &sonde_py_layout_39;
    case 10: return &sonde_py_layout_310;
    case 11: return &sonde_py_layout_311;
    case 12: return &sonde_py_layout_312;
    default: return NULL;
    }
}

/* 3.13's _Py_DebugOffsets as an array of uint64: the index of each field (the 8-byte cookie is
 * word 0).  Groups as in Include/internal/pycore_runtime.h; each group starts with its struct's
 * size. */
enum {
    DO_VERSION = 1, DO_FREE_THREADED,
    DO_RT_SIZE, DO_RT_FINALIZING, DO_RT_INTERPRETERS_HEAD,
    DO_IS_SIZE, DO_IS_ID, DO_IS_NEXT, DO_IS_THREADS_HEAD, DO_IS_GC, DO_IS_IMPORTS_MODULES,
    DO_IS_SYSDICT, DO_IS_BUILTINS, DO_IS_CEVAL_GIL, DO_IS_GIL_STATE, DO_IS_GIL_ENABLED,
    DO_IS_GIL_LOCKED, DO_IS_GIL_HOLDER,
    DO_TS_SIZE, DO_TS_PREV, DO_TS_NEXT, DO_TS_INTERP, DO_TS_CURRENT_FRAME, DO_TS_THREAD_ID,
    DO_TS_NATIVE_THREAD_ID, DO_TS_DATASTACK_CHUNK, DO_TS_STATUS,
    DO_FR_SIZE, DO_FR_PREVIOUS, DO_FR_EXECUTABLE, DO_FR_INSTR_PTR, DO_FR_LOCALSPLUS, DO_FR_OWNER,
    DO_CO_SIZE, DO_CO_FILENAME, DO_CO_NAME, DO_CO_QUALNAME, DO_CO_LINETABLE, DO_CO_FIRSTLINENO,
    DO_CO_ARGCOUNT, DO_CO_LOCALSPLUSNAMES, DO_CO_LOCALSPLUSKINDS, DO_CO_CODE_ADAPTIVE,
    DO_OB_SIZE, DO_OB_TYPE,
    DO_TYPE_SIZE, DO_TYPE_NAME, DO_TYPE_REPR, DO_TYPE_FLAGS,
    DO_TUPLE_SIZE, DO_TUPLE_ITEM, DO_TUPLE_OB_SIZE,
    DO_LIST_SIZE, DO_LIST_ITEM, DO_LIST_OB_SIZE,
    DO_DICT_SIZE, DO_DICT_KEYS, DO_DICT_VALUES,
    DO_FLOAT_SIZE, DO_FLOAT_FVAL,
    DO_LONG_SIZE, DO_LONG_TAG, DO_LONG_DIGIT,
    DO_BYTES_SIZE, DO_BYTES_OB_SIZE, DO_BYTES_SVAL,
    DO_STR_SIZE, DO_STR_STATE, DO_STR_LENGTH, DO_STR_ASCII_SIZE,
    DO_GC_SIZE, DO_GC_COLLECTING,
    DO_WORDS /* the struct's length in words: 584 bytes */
};

/* No struct of interest is anywhere near this large; bigger sizes mean garbage. */
#define MAX_STRUCT_SIZE ((uint64_t)1 << 24)

static const char debug_cookie[8] = {'x', 'd', 'e', 'b', 'u', 'g', 'p', 'y'};

static int fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (errlen > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static uint64_t word(const unsigned char *b, int i)
{
    uint64_t v;
    memcpy(&v, b + (size_t)i * sizeof v, sizeof v);
    return v;
}

/* The offset at word `at`, if a field of `width` bytes there fits in the struct whose size is at
 * word `size_at`; else SONDE_PY_ABSENT. */
static uint64_t field(const unsigned char *b, int at, int size_at, uint64_t width)
{
    uint64_t off = word(b, at), size = word(b, size_at);
    if (size > MAX_STRUCT_SIZE || off > size || size - off < width)
        return SONDE_PY_ABSENT;
    return off;
}

int sonde_py_layout_from_debug_offsets(const void *bytes, size_t len, sonde_py_layout *out,
                                       char *err, size_t errlen)
{
    const unsigned char *b = bytes;
    if (!b || len < 3 * sizeof(uint64_t))
        return fail(err, errlen, "debug offsets: %zu bytes, too short for the header", len);
    if (memcmp(b, debug_cookie, sizeof debug_cookie) != 0)
        return fail(err, errlen, "debug offsets: no \"xdebugpy\" cookie at _PyRuntime");
    uint64_t version = word(b, DO_VERSION);
    unsigned major = (unsigned)(version >> 24 & 0xff), minor = (unsigned)(version >> 16 & 0xff);
    if (major != 3 || minor != 13)
        return fail(err, errlen,
                    "debug offsets: CPython %u.%u (version 0x%08llx) is not supported; "
                    "this parser knows the 3.13 layout",
                    major, minor, (unsigned long long)version);
    uint64_t free_threaded = word(b, DO_FREE_THREADED);
    if (free_threaded == 1)
        return fail(err, errlen,
                    "debug offsets: free-threaded CPython builds are not supported "
                    "(their objects have a different header)");
    if (free_threaded != 0)
        return fail(err, errlen, "debug offsets: free_threaded is %llu, not 0 or 1",
                    (unsigned long long)free_threaded);
    if (len < DO_WORDS * sizeof(uint64_t))
        return fail(err, errlen, "debug offsets: %zu bytes, the 3.13 struct needs %zu", len,
                    (size_t)DO_WORDS * sizeof(uint64_t));

    uint64_t datastack_chunk = field(b, DO_TS_DATASTACK_CHUNK, DO_TS_SIZE, 16);
    uint64_t datastack_top = datastack_chunk == SONDE_PY_ABSENT ? SONDE_PY_ABSENT
                                                                : datastack_chunk + 8;
    sonde_py_layout l = {
        .major = major,
        .minor = minor,
        .rt_interpreters_head = field(b, DO_RT_INTERPRETERS_HEAD, DO_RT_SIZE, 8),
        .rt_gilstate_tstate_current = SONDE_PY_ABSENT,
        .interp_next = field(b, DO_IS_NEXT, DO_IS_SIZE, 8),
        .interp_id = field(b, DO_IS_ID, DO_IS_SIZE, 8),
        .interp_threads_head = field(b, DO_IS_THREADS_HEAD, DO_IS_SIZE, 8),
        .interp_ceval_gil = field(b, DO_IS_CEVAL_GIL, DO_IS_SIZE, 8),
        .ts_next = field(b, DO_TS_NEXT, DO_TS_SIZE, 8),
        .ts_interp = field(b, DO_TS_INTERP, DO_TS_SIZE, 8),
        .ts_frame_link = SONDE_PY_LINK_IFRAME,
        .ts_frame = field(b, DO_TS_CURRENT_FRAME, DO_TS_SIZE, 8),
        .cframe_current_frame = SONDE_PY_ABSENT,
        .ts_thread_id = field(b, DO_TS_THREAD_ID, DO_TS_SIZE, 8),
        .ts_native_thread_id = field(b, DO_TS_NATIVE_THREAD_ID, DO_TS_SIZE, 8),
        .ts_datastack_chunk = field(b, DO_TS_DATASTACK_CHUNK, DO_TS_SIZE, 8),
        /* Not published: datastack_top follows datastack_chunk (3.13.0's
         * pycore headers, checked with offsetof). */
        .ts_datastack_top = datastack_top,
        .ts_status = field(b, DO_TS_STATUS, DO_TS_SIZE, 4),
        .ts_status_active_bit = 4,    /* _status: initialized, bound, unbound, bound_gilstate, */
        .ts_status_holds_gil_bit = 5, /* active, holds_gil, ... (Include/cpython/pystate.h) */
        .frame_previous = field(b, DO_FR_PREVIOUS, DO_FR_SIZE, 8),
        .frame_code = field(b, DO_FR_EXECUTABLE, DO_FR_SIZE, 8),
        .frame_instr = field(b, DO_FR_INSTR_PTR, DO_FR_SIZE, 8),
        .frame_instr_kind = SONDE_PY_INSTR_POINTER,
        .frame_instr_size = 8,
        .frame_owner = field(b, DO_FR_OWNER, DO_FR_SIZE, 1),
        .frame_owner_cstack = 3, /* FRAME_OWNED_BY_CSTACK */
        .frame_is_entry = SONDE_PY_ABSENT,
        .frame_owner_generator = 1, /* FRAME_OWNED_BY_GENERATOR */
        .code_filename = field(b, DO_CO_FILENAME, DO_CO_SIZE, 8),
        .code_name = field(b, DO_CO_NAME, DO_CO_SIZE, 8),
        .code_qualname = field(b, DO_CO_QUALNAME, DO_CO_SIZE, 8),
        .code_firstlineno = field(b, DO_CO_FIRSTLINENO, DO_CO_SIZE, 4),
        .code_flags = SONDE_PY_ABSENT,
        .code_linetable = field(b, DO_CO_LINETABLE, DO_CO_SIZE, 8),
        .code_line_format = SONDE_PY_LOCATIONS_311,
        .code_code_adaptive = field(b, DO_CO_CODE_ADAPTIVE, DO_CO_SIZE, 2),
        .code_type_addr = 0,
        .str_length = field(b, DO_STR_LENGTH, DO_STR_SIZE, 8),
        .str_state = field(b, DO_STR_STATE, DO_STR_SIZE, 4),
        .str_kind_shift = 2, /* state: interned:2, kind:3, compact:1, ascii:1, ... */
        .str_compact_bit = 5,
        .str_ascii_bit = 6,
        .bytes_size = field(b, DO_BYTES_OB_SIZE, DO_BYTES_SIZE, 8),
        .bytes_sval = field(b, DO_BYTES_SVAL, DO_BYTES_SIZE, 1),
        .ob_type = field(b, DO_OB_TYPE, DO_OB_SIZE, 8),
        /* Not published in _Py_DebugOffsets: 3.13.0's headers, checked with
         * offsetof. */
        .frame_localsplus = field(b, DO_FR_LOCALSPLUS, DO_FR_SIZE, 8),
        .type_basicsize = 32,
        .type_flags = 168,
        .type_dictoffset = 288,
        .heaptype_cached_keys = 880,
        .dict_keys = 32,
        .dict_values = 40,
        .attrs = SONDE_PY_ATTRS_INLINE_313,
        .keys_311 = 1,
    };

    /* The GIL fields are given from the interpreter state (its embedded _gil); the walker
     * follows ceval.gil, so keep them relative to the gil struct. */
    uint64_t gil = field(b, DO_IS_GIL_STATE, DO_IS_SIZE, 0);
    uint64_t holder = field(b, DO_IS_GIL_HOLDER, DO_IS_SIZE, 8);
    uint64_t locked = field(b, DO_IS_GIL_LOCKED, DO_IS_SIZE, 4);
    if (gil == SONDE_PY_ABSENT || holder == SONDE_PY_ABSENT || locked == SONDE_PY_ABSENT ||
        holder < gil || locked < gil)
        return fail(err, errlen, "debug offsets: the GIL fields are out of range");
    l.gil_last_holder = holder - gil;
    l.gil_locked = locked - gil;

    /* The unicode sizes: PyCompactUnicodeObject adds utf8_length and utf8 to PyASCIIObject. */
    uint64_t ascii_size = word(b, DO_STR_ASCII_SIZE);
    if (ascii_size > word(b, DO_STR_SIZE) || ascii_size > MAX_STRUCT_SIZE ||
        ascii_size <= l.str_state || ascii_size <= l.str_length)
        return fail(err, errlen, "debug offsets: sizeof(PyASCIIObject) is out of range");
    l.str_ascii_size = ascii_size;
    l.str_compact_size = ascii_size + 2 * sizeof(uint64_t);

    static const struct {
        size_t at;
        const char *name;
    } required[] = {
#define REQUIRED(f) {offsetof(sonde_py_layout, f), #f}
        REQUIRED(rt_interpreters_head), REQUIRED(interp_next), REQUIRED(interp_id),
        REQUIRED(interp_threads_head), REQUIRED(interp_ceval_gil), REQUIRED(ts_next),
        REQUIRED(ts_interp), REQUIRED(ts_frame), REQUIRED(ts_thread_id),
        REQUIRED(ts_native_thread_id), REQUIRED(ts_datastack_chunk), REQUIRED(ts_datastack_top),
        REQUIRED(ts_status),
        REQUIRED(frame_previous), REQUIRED(frame_code), REQUIRED(frame_instr),
        REQUIRED(frame_owner), REQUIRED(code_filename), REQUIRED(code_name),
        REQUIRED(code_qualname), REQUIRED(code_firstlineno), REQUIRED(code_linetable),
        REQUIRED(code_code_adaptive), REQUIRED(str_length), REQUIRED(str_state),
        REQUIRED(bytes_size), REQUIRED(bytes_sval), REQUIRED(ob_type),
#undef REQUIRED
    };
    for (size_t i = 0; i < sizeof required / sizeof required[0]; i++) {
        uint64_t v;
        memcpy(&v, (const char *)&l + required[i].at, sizeof v);
        if (v == SONDE_PY_ABSENT)
            return fail(err, errlen, "debug offsets: %s lies outside its struct",
                        required[i].name);
    }
    *out = l;
    return 0;
}

/* Code objects hold far fewer code units than this; larger indexes mean garbage. */
#define MAX_CODE_UNITS ((uint32_t)1 << 28)

int sonde_py_instr_index(const sonde_py_layout *l, uint64_t raw, uint64_t code,
                         uint32_t *index)
{
    uint64_t units;
    switch (l->frame_instr_kind) {
    case SONDE_PY_INSTR_LASTI_BYTES:
    case SONDE_PY_INSTR_LASTI_UNITS: {
        int32_t lasti = (int32_t)(uint32_t)raw;
        if (lasti < 0)
            return -1;
        if (l->frame_instr_kind == SONDE_PY_INSTR_LASTI_UNITS)
            units = (uint64_t)lasti;
        else if (lasti % 2 == 0)
            units = (uint64_t)lasti / 2;
        else
            return -1;
        break;
    }
    case SONDE_PY_INSTR_POINTER: {
        if (l->code_code_adaptive == SONDE_PY_ABSENT || code > UINT64_MAX - l->code_code_adaptive)
            return -1;
        uint64_t start = code + l->code_code_adaptive;
        if (raw < start || (raw - start) % 2 != 0)
            return -1;
        units = (raw - start) / 2;
        break;
    }
    default:
        return -1;
    }
    if (units >= MAX_CODE_UNITS)
        return -1;
    *index = (uint32_t)units;
    return 0;
}
