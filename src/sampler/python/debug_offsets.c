/* debug_offsets.c - a layout from the _Py_DebugOffsets that CPython 3.13+ publishes at the start
 * of _PyRuntime; see layout.h.
 *
 * _Py_DebugOffsets is a struct of uint64_t only, and grows with each version: groups gain
 * fields, and new groups come between the old ones.  Each version's table below gives the word
 * index of every field sonde reads (0 where that version has no such field: word 0 is the
 * cookie), as tools/gen_layout.sh prints it from the version's pycore_debug_offsets.h.  What a
 * version does not publish comes from its headers, and tools/gen_layout.sh checks the layout
 * parsed from a real _PyRuntime against them. */
#include "layout.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* The fields sonde reads, by group: runtime, interpreter, thread, frame, code, object, type,
 * heap type, dict, bytes, str, the collector's state.  Each group's first is its struct's size. */
#define DEBUG_FIELDS(X)                                                                          \
    X(rt_size) X(rt_interpreters_head)                                                           \
    X(is_size) X(is_id) X(is_next) X(is_threads_head) X(is_ceval_gil) X(is_gil_state)            \
    X(is_gil_locked) X(is_gil_holder) X(is_gc)                                                   \
    X(ts_size) X(ts_next) X(ts_interp) X(ts_current_frame) X(ts_thread_id)                       \
    X(ts_native_thread_id) X(ts_datastack_chunk) X(ts_status)                                    \
    X(fr_size) X(fr_previous) X(fr_executable) X(fr_instr_ptr) X(fr_localsplus) X(fr_owner)      \
    X(co_size) X(co_filename) X(co_name) X(co_qualname) X(co_linetable) X(co_firstlineno)        \
    X(co_code_adaptive)                                                                          \
    X(ob_size) X(ob_type)                                                                        \
    X(tp_size) X(tp_name) X(tp_flags) X(tp_basicsize) X(tp_dictoffset)                           \
    X(ht_size) X(ht_cached_keys)                                                                 \
    X(dict_size) X(dict_keys) X(dict_values)                                                     \
    X(bytes_size) X(bytes_ob_size) X(bytes_sval)                                                 \
    X(str_size) X(str_state) X(str_length) X(str_ascii_size) X(str_compact_size)              \
    X(gc_size) X(gc_collecting)                                                                 \
    X(fr_stackpointer) X(gen_size) X(gen_iframe) X(gen_frame_state)                              \
    X(set_size) X(set_used) X(set_table) X(set_mask) X(long_size) X(long_tag) X(long_digit)

typedef struct debug_version {
    unsigned minor;
    uint16_t words; /* the struct's length in words */
#define INDEX(f) uint16_t f;
    DEBUG_FIELDS(INDEX)
#undef INDEX
    /* Not published by this version: from its headers. */
    uint64_t status_holds_gil_bit; /* _status.holds_gil (3.13) */
    uint64_t code_tag_bits;        /* f_executable's tag bits: Py_TAG_BITS (3.14+) */
    uint64_t cached_keys;          /* PyHeapTypeObject.ht_cached_keys (<= 3.14) */
    uint64_t exc_info;             /* PyThreadState.exc_info (3.15 publishes exc_state, the
                                      thread's own item, not the innermost handler's) */
    int8_t awaiting[2];            /* FRAME_SUSPENDED_YIELD_FROM (and 3.15's _LOCKED); where
                                      the version keeps task lists (the gen group is there) */
    uint8_t awaited_slot;          /* the awaited object is stackpointer[-this] then (3.15's
                                      _PyFrame_StackPeek takes a depth: 2, below a null ref) */
} debug_version;

static const debug_version versions[] = {
    {
        .minor = 13,
        .words = 73, .rt_size = 3, .rt_interpreters_head = 5, .is_size = 6, .is_id = 7,
        .is_next = 8, .is_threads_head = 9, .is_ceval_gil = 14, .is_gil_state = 15,
        .is_gil_locked = 17, .is_gil_holder = 18, .is_gc = 10, .ts_size = 19, .ts_next = 21, .ts_interp = 22,
        .ts_current_frame = 23, .ts_thread_id = 24, .ts_native_thread_id = 25,
        .ts_datastack_chunk = 26, .ts_status = 27, .fr_size = 28, .fr_previous = 29,
        .fr_executable = 30, .fr_instr_ptr = 31, .fr_localsplus = 32, .fr_owner = 33,
        .co_size = 34, .co_filename = 35, .co_name = 36, .co_qualname = 37, .co_linetable = 38,
        .co_firstlineno = 39, .co_code_adaptive = 43, .ob_size = 44, .ob_type = 45, .tp_size = 46,
        .tp_name = 47, .tp_flags = 49, .dict_size = 56, .dict_keys = 57, .dict_values = 58,
        .bytes_size = 64,
        .bytes_ob_size = 65, .bytes_sval = 66, .str_size = 67, .str_state = 68, .str_length = 69,
        .str_ascii_size = 70, .gc_size = 71, .gc_collecting = 72,
        .status_holds_gil_bit = 5, .code_tag_bits = 0, .cached_keys = 880, .exc_info = 120,
    },
    {
        .minor = 14,
        .words = 95, .rt_size = 3, .rt_interpreters_head = 5, .is_size = 6, .is_id = 7,
        .is_next = 8, .is_threads_head = 9, .is_ceval_gil = 15, .is_gil_state = 16,
        .is_gil_locked = 18, .is_gil_holder = 19, .is_gc = 11, .ts_size = 22, .ts_next = 24,
        .ts_interp = 25, .ts_current_frame = 26, .ts_thread_id = 27, .ts_native_thread_id = 28,
        .ts_datastack_chunk = 29, .ts_status = 30, .fr_size = 31, .fr_previous = 32,
        .fr_executable = 33, .fr_instr_ptr = 34, .fr_localsplus = 35, .fr_owner = 36,
        .co_size = 39, .co_filename = 40, .co_name = 41, .co_qualname = 42, .co_linetable = 43,
        .co_firstlineno = 44, .co_code_adaptive = 48, .ob_size = 50, .ob_type = 51, .tp_size = 52,
        .tp_name = 53, .tp_flags = 55, .dict_size = 66, .dict_keys = 67, .dict_values = 68,
        .bytes_size = 74,
        .bytes_ob_size = 75, .bytes_sval = 76, .str_size = 77, .str_state = 78, .str_length = 79,
        .str_ascii_size = 80, .gc_size = 81, .gc_collecting = 82,
        .status_holds_gil_bit = SONDE_PY_ABSENT, .code_tag_bits = 3, .cached_keys = 880,
        .exc_info = 120,
        .fr_stackpointer = 37, .gen_size = 83, .gen_iframe = 85, .gen_frame_state = 86,
        .set_size = 62, .set_used = 63, .set_table = 64, .set_mask = 65, .long_size = 71,
        .long_tag = 72, .long_digit = 73, .awaiting = { -1, -1 }, .awaited_slot = 1,
    },
    {
        .minor = 15,
        .words = 111, .rt_size = 3, .rt_interpreters_head = 5, .is_size = 6, .is_id = 7,
        .is_next = 8, .is_threads_head = 9, .is_ceval_gil = 15, .is_gil_state = 16,
        .is_gil_locked = 18, .is_gil_holder = 19, .is_gc = 11, .ts_size = 22, .ts_next = 24,
        .ts_interp = 25, .ts_current_frame = 26, .ts_thread_id = 30, .ts_native_thread_id = 31,
        .ts_datastack_chunk = 32, .ts_status = 33, .fr_size = 39,
        .fr_previous = 40, .fr_executable = 41, .fr_instr_ptr = 42, .fr_localsplus = 43,
        .fr_owner = 44, .co_size = 47, .co_filename = 48, .co_name = 49, .co_qualname = 50,
        .co_linetable = 51, .co_firstlineno = 52, .co_code_adaptive = 56, .ob_size = 58,
        .ob_type = 59, .tp_size = 60, .tp_name = 61, .tp_flags = 63, .tp_basicsize = 64,
        .tp_dictoffset = 65,
        .ht_size = 66, .ht_cached_keys = 67, .dict_size = 78, .dict_keys = 79, .dict_values = 80,
        .bytes_size = 86, .bytes_ob_size = 87, .bytes_sval = 88, .str_size = 89, .str_state = 90,
        .str_length = 91, .str_ascii_size = 92, .str_compact_size = 93, .gc_size = 94,
        .gc_collecting = 95,
        .status_holds_gil_bit = SONDE_PY_ABSENT, .code_tag_bits = 3,
        .cached_keys = SONDE_PY_ABSENT, .exc_info = 144,
        .fr_stackpointer = 45, .gen_size = 99, .gen_iframe = 101, .gen_frame_state = 102,
        .set_size = 74, .set_used = 75, .set_table = 76, .set_mask = 77, .long_size = 83,
        .long_tag = 84, .long_digit = 85, .awaiting = { 2, 3 }, .awaited_slot = 2,
    },
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

/* The offset at word `at`, if the version has it and a field of `width` bytes there fits in the
 * struct whose size is at word `size_at`; else SONDE_PY_ABSENT. */
static uint64_t field(const unsigned char *b, int at, int size_at, uint64_t width)
{
    if (at == 0 || size_at == 0)
        return SONDE_PY_ABSENT;
    uint64_t off = word(b, at), size = word(b, size_at);
    if (size > MAX_STRUCT_SIZE || off > size || size - off < width)
        return SONDE_PY_ABSENT;
    return off;
}

/* The published offset where the version has one, else what its headers say. */
static uint64_t published_or(uint64_t published, int at, uint64_t fact)
{
    return at ? published : fact;
}

static const debug_version *version_of(unsigned major, unsigned minor)
{
    for (size_t i = 0; major == 3 && i < sizeof versions / sizeof versions[0]; i++)
        if (versions[i].minor == minor)
            return &versions[i];
    return NULL;
}

int sonde_py_layout_from_debug_offsets(const void *bytes, size_t len, sonde_py_layout *out,
                                       char *err, size_t errlen)
{
    const unsigned char *b = bytes;
    if (!b || len < 3 * sizeof(uint64_t))
        return fail(err, errlen, "debug offsets: %zu bytes, too short for the header", len);
    if (memcmp(b, debug_cookie, sizeof debug_cookie) != 0)
        return fail(err, errlen, "debug offsets: no \"xdebugpy\" cookie at _PyRuntime");
    uint64_t version = word(b, 1);
    unsigned major = (unsigned)(version >> 24 & 0xff), minor = (unsigned)(version >> 16 & 0xff);
    const debug_version *v = version_of(major, minor);
    if (!v)
        return fail(err, errlen,
                    "debug offsets: CPython %u.%u (version 0x%08llx) is not supported; "
                    "this parser knows 3.%u to 3.%u",
                    major, minor, (unsigned long long)version, versions[0].minor,
                    versions[sizeof versions / sizeof versions[0] - 1].minor);
    uint64_t free_threaded = word(b, 2);
    if (free_threaded == 1)
        return fail(err, errlen,
                    "debug offsets: free-threaded CPython builds are not supported "
                    "(their objects have a different header)");
    if (free_threaded != 0)
        return fail(err, errlen, "debug offsets: free_threaded is %llu, not 0 or 1",
                    (unsigned long long)free_threaded);
    if (len < v->words * sizeof(uint64_t))
        return fail(err, errlen, "debug offsets: %zu bytes, the 3.%u struct needs %zu", len,
                    v->minor, (size_t)v->words * sizeof(uint64_t));

    uint64_t datastack_chunk = field(b, v->ts_datastack_chunk, v->ts_size, 16);
    sonde_py_layout l = {
        .major = major,
        .minor = minor,
        .rt_interpreters_head = field(b, v->rt_interpreters_head, v->rt_size, 8),
        .rt_gilstate_tstate_current = SONDE_PY_ABSENT,
        .interp_next = field(b, v->is_next, v->is_size, 8),
        .interp_id = field(b, v->is_id, v->is_size, 8),
        .interp_threads_head = field(b, v->is_threads_head, v->is_size, 8),
        .interp_ceval_gil = field(b, v->is_ceval_gil, v->is_size, 8),
        .ts_next = field(b, v->ts_next, v->ts_size, 8),
        .ts_interp = field(b, v->ts_interp, v->ts_size, 8),
        .ts_frame_link = SONDE_PY_LINK_IFRAME,
        .ts_frame = field(b, v->ts_current_frame, v->ts_size, 8),
        .cframe_current_frame = SONDE_PY_ABSENT,
        .ts_thread_id = field(b, v->ts_thread_id, v->ts_size, 8),
        .ts_native_thread_id = field(b, v->ts_native_thread_id, v->ts_size, 8),
        .ts_datastack_chunk = field(b, v->ts_datastack_chunk, v->ts_size, 8),
        /* Not published: datastack_top follows datastack_chunk in every version. */
        .ts_datastack_top = datastack_chunk == SONDE_PY_ABSENT ? SONDE_PY_ABSENT
                                                                : datastack_chunk + 8,
        .ts_status = field(b, v->ts_status, v->ts_size, 4),
        .ts_status_active_bit = 4, /* _status: initialized, bound, unbound, bound_gilstate, */
        .ts_status_holds_gil_bit = v->status_holds_gil_bit, /* active, (3.13) holds_gil, ... */
        .frame_previous = field(b, v->fr_previous, v->fr_size, 8),
        .frame_code = field(b, v->fr_executable, v->fr_size, 8),
        .frame_instr = field(b, v->fr_instr_ptr, v->fr_size, 8),
        .frame_instr_kind = SONDE_PY_INSTR_POINTER,
        .frame_instr_size = 8,
        .frame_owner = field(b, v->fr_owner, v->fr_size, 1),
        /* FRAME_OWNED_BY_CSTACK in 3.13, FRAME_OWNED_BY_INTERPRETER from 3.14: both 3. */
        .frame_owner_cstack = 3,
        .frame_is_entry = SONDE_PY_ABSENT,
        .frame_owner_generator = 1, /* FRAME_OWNED_BY_GENERATOR */
        .frame_code_tag_bits = v->code_tag_bits,
        .code_filename = field(b, v->co_filename, v->co_size, 8),
        .code_name = field(b, v->co_name, v->co_size, 8),
        .code_qualname = field(b, v->co_qualname, v->co_size, 8),
        .code_firstlineno = field(b, v->co_firstlineno, v->co_size, 4),
        .code_flags = SONDE_PY_ABSENT,
        .code_linetable = field(b, v->co_linetable, v->co_size, 8),
        .code_line_format = SONDE_PY_LOCATIONS_311,
        .code_code_adaptive = field(b, v->co_code_adaptive, v->co_size, 2),
        .code_type_addr = 0,
        .str_length = field(b, v->str_length, v->str_size, 8),
        .str_state = field(b, v->str_state, v->str_size, 4),
        .str_kind_shift = 2, /* state: interned:2, kind:3, compact:1, ascii:1, ... */
        .str_compact_bit = 5,
        .str_ascii_bit = 6,
        .bytes_size = field(b, v->bytes_ob_size, v->bytes_size, 8),
        .bytes_sval = field(b, v->bytes_sval, v->bytes_size, 1),
        .ob_type = field(b, v->ob_type, v->ob_size, 8),
        .frame_localsplus = field(b, v->fr_localsplus, v->fr_size, 8),
        .type_basicsize = published_or(field(b, v->tp_basicsize, v->tp_size, 8), v->tp_basicsize,
                                       32),
        .type_flags = field(b, v->tp_flags, v->tp_size, 8),
        .type_dictoffset = published_or(field(b, v->tp_dictoffset, v->tp_size, 8),
                                        v->tp_dictoffset, 288),
        .heaptype_cached_keys = published_or(field(b, v->ht_cached_keys, v->ht_size, 8),
                                             v->ht_cached_keys, v->cached_keys),
        .dict_keys = field(b, v->dict_keys, v->dict_size, 8),
        .dict_values = field(b, v->dict_values, v->dict_size, 8),
        .attrs = SONDE_PY_ATTRS_INLINE_313,
        .keys_311 = 1,
        .ts_exc_info = v->exc_info + 8 <= word(b, v->ts_size) ? v->exc_info : SONDE_PY_ABSENT,
        /* _PyErr_StackItem is {exc_value, previous_item} in every version that publishes. */
        .exc_item_value = 0,
        .exc_item_previous = 8,
        .type_name = field(b, v->tp_name, v->tp_size, 8),
        .rt_gc_collecting = SONDE_PY_ABSENT,
    };

    /* The task graph's objects, where the version keeps task lists: all of them, or none. */
    if (v->gen_iframe) {
        l.frame_stackpointer = field(b, v->fr_stackpointer, v->fr_size, 8);
        l.gen_iframe = field(b, v->gen_iframe, v->gen_size, 8);
        l.gen_frame_state = field(b, v->gen_frame_state, v->gen_size, 1);
        l.gen_awaiting_state = (uint8_t)v->awaiting[0];
        l.gen_awaiting_state_2 = (uint8_t)v->awaiting[1];
        l.gen_awaited_slot = v->awaited_slot;
        l.set_used = field(b, v->set_used, v->set_size, 8);
        l.set_table = field(b, v->set_table, v->set_size, 8);
        l.set_mask = field(b, v->set_mask, v->set_size, 8);
        l.long_tag = field(b, v->long_tag, v->long_size, 8);
        l.long_digit = field(b, v->long_digit, v->long_size, 4);
        const uint64_t graph[] = { l.frame_stackpointer, l.gen_iframe, l.gen_frame_state,
                                   l.set_used, l.set_table, l.set_mask, l.long_tag,
                                   l.long_digit };
        l.task_lists = 1;
        for (size_t i = 0; i < sizeof graph / sizeof graph[0]; i++)
            l.task_lists &= graph[i] != SONDE_PY_ABSENT;
    }

    /* The collector's state is embedded in the interpreter state; its flag is read from there. */
    uint64_t gc = field(b, v->is_gc, v->is_size, 0), collecting = field(b, v->gc_collecting,
                                                                        v->gc_size, 4);
    l.interp_gc_collecting = gc == SONDE_PY_ABSENT || collecting == SONDE_PY_ABSENT ||
                                     gc + collecting + 4 > word(b, v->is_size)
                                 ? SONDE_PY_ABSENT
                                 : gc + collecting;

    /* The GIL fields are given from the interpreter state (its embedded _gil); the walker
     * follows ceval.gil, so keep them relative to the gil struct. */
    uint64_t gil = field(b, v->is_gil_state, v->is_size, 0);
    uint64_t holder = field(b, v->is_gil_holder, v->is_size, 8);
    uint64_t locked = field(b, v->is_gil_locked, v->is_size, 4);
    if (gil == SONDE_PY_ABSENT || holder == SONDE_PY_ABSENT || locked == SONDE_PY_ABSENT ||
        holder < gil || locked < gil)
        return fail(err, errlen, "debug offsets: the GIL fields are out of range");
    l.gil_last_holder = holder - gil;
    l.gil_locked = locked - gil;

    /* The unicode sizes: PyCompactUnicodeObject adds utf8_length and utf8 to PyASCIIObject. */
    uint64_t ascii_size = word(b, v->str_ascii_size);
    if (ascii_size > word(b, v->str_size) || ascii_size > MAX_STRUCT_SIZE ||
        ascii_size <= l.str_state || ascii_size <= l.str_length)
        return fail(err, errlen, "debug offsets: sizeof(PyASCIIObject) is out of range");
    l.str_ascii_size = ascii_size;
    l.str_compact_size = v->str_compact_size ? word(b, v->str_compact_size)
                                             : ascii_size + 2 * sizeof(uint64_t);
    if (l.str_compact_size < ascii_size || l.str_compact_size > word(b, v->str_size))
        return fail(err, errlen, "debug offsets: sizeof(PyCompactUnicodeObject) is out of range");

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
        uint64_t val;
        memcpy(&val, (const char *)&l + required[i].at, sizeof val);
        if (val == SONDE_PY_ABSENT)
            return fail(err, errlen, "debug offsets: %s lies outside its struct",
                        required[i].name);
    }
    *out = l;
    return 0;
}
