/* gen_layout.c - prints a CPython version's sonde_py_layout from its headers, or from our tables.
 *
 * A developer tool driven by gen_layout.sh; built once per interpreter with -DPy_BUILD_CORE
 * against that version's internal headers and linked with the sources in src/sampler/python.
 *   gen_layout headers   every field from offsetof/sizeof and the headers' constants
 *   gen_layout table     the same fields as sonde_py_layout_for() has them; on 3.13 as
 *                        sonde_py_layout_from_debug_offsets() parses this libpython's _PyRuntime
 *   gen_layout debug     3.13+: the word index of each _Py_DebugOffsets field sonde reads, and
 *                        the struct's length in words (debug_offsets.c's table of the version)
 * One "name value" line per field, "-" for SONDE_PY_ABSENT, so two listings diff line by line. */
#include <Python.h>
#include <frameobject.h>
#if PY_VERSION_HEX < 0x03090000
#include <internal/pycore_pystate.h>
#else
#include <internal/pycore_interp.h>
#include <internal/pycore_runtime.h>
#endif
#if PY_VERSION_HEX >= 0x030e0000
#include <internal/pycore_debug_offsets.h>
#include <internal/pycore_interpframe.h>
#include <internal/pycore_stackref.h>
#elif PY_VERSION_HEX >= 0x030b0000
#include <internal/pycore_frame.h>
#endif

#include <stdio.h>
#include <string.h>

#include "sampler/python/layout.h"

static void put(const char *name, uint64_t v)
{
    if (v == SONDE_PY_ABSENT)
        printf("%s -\n", name);
    else
        printf("%s %llu\n", name, (unsigned long long)v);
}

/* The number of the only set bit in the 32-bit word at p (a bit field struct set to one flag). */
static uint64_t bit_of(const void *p)
{
    uint32_t w;
    memcpy(&w, p, sizeof w);
    for (uint64_t b = 0; b < 32; b++)
        if (w == (uint32_t)1 << b)
            return b;
    return SONDE_PY_ABSENT;
}

#define MEMBER_SIZE(type, member) sizeof(((type *)0)->member)

#if PY_VERSION_HEX < 0x030b0000
typedef PyFrameObject frame_t;
#else
typedef _PyInterpreterFrame frame_t;
#endif

static void print_headers(void)
{
    put("major", PY_MAJOR_VERSION);
    put("minor", PY_MINOR_VERSION);

    put("rt_interpreters_head", offsetof(_PyRuntimeState, interpreters.head));
#if PY_VERSION_HEX < 0x030c0000
    put("rt_gilstate_tstate_current", offsetof(_PyRuntimeState, gilstate.tstate_current));
#else
    put("rt_gilstate_tstate_current", SONDE_PY_ABSENT);
#endif

    put("interp_next", offsetof(PyInterpreterState, next));
    put("interp_id", offsetof(PyInterpreterState, id));
#if PY_VERSION_HEX < 0x030b0000
    put("interp_threads_head", offsetof(PyInterpreterState, tstate_head));
#else
    put("interp_threads_head", offsetof(PyInterpreterState, threads.head));
#endif
#if PY_VERSION_HEX < 0x030c0000
    put("interp_ceval_gil", SONDE_PY_ABSENT);
    put("gil_last_holder", SONDE_PY_ABSENT);
    put("gil_locked", SONDE_PY_ABSENT);
#else
    put("interp_ceval_gil", offsetof(PyInterpreterState, ceval.gil));
    put("gil_last_holder", offsetof(struct _gil_runtime_state, last_holder));
    put("gil_locked", offsetof(struct _gil_runtime_state, locked));
#endif

#if PY_VERSION_HEX < 0x03090000
    put("rt_gc_collecting", offsetof(_PyRuntimeState, gc.collecting));
    put("interp_gc_collecting", SONDE_PY_ABSENT);
#else
    put("rt_gc_collecting", SONDE_PY_ABSENT);
    put("interp_gc_collecting", offsetof(PyInterpreterState, gc.collecting));
#endif

    put("ts_next", offsetof(PyThreadState, next));
    put("ts_interp", offsetof(PyThreadState, interp));
#if PY_VERSION_HEX < 0x030b0000
    put("ts_frame_link", SONDE_PY_LINK_FRAME_OBJECT);
    put("ts_frame", offsetof(PyThreadState, frame));
    put("cframe_current_frame", SONDE_PY_ABSENT);
#elif PY_VERSION_HEX < 0x030d0000
    put("ts_frame_link", SONDE_PY_LINK_CFRAME);
    put("ts_frame", offsetof(PyThreadState, cframe));
    put("cframe_current_frame", offsetof(_PyCFrame, current_frame));
#else
    put("ts_frame_link", SONDE_PY_LINK_IFRAME);
    put("ts_frame", offsetof(PyThreadState, current_frame));
    put("cframe_current_frame", SONDE_PY_ABSENT);
#endif
    put("ts_thread_id", offsetof(PyThreadState, thread_id));
#if PY_VERSION_HEX < 0x030b0000
    put("ts_native_thread_id", SONDE_PY_ABSENT);
    put("ts_datastack_chunk", SONDE_PY_ABSENT);
    put("ts_datastack_top", SONDE_PY_ABSENT);
#else
    put("ts_native_thread_id", offsetof(PyThreadState, native_thread_id));
    put("ts_datastack_chunk", offsetof(PyThreadState, datastack_chunk));
    put("ts_datastack_top", offsetof(PyThreadState, datastack_top));
#endif
#if PY_VERSION_HEX < 0x030c0000
    put("ts_status", SONDE_PY_ABSENT);
    put("ts_status_active_bit", SONDE_PY_ABSENT);
    put("ts_status_holds_gil_bit", SONDE_PY_ABSENT);
#else
    static PyThreadState ts;
    put("ts_status", offsetof(PyThreadState, _status));
    memset(&ts, 0, sizeof ts);
    ts._status.active = 1;
    put("ts_status_active_bit", bit_of(&ts._status));
#if PY_VERSION_HEX < 0x030d0000 || PY_VERSION_HEX >= 0x030e0000
    put("ts_status_holds_gil_bit", SONDE_PY_ABSENT);
#else
    memset(&ts, 0, sizeof ts);
    ts._status.holds_gil = 1;
    put("ts_status_holds_gil_bit", bit_of(&ts._status));
#endif
#endif


#if PY_VERSION_HEX < 0x030b0000
    put("frame_previous", offsetof(frame_t, f_back));
    put("frame_code", offsetof(frame_t, f_code));
    put("frame_instr", offsetof(frame_t, f_lasti));
#if PY_VERSION_HEX < 0x030a0000
    put("frame_instr_kind", SONDE_PY_INSTR_LASTI_BYTES);
#else
    put("frame_instr_kind", SONDE_PY_INSTR_LASTI_UNITS);
#endif
    put("frame_instr_size", MEMBER_SIZE(frame_t, f_lasti));
    put("frame_owner", SONDE_PY_ABSENT);
    put("frame_owner_cstack", SONDE_PY_ABSENT);
    put("frame_is_entry", SONDE_PY_ABSENT);
    put("frame_owner_generator", SONDE_PY_ABSENT);
#else
    put("frame_previous", offsetof(frame_t, previous));
#if PY_VERSION_HEX < 0x030d0000
    put("frame_code", offsetof(frame_t, f_code));
    put("frame_instr", offsetof(frame_t, prev_instr));
    put("frame_instr_kind", SONDE_PY_INSTR_POINTER);
    put("frame_instr_size", MEMBER_SIZE(frame_t, prev_instr));
#else
    put("frame_code", offsetof(frame_t, f_executable));
    put("frame_instr", offsetof(frame_t, instr_ptr));
    put("frame_instr_kind", SONDE_PY_INSTR_POINTER);
    put("frame_instr_size", MEMBER_SIZE(frame_t, instr_ptr));
#endif
    put("frame_owner", offsetof(frame_t, owner));
#if PY_VERSION_HEX < 0x030c0000
    put("frame_owner_cstack", SONDE_PY_ABSENT);
    put("frame_is_entry", offsetof(frame_t, is_entry));
#elif PY_VERSION_HEX < 0x030e0000
    put("frame_owner_cstack", FRAME_OWNED_BY_CSTACK);
    put("frame_is_entry", SONDE_PY_ABSENT);
#else
    /* 3.14 numbers the interpreter's entry shim below the C stack's. */
    put("frame_owner_cstack", FRAME_OWNED_BY_INTERPRETER);
    put("frame_is_entry", SONDE_PY_ABSENT);
#endif
    put("frame_owner_generator", FRAME_OWNED_BY_GENERATOR);
#endif
#if PY_VERSION_HEX >= 0x030e0000
    put("frame_code_tag_bits", Py_TAG_BITS); /* f_executable is a tagged _PyStackRef */
#else
    put("frame_code_tag_bits", 0);
#endif

    put("code_filename", offsetof(PyCodeObject, co_filename));
    put("code_name", offsetof(PyCodeObject, co_name));
#if PY_VERSION_HEX < 0x030b0000
    put("code_qualname", SONDE_PY_ABSENT);
#else
    put("code_qualname", offsetof(PyCodeObject, co_qualname));
#endif
    put("code_firstlineno", offsetof(PyCodeObject, co_firstlineno));
#if PY_VERSION_HEX < 0x030b0000
    put("code_flags", offsetof(PyCodeObject, co_flags));
#else
    put("code_flags", SONDE_PY_ABSENT);
#endif
#if PY_VERSION_HEX < 0x030a0000
    put("code_linetable", offsetof(PyCodeObject, co_lnotab));
    put("code_line_format", SONDE_PY_LNOTAB);
#elif PY_VERSION_HEX < 0x030b0000
    put("code_linetable", offsetof(PyCodeObject, co_linetable));
    put("code_line_format", SONDE_PY_LINETABLE_310);
#else
    put("code_linetable", offsetof(PyCodeObject, co_linetable));
    put("code_line_format", SONDE_PY_LOCATIONS_311);
#endif
#if PY_VERSION_HEX < 0x030b0000
    put("code_code_adaptive", SONDE_PY_ABSENT);
#else
    put("code_code_adaptive", offsetof(PyCodeObject, co_code_adaptive));
#endif
    put("code_type_addr", 0);

    static PyASCIIObject s;
    put("str_length", offsetof(PyASCIIObject, length));
    put("str_state", offsetof(PyASCIIObject, state));
    memset(&s, 0, sizeof s);
    s.state.kind = 1;
    put("str_kind_shift", bit_of(&s.state));
    memset(&s, 0, sizeof s);
    s.state.compact = 1;
    put("str_compact_bit", bit_of(&s.state));
    memset(&s, 0, sizeof s);
    s.state.ascii = 1;
    put("str_ascii_bit", bit_of(&s.state));
    put("str_ascii_size", sizeof(PyASCIIObject));
    put("str_compact_size", sizeof(PyCompactUnicodeObject));

    put("bytes_size", offsetof(PyBytesObject, ob_base.ob_size));
    put("bytes_sval", offsetof(PyBytesObject, ob_sval));
    put("ob_type", offsetof(PyObject, ob_type));

#if PY_VERSION_HEX < 0x030b0000
    put("frame_localsplus", offsetof(frame_t, f_localsplus));
#else
    put("frame_localsplus", offsetof(frame_t, localsplus));
#endif
    put("type_basicsize", offsetof(PyTypeObject, tp_basicsize));
    put("type_flags", offsetof(PyTypeObject, tp_flags));
    put("type_dictoffset", offsetof(PyTypeObject, tp_dictoffset));
    put("heaptype_cached_keys", offsetof(PyHeapTypeObject, ht_cached_keys));
    put("dict_keys", offsetof(PyDictObject, ma_keys));
    put("dict_values", offsetof(PyDictObject, ma_values));
#if PY_VERSION_HEX < 0x030b0000
    put("attrs", SONDE_PY_ATTRS_DICT);
#elif PY_VERSION_HEX < 0x030c0000
    put("attrs", SONDE_PY_ATTRS_VALUES_311);
#elif PY_VERSION_HEX < 0x030d0000
    put("attrs", SONDE_PY_ATTRS_TAGGED_312);
#else
    put("attrs", SONDE_PY_ATTRS_INLINE_313);
#endif
    put("keys_311", PY_VERSION_HEX >= 0x030b0000);
    put("ts_exc_info", offsetof(PyThreadState, exc_info));
    put("exc_item_value", offsetof(_PyErr_StackItem, exc_value));
    put("exc_item_previous", offsetof(_PyErr_StackItem, previous_item));
    put("type_name", offsetof(PyTypeObject, tp_name));
}

#define FIELD(f) {#f, offsetof(sonde_py_layout, f)}
static const struct {
    const char *name;
    size_t at;
} fields[] = {
    FIELD(major), FIELD(minor), FIELD(rt_interpreters_head), FIELD(rt_gilstate_tstate_current),
    FIELD(interp_next), FIELD(interp_id), FIELD(interp_threads_head), FIELD(interp_ceval_gil),
    FIELD(gil_last_holder), FIELD(gil_locked), FIELD(rt_gc_collecting),
    FIELD(interp_gc_collecting), FIELD(ts_next), FIELD(ts_interp),
    FIELD(ts_frame_link), FIELD(ts_frame), FIELD(cframe_current_frame), FIELD(ts_thread_id),
    FIELD(ts_native_thread_id), FIELD(ts_datastack_chunk), FIELD(ts_datastack_top),
    FIELD(ts_status),
    FIELD(ts_status_active_bit), FIELD(ts_status_holds_gil_bit), FIELD(frame_previous),
    FIELD(frame_code), FIELD(frame_instr), FIELD(frame_instr_kind), FIELD(frame_instr_size),
    FIELD(frame_owner), FIELD(frame_owner_cstack), FIELD(frame_is_entry),
    FIELD(frame_owner_generator), FIELD(frame_code_tag_bits), FIELD(code_filename), FIELD(code_name), FIELD(code_qualname),
    FIELD(code_firstlineno), FIELD(code_flags), FIELD(code_linetable),
    FIELD(code_line_format), FIELD(code_code_adaptive), FIELD(code_type_addr),
    FIELD(str_length), FIELD(str_state), FIELD(str_kind_shift), FIELD(str_compact_bit),
    FIELD(str_ascii_bit), FIELD(str_ascii_size), FIELD(str_compact_size), FIELD(bytes_size),
    FIELD(bytes_sval), FIELD(ob_type), FIELD(frame_localsplus), FIELD(type_basicsize),
    FIELD(type_flags), FIELD(type_dictoffset), FIELD(heaptype_cached_keys), FIELD(dict_keys),
    FIELD(dict_values), FIELD(attrs), FIELD(keys_311), FIELD(ts_exc_info),
    FIELD(exc_item_value), FIELD(exc_item_previous), FIELD(type_name),
};

static int print_table(void)
{
    sonde_py_layout parsed;
    const sonde_py_layout *l;
#if PY_VERSION_HEX < 0x030d0000
    l = sonde_py_layout_for(PY_MAJOR_VERSION, PY_MINOR_VERSION);
    (void)parsed;
#else
    char err[200];
    if (sonde_py_layout_from_debug_offsets(&_PyRuntime, SONDE_PY_DEBUG_OFFSETS_READ, &parsed, err,
                                           sizeof err) < 0) {
        fprintf(stderr, "gen_layout: %s\n", err);
        return 1;
    }
    l = &parsed;
#endif
    if (!l) {
        fprintf(stderr, "gen_layout: no table for %d.%d\n", PY_MAJOR_VERSION, PY_MINOR_VERSION);
        return 1;
    }
    if (sizeof fields / sizeof fields[0] != sizeof *l / sizeof(uint64_t)) {
        fprintf(stderr, "gen_layout: the field list misses a member of sonde_py_layout\n");
        return 1;
    }
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        uint64_t v;
        memcpy(&v, (const char *)l + fields[i].at, sizeof v);
        put(fields[i].name, v);
    }
    return 0;
}

#if PY_VERSION_HEX >= 0x030d0000
/* Each _Py_DebugOffsets field sonde reads, as its word index (the struct is all uint64_t): the
 * lines of that version's table in debug_offsets.c, where 0 (the cookie's word) is absent. */
#define DO(name, g, f) printf("%s %zu\n", name, offsetof(_Py_DebugOffsets, g.f) / 8)
#define NO(name) printf("%s 0\n", name)
static void print_debug_offsets(void)
{
    printf("words %zu\n", sizeof(_Py_DebugOffsets) / 8);
    DO("rt_size", runtime_state, size);
    DO("rt_interpreters_head", runtime_state, interpreters_head);
    DO("is_size", interpreter_state, size);
    DO("is_id", interpreter_state, id);
    DO("is_next", interpreter_state, next);
    DO("is_threads_head", interpreter_state, threads_head);
    DO("is_ceval_gil", interpreter_state, ceval_gil);
    DO("is_gil_state", interpreter_state, gil_runtime_state);
    DO("is_gil_locked", interpreter_state, gil_runtime_state_locked);
    DO("is_gil_holder", interpreter_state, gil_runtime_state_holder);
    DO("is_gc", interpreter_state, gc);
    DO("ts_size", thread_state, size);
    DO("ts_next", thread_state, next);
    DO("ts_interp", thread_state, interp);
    DO("ts_current_frame", thread_state, current_frame);
    DO("ts_thread_id", thread_state, thread_id);
    DO("ts_native_thread_id", thread_state, native_thread_id);
    DO("ts_datastack_chunk", thread_state, datastack_chunk);
    DO("ts_status", thread_state, status);
    DO("fr_size", interpreter_frame, size);
    DO("fr_previous", interpreter_frame, previous);
    DO("fr_executable", interpreter_frame, executable);
    DO("fr_instr_ptr", interpreter_frame, instr_ptr);
    DO("fr_localsplus", interpreter_frame, localsplus);
    DO("fr_owner", interpreter_frame, owner);
    DO("co_size", code_object, size);
    DO("co_filename", code_object, filename);
    DO("co_name", code_object, name);
    DO("co_qualname", code_object, qualname);
    DO("co_linetable", code_object, linetable);
    DO("co_firstlineno", code_object, firstlineno);
    DO("co_code_adaptive", code_object, co_code_adaptive);
    DO("ob_size", pyobject, size);
    DO("ob_type", pyobject, ob_type);
    DO("tp_size", type_object, size);
    DO("tp_name", type_object, tp_name);
    DO("tp_flags", type_object, tp_flags);
#if PY_VERSION_HEX >= 0x030f0000
    DO("tp_basicsize", type_object, tp_basicsize);
    DO("tp_dictoffset", type_object, tp_dictoffset);
    DO("ht_size", heap_type_object, size);
    DO("ht_cached_keys", heap_type_object, ht_cached_keys);
#else
    NO("tp_basicsize");
    NO("tp_dictoffset");
    NO("ht_size");
    NO("ht_cached_keys");
#endif
    DO("dict_size", dict_object, size);
    DO("dict_keys", dict_object, ma_keys);
    DO("dict_values", dict_object, ma_values);
    DO("bytes_size", bytes_object, size);
    DO("bytes_ob_size", bytes_object, ob_size);
    DO("bytes_sval", bytes_object, ob_sval);
    DO("str_size", unicode_object, size);
    DO("str_state", unicode_object, state);
    DO("str_length", unicode_object, length);
    DO("str_ascii_size", unicode_object, asciiobject_size);
#if PY_VERSION_HEX >= 0x030f0000
    DO("str_compact_size", unicode_object, compactunicodeobject_size);
#else
    NO("str_compact_size");
#endif
    DO("gc_size", gc, size);
    DO("gc_collecting", gc, collecting);
}
#endif

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "headers") == 0) {
        print_headers();
        return 0;
    }
    if (argc == 2 && strcmp(argv[1], "table") == 0)
        return print_table();
#if PY_VERSION_HEX >= 0x030d0000
    if (argc == 2 && strcmp(argv[1], "debug") == 0) {
        print_debug_offsets();
        return 0;
    }
#endif
    fprintf(stderr, "usage: gen_layout headers|table|debug\n");
    return 2;
}
