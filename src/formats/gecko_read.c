/* gecko_read.c - reads the Firefox Profiler's files into the profile
 * model: the Gecko profile format (sonde's -f gecko, Firefox's own) and
 * the processed format (Python 3.15's profiling.sampling --gecko); see
 * gecko.h.
 *
 * Both hold, per thread, a stack table (a frame and the prefix stack),
 * a frame table and samples (a stack and a time); the Gecko format names
 * a frame's function by its location string, the processed one by a
 * function table.  Tables come in two shapes, which one reader serves:
 * { "schema": {column: position}, "data": [rows] } and { column: [values],
 * "length": N }.  A thread is read in three passes over its tables: the
 * samples counted per stack, the counts summed into each prefix (a prefix
 * must be an earlier stack, so this one backward pass covers every path
 * and no cycle can be followed), and a node made for each stack a sample
 * reached, its parent's already made.  Then its samples join the
 * timeline. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/grow.h"
#include "gecko.h"
#include "json_about.h"

/* Sample weights above these are refused: counts, and CPU time in ns (a
 * thread's CPU between two samples, at least one a second, is less).
 * A file holds under 2^30 samples, so sums stay below 2^64. */
#define MAX_WEIGHT 1e9
#define MAX_CPU_NS 1e10
/* Sample times past this (31 years) are taken as this. */
#define MAX_NS 1000000000000000000ll

/* The tables a thread may share with others in the processed format. */
enum { STRING_TABLE, STRING_ARRAY, FRAME_TABLE, STACK_TABLE, FUNC_TABLE, NSHARED };
static const char *const shared_keys[NSHARED] = { "stringTable", "stringArray", "frameTable",
                                                  "stackTable", "funcTable" };

typedef struct reader {
    const sonde_jtree *t;
    sonde_profile *p;
    const sonde_jval *shared_tables[NSHARED];   /* the processed format's profile.shared's */
    uint64_t work, budget;      /* table entries the threads' passes cover, and their cap */
    double cpu_scale;           /* ns in a threadCPUDelta unit when samples weigh their CPU
                                   time (meta.sampleUnits), else 0: samples are counted */
    char *scratch;              /* a NUL-terminated copy of a name or file */
    size_t scratch_cap;
    char *err;
    size_t errlen;
} reader;

/* A table of either shape, and one of its columns. */
typedef struct table {
    const sonde_jval *obj, *schema, *rows;   /* rows: the { schema, data } shape */
    uint32_t len;
} table;
typedef struct column {
    int64_t field;              /* rows: the position in a row; -1 absent */
    const sonde_jval *values;   /* the other shape: the list; NULL absent */
} column;

static int fail(reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(reader *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->err, r->errlen, fmt, ap);
    va_end(ap);
    return -1;
}

static const sonde_jval *get(const reader *r, const sonde_jval *obj, const char *key)
{
    return obj && obj->type == SONDE_J_OBJ ? sonde_json_get(r->t, obj, key) : NULL;
}

static int table_open(reader *r, const sonde_jval *obj, const char *what, table *tab)
{
    *tab = (table){ .obj = obj };
    if (!obj || obj->type != SONDE_J_OBJ)
        return fail(r, "no %s table", what);
    tab->schema = get(r, obj, "schema");
    tab->rows = get(r, obj, "data");
    if (tab->schema || tab->rows) {
        if (!tab->schema || tab->schema->type != SONDE_J_OBJ || !tab->rows ||
            tab->rows->type != SONDE_J_ARR)
            return fail(r, "the %s table has no \"schema\" object and \"data\" list", what);
        tab->len = tab->rows->len;
        return 0;
    }
    const sonde_jval *len = get(r, obj, "length");
    if (!len || len->type != SONDE_J_NUM || !(len->num >= 0 && len->num <= r->t->nvals))
        return fail(r, "the %s table has no \"length\" (or \"schema\" and \"data\")", what);
    tab->len = (uint32_t)len->num;
    return 0;
}

/* The column called name: absent is an error when required. */
static int column_open(reader *r, const table *tab, const char *name, int required,
                       column *c)
{
    *c = (column){ .field = -1 };
    const sonde_jval *v = get(r, tab->rows ? tab->schema : tab->obj, name);
    if (!v || v->type == SONDE_J_NULL) {
        if (required)
            return fail(r, "a table has no \"%s\" column", name);
        return 0;
    }
    if (tab->rows) {
        if (v->type != SONDE_J_NUM || !(v->num >= 0 && v->num < 65536) || v->num != (int)v->num)
            return fail(r, "the schema's \"%s\" is not a position in a row", name);
        c->field = (int64_t)v->num;
    } else if (v->type != SONDE_J_ARR || v->len < tab->len) {
        return fail(r, "the \"%s\" column is not a list as long as its table (%u)", name,
                    tab->len);
    } else {
        c->values = v;
    }
    return 0;
}

/* Row i's value of column c: NULL when it has none. */
static const sonde_jval *cell(const reader *r, const table *tab, const column *c, uint32_t i)
{
    if (!tab->rows)
        return c->values ? sonde_json_item(r->t, c->values, i) : NULL;
    const sonde_jval *row = c->field >= 0 ? sonde_json_item(r->t, tab->rows, i) : NULL;
    return row && row->type == SONDE_J_ARR ? sonde_json_item(r->t, row, (uint32_t)c->field)
                                           : NULL;
}

/* Row i's index into a table of `limit` entries: 1 with *out, 0 for null
 * or none, -1 for anything else. */
static int cell_index(const reader *r, const table *tab, const column *c, uint32_t i,
                      uint32_t limit, uint32_t *out)
{
    const sonde_jval *v = cell(r, tab, c, i);
    if (!v || v->type == SONDE_J_NULL)
        return 0;
    if (v->type != SONDE_J_NUM || !(v->num >= 0 && v->num < limit) || v->num != (uint32_t)v->num)
        return -1;
    *out = (uint32_t)v->num;
    return 1;
}

/* Row i's line: 0 when null, absent or not a line. */
static int32_t cell_line(const reader *r, const table *tab, const column *c, uint32_t i)
{
    const sonde_jval *v = cell(r, tab, c, i);
    return v && v->type == SONDE_J_NUM ? (int32_t)sonde_num_to_int(v->num, 0, INT32_MAX) : 0;
}

/* text[0..n) NUL-terminated in r->scratch, after prefix. */
static const char *copy(reader *r, const char *prefix, const char *text, size_t n)
{
    size_t lp = strlen(prefix);
    char *s = sonde_grow(r->scratch, &r->scratch_cap, lp + n + 1, 1, SIZE_MAX);
    if (!s)
        return NULL;
    r->scratch = s;
    memcpy(s, prefix, lp);
    memcpy(s + lp, text, n);
    s[lp + n] = '\0';
    return s;
}

/* The function of code named qualname[0..n) in file at line: co_name is
 * the last dotted part of a Python function's qualified name. */
static uint32_t code_func(reader *r, const char *file, int32_t line, const char *qualname)
{
    enum sonde_func_kind kind = sonde_func_kind_of(file, line);
    const char *dot = kind == SONDE_FUNC_PYTHON ? strrchr(qualname, '.') : NULL;
    const char *name = dot && dot[1] ? dot + 1 : qualname;
    return sonde_profile_func(r->p, file, line, name, qualname, kind);
}

/* Native function f, whose source file the location named, keeps the
 * library named too as its object (a mapping of no known address). */
static uint32_t native_object(reader *r, uint32_t f, const char *lib, size_t n)
{
    char *object = strndup(lib, n);
    uint32_t m = object ? sonde_profile_mapping(r->p, object, "", 0, 0, 0) : 0;
    free(object);
    if (!m)
        return SONDE_NO_FUNC;
    r->p->funcs[f].mapping = m;
    return f;
}

/* The function a Gecko location string names (gecko.h). */
static uint32_t location_func(reader *r, const char *s, size_t n)
{
    sonde_gecko_location loc;
    sonde_gecko_location_parse(s, n, &loc);
    char *file = NULL;
    uint32_t f = SONDE_NO_FUNC;
    if (loc.form == SONDE_GECKO_NATIVE || loc.form == SONDE_GECKO_CODE)
        file = strndup(loc.file, loc.file_len);
    if ((loc.form == SONDE_GECKO_NATIVE || loc.form == SONDE_GECKO_CODE) && !file)
        return SONDE_NO_FUNC;
    if (loc.form == SONDE_GECKO_NATIVE) {
        const char *name = copy(r, "", loc.name, loc.name_len);
        f = name ? sonde_profile_func(r->p, file, 0, name, name, SONDE_FUNC_NATIVE) : f;
        if (f != SONDE_NO_FUNC && loc.file != loc.lib && !r->p->funcs[f].mapping)
            f = native_object(r, f, loc.lib, loc.lib_len);
    } else if (loc.form == SONDE_GECKO_CODE) {
        const char *name = loc.name_len ? copy(r, "", loc.name, loc.name_len)
                                        : copy(r, "(root scope) ", file, strlen(file));
        f = name ? code_func(r, file, loc.line, name) : f;
    } else {
        const char *name = copy(r, "", s, n);
        f = name ? sonde_profile_func(r->p, "~", 0, name, name, SONDE_FUNC_C) : f;
    }
    free(file);
    return f;
}

/* What one thread's tables are read through. */
typedef struct thread_in {
    uint32_t index;             /* the profile thread */
    const sonde_jval *strings;
    int processed;              /* frames name a function table, not a location */
    int deltas;                 /* sample times are distances from the one before */
    table frames, funcs, stacks, samples;
    column location, func, line, fn_name, fn_file, fn_line, prefix, frame, stack, time, weight,
        cpu;
    uint32_t *memo;             /* string (Gecko) or function (processed) -> 1 + function */
    uint64_t *count, *total;    /* stack -> its samples' weight; with the stacks above it */
    uint32_t *node;             /* stack -> its node, once made */
} thread_in;

static uint32_t oom_func(reader *r)
{
    fail(r, "out of memory");
    return SONDE_NO_FUNC;
}

/* The function of entry key of the processed format's function table. */
static uint32_t table_func(reader *r, thread_in *in, uint32_t key)
{
    uint32_t name, file;
    if (cell_index(r, &in->funcs, &in->fn_name, key, in->strings->len, &name) <= 0) {
        fail(r, "thread %u: function %u has no name in the string table", in->index, key);
        return SONDE_NO_FUNC;
    }
    const char *qualname = sonde_json_str(r->t, sonde_json_item(r->t, in->strings, name));
    int has_file = cell_index(r, &in->funcs, &in->fn_file, key, in->strings->len, &file);
    if (has_file <= 0)
        return sonde_profile_func(r->p, "~", 0, qualname, qualname, SONDE_FUNC_C);
    const char *path = sonde_json_str(r->t, sonde_json_item(r->t, in->strings, file));
    return code_func(r, path, cell_line(r, &in->funcs, &in->fn_line, key), qualname);
}

/* The function frame i names, read once per string or function entry. */
static uint32_t frame_func(reader *r, thread_in *in, uint32_t i)
{
    uint32_t key;
    int got = in->processed
                  ? cell_index(r, &in->frames, &in->func, i, in->funcs.len, &key)
                  : cell_index(r, &in->frames, &in->location, i, in->strings->len, &key);
    if (got <= 0) {
        fail(r, "thread %u: frame %u names no %s", in->index, i,
             in->processed ? "function" : "string");
        return SONDE_NO_FUNC;
    }
    if (!in->memo[key]) {
        const sonde_jval *s = in->processed ? NULL : sonde_json_item(r->t, in->strings, key);
        if (!in->processed && (!s || s->type != SONDE_J_STR)) {
            fail(r, "thread %u: string %u is not a string", in->index, key);
            return SONDE_NO_FUNC;
        }
        uint32_t f = in->processed ? table_func(r, in, key)
                                   : location_func(r, r->t->pool + s->off, s->len);
        if (f == SONDE_NO_FUNC)
            return r->err[0] ? f : oom_func(r);
        in->memo[key] = f + 1;
    }
    return in->memo[key] - 1;
}

/* Sample i's weight in ticks: its CPU time in ns where samples weigh it
 * (unknown: one period), else its count (the processed format's
 * "weight", 1 when absent).  0, or -1 with a message. */
static int sample_weight(reader *r, thread_in *in, uint32_t i, uint64_t *out)
{
    const sonde_jval *w = cell(r, &in->samples, r->cpu_scale ? &in->cpu : &in->weight, i);
    double unknown = r->cpu_scale ? 1e9 / r->p->sample_rate : 1;
    double v = !w || w->type == SONDE_J_NULL ? unknown
               : w->type == SONDE_J_NUM ? w->num * (r->cpu_scale ? r->cpu_scale : 1) : -1;
    if (!(v >= 0 && v <= (r->cpu_scale ? MAX_CPU_NS : MAX_WEIGHT)) ||
        (!r->cpu_scale && v != (uint64_t)v))
        return fail(r, "thread %u: sample %u's %s", in->index, i,
                    r->cpu_scale ? "threadCPUDelta is not a CPU time under 10 s"
                                 : "weight is not a count of samples");
    *out = (uint64_t)(v + (r->cpu_scale ? 0.5 : 0));
    return 0;
}

/* Pass 1: each sample's weight onto its stack's count. */
static int count_samples(reader *r, thread_in *in)
{
    for (uint32_t i = 0; i < in->samples.len; i++) {
        uint32_t s;
        uint64_t weight;
        int got = cell_index(r, &in->samples, &in->stack, i, in->stacks.len, &s);
        if (got < 0)
            return fail(r, "thread %u: sample %u names no stack of its table", in->index, i);
        if (sample_weight(r, in, i, &weight) < 0)
            return -1;
        if (got)
            in->count[s] += weight;
    }
    return 0;
}

/* Pass 2: every stack's count summed into its prefixes (each an earlier
 * stack, so one backward pass). */
static int sum_prefixes(reader *r, thread_in *in)
{
    for (uint32_t s = in->stacks.len; s-- > 0;) {
        uint32_t prefix;
        int got = cell_index(r, &in->stacks, &in->prefix, s, s, &prefix);
        if (got < 0)
            return fail(r, "thread %u: stack %u's prefix is not an earlier stack", in->index, s);
        in->total[s] += in->count[s];
        if (got)
            in->total[prefix] += in->total[s];
    }
    return 0;
}

/* Pass 3: a node for each stack a sample reached, under its prefix's. */
static int make_nodes(reader *r, thread_in *in)
{
    sonde_profile *p = r->p;
    uint32_t root = p->threads[in->index].root;
    for (uint32_t s = 0; s < in->stacks.len; s++) {
        uint32_t frame, prefix;
        if (!in->total[s])
            continue;
        if (cell_index(r, &in->stacks, &in->frame, s, in->frames.len, &frame) <= 0)
            return fail(r, "thread %u: stack %u names no frame of its table", in->index, s);
        uint32_t func = frame_func(r, in, frame);
        if (func == SONDE_NO_FUNC)
            return -1;
        int has_prefix = cell_index(r, &in->stacks, &in->prefix, s, s, &prefix) > 0;
        uint32_t n = sonde_profile_child_for(p, has_prefix ? in->node[prefix] : root, func,
                                             cell_line(r, &in->frames, &in->line, frame));
        if (n == SONDE_NO_NODE)
            return fail(r, "out of memory");
        in->node[s] = n;
        p->nodes[n].total += in->total[s];
        p->nodes[n].self += in->count[s];
        if (!has_prefix)
            p->nodes[root].total += in->total[s];
    }
    return 0;
}

/* Pass 4: the samples onto the timeline, offset_ms after the profile's
 * start. */
static int add_events(reader *r, thread_in *in, double offset_ms)
{
    double now = 0;
    for (uint32_t i = 0; i < in->samples.len; i++) {
        const sonde_jval *v = cell(r, &in->samples, &in->time, i);
        uint32_t s;
        if (!v || v->type != SONDE_J_NUM)
            return fail(r, "thread %u: sample %u has no time", in->index, i);
        now = in->deltas ? now + v->num : v->num;
        if (cell_index(r, &in->samples, &in->stack, i, in->stacks.len, &s) <= 0)
            continue;
        uint64_t ns = (uint64_t)sonde_num_to_int((now + offset_ms) * 1e6 + 0.5, 0, MAX_NS), weight;
        if (sample_weight(r, in, i, &weight) < 0)
            return -1;
        /* A sample that weighed nothing (no CPU since the last: an idle
         * thread) made no node and is no event: record's cpu mode keeps
         * none either, and an event's weight 0 means "not recorded". */
        if (in->node[s] == SONDE_NO_NODE || (r->cpu_scale && weight == 0))
            continue;
        if (sonde_profile_add_weighted_event(r->p, ns, in->index, in->node[s],
                                             r->cpu_scale ? weight : 0) < 0)
            return fail(r, "out of memory");
    }
    return 0;
}

/* A table of a thread: its own, or the processed format's shared one
 * (looked up once: a file may hold many threads). */
static const sonde_jval *thread_table(const reader *r, const sonde_jval *th, int key)
{
    const sonde_jval *v = get(r, th, shared_keys[key]);
    return v ? v : r->shared_tables[key];
}

/* The tables and columns of thread th. */
static int thread_open(reader *r, const sonde_jval *th, thread_in *in)
{
    for (int k = STRING_TABLE; k <= STRING_ARRAY && !in->strings; k++) {
        const sonde_jval *v = thread_table(r, th, k);
        in->strings = v && v->type == SONDE_J_ARR ? v : NULL;
    }
    if (!in->strings)
        return fail(r, "thread %u has no string table", in->index);
    if (table_open(r, thread_table(r, th, FRAME_TABLE), "frame", &in->frames) < 0 ||
        table_open(r, thread_table(r, th, STACK_TABLE), "stack", &in->stacks) < 0 ||
        table_open(r, get(r, th, "samples"), "samples", &in->samples) < 0 ||
        (in->processed &&
         table_open(r, thread_table(r, th, FUNC_TABLE), "function", &in->funcs) < 0))
        return -1;
    const table *named = in->processed ? &in->funcs : &in->frames;
    in->deltas = !get(r, in->samples.rows ? in->samples.schema : in->samples.obj, "time");
    if ((in->processed ? column_open(r, &in->frames, "func", 1, &in->func)
                       : column_open(r, &in->frames, "location", 1, &in->location)) < 0 ||
        column_open(r, &in->frames, "line", 0, &in->line) < 0 ||
        column_open(r, named, "name", in->processed, &in->fn_name) < 0 ||
        column_open(r, named, "fileName", 0, &in->fn_file) < 0 ||
        column_open(r, named, "lineNumber", 0, &in->fn_line) < 0 ||
        column_open(r, &in->stacks, "prefix", 1, &in->prefix) < 0 ||
        column_open(r, &in->stacks, "frame", 1, &in->frame) < 0 ||
        column_open(r, &in->samples, "stack", 1, &in->stack) < 0 ||
        column_open(r, &in->samples, in->deltas ? "timeDeltas" : "time", 1, &in->time) < 0 ||
        column_open(r, &in->samples, "weight", 0, &in->weight) < 0 ||
        column_open(r, &in->samples, "threadCPUDelta", 0, &in->cpu) < 0)
        return -1;
    const char *unit = sonde_json_str(r->t, get(r, in->samples.obj, "weightType"));
    if (*unit && strcmp(unit, "samples") != 0)
        return fail(r, "thread %u's samples are weighed in %s, not counted", in->index, unit);
    return 0;
}

/* The profile thread of th: its name and the kernel's id. */
static int thread_add(reader *r, const sonde_jval *th, thread_in *in)
{
    const sonde_jval *tid = get(r, th, "tid"), *name = get(r, th, "name");
    uint64_t native_id = 0;
    if (tid && tid->type == SONDE_J_NUM)
        native_id = sonde_num_to_count(tid->num);
    else if (tid && tid->type == SONDE_J_STR)
        native_id = strtoull(sonde_json_str(r->t, tid), NULL, 10);
    char fallback[32];
    snprintf(fallback, sizeof fallback, "thread %llu", (unsigned long long)native_id);
    const char *label = name && name->type == SONDE_J_STR ? sonde_json_str(r->t, name) : fallback;
    int64_t t = sonde_profile_add_thread(r->p, 0, native_id, label);
    if (t < 0)
        return fail(r, "out of memory");
    in->index = (uint32_t)t;
    return 0;
}

static int read_thread(reader *r, const sonde_jval *th, int processed, double offset_ms)
{
    thread_in in = { .processed = processed };
    if (!th || th->type != SONDE_J_OBJ)
        return fail(r, "a thread is not an object");
    if (thread_add(r, th, &in) < 0 || thread_open(r, th, &in) < 0)
        return -1;
    uint32_t nmemo = processed ? in.funcs.len : in.strings->len;
    r->work += (uint64_t)nmemo + in.stacks.len + in.samples.len;
    if (r->work > r->budget)
        return fail(r, "its threads share tables larger than such a file holds");
    in.memo = calloc((size_t)nmemo + 1, sizeof *in.memo);
    in.count = calloc((size_t)in.stacks.len + 1, sizeof *in.count);
    in.total = calloc((size_t)in.stacks.len + 1, sizeof *in.total);
    in.node = calloc((size_t)in.stacks.len + 1, sizeof *in.node);
    int rc = !in.memo || !in.count || !in.total || !in.node ? fail(r, "out of memory") : 0;
    if (rc == 0)
        rc = count_samples(r, &in) < 0 || sum_prefixes(r, &in) < 0 || make_nodes(r, &in) < 0 ||
                     add_events(r, &in, offset_ms) < 0 ? -1 : 0;
    free(in.memo);
    free(in.count);
    free(in.total);
    free(in.node);
    return rc;
}

/* The threads of one process's profile (the top one, or one of its
 * "processes"), offset_ms after the profile's start. */
static int read_threads(reader *r, const sonde_jval *profile, int processed, double offset_ms)
{
    const sonde_jval *threads = get(r, profile, "threads");
    if (!threads || threads->type != SONDE_J_ARR)
        return fail(r, "a process has no \"threads\" list");
    for (uint32_t k = 0; k < threads->len; k++)
        if (read_thread(r, sonde_json_item(r->t, threads, k), processed, offset_ms) < 0)
            return -1;
    return 0;
}

/* The sampling period, what was profiled, and when. */
static int read_meta(reader *r, const sonde_jval *meta)
{
    sonde_profile *p = r->p;
    const sonde_jval *interval = get(r, meta, "interval");
    if (!interval || interval->type != SONDE_J_NUM || !(interval->num >= 0.01 &&
                                                        interval->num <= 1000))
        return fail(r, "meta.interval is not a sampling period from 0.01 to 1000 ms");
    p->sample_rate = 1000 / interval->num;
    p->seconds_per_tick = 1 / p->sample_rate;
    const char *unit = sonde_json_str(r->t, get(r, get(r, meta, "sampleUnits"), "threadCPUDelta"));
    r->cpu_scale = strcmp(unit, "ns") == 0 ? 1 : strcmp(unit, "\xc2\xb5s") == 0 ? 1000 : 0;
    if (r->cpu_scale) /* ticks are ns of CPU, as record's cpu mode counts them */
        p->seconds_per_tick = 1e-9;
    char why[200];
    if (sonde_json_about_read(r->t, meta, &p->about, &p->pid, why, sizeof why) < 0)
        return fail(r, "meta: %s", why);
    /* meta.startTime is ms since the epoch in Firefox's files (Python
     * 3.15 writes its monotonic clock there: taken only past 2001) */
    double start = sonde_json_num(r->t, meta, "startTime", 0);
    if (p->about.start_ns == 0 && start >= 1e12 && start < 1e14)
        p->about.start_ns = (int64_t)(start * 1e6);
    return 0;
}

int sonde_gecko_is(const sonde_jtree *t)
{
    const sonde_jval *root = &t->vals[t->root];
    if (root->type != SONDE_J_OBJ)
        return 0;
    const sonde_jval *meta = sonde_json_get(t, root, "meta");
    const sonde_jval *threads = sonde_json_get(t, root, "threads");
    return meta && meta->type == SONDE_J_OBJ && threads && threads->type == SONDE_J_ARR;
}

int sonde_gecko_read(const sonde_jtree *t, sonde_profile *p, char *err, size_t errlen)
{
    reader r = { .t = t, .p = p, .err = err, .errlen = errlen };
    const sonde_jval *root = &t->vals[t->root], *meta = get(&r, root, "meta");
    err[0] = '\0';
    int processed = get(&r, meta, "preprocessedProfileVersion") != NULL;
    const sonde_jval *shared = processed ? get(&r, root, "shared") : NULL;
    for (int k = 0; k < NSHARED; k++)
        r.shared_tables[k] = get(&r, shared, shared_keys[k]);
    r.budget = 64 * (uint64_t)t->nvals + 100000000;
    int rc = read_meta(&r, meta) < 0 || read_threads(&r, root, processed, 0) < 0 ? -1 : 0;
    const sonde_jval *subs = processed ? NULL : get(&r, root, "processes");
    double start = sonde_json_num(t, meta, "startTime", 0);
    for (uint32_t k = 0; rc == 0 && subs && subs->type == SONDE_J_ARR && k < subs->len; k++) {
        const sonde_jval *sub = sonde_json_item(t, subs, k);
        double offset = sonde_json_num(t, get(&r, sub, "meta"), "startTime", start) - start;
        rc = read_threads(&r, sub, 0, offset);
    }
    if (rc == 0 && sonde_profile_sort_events(p) < 0)
        rc = fail(&r, "out of memory");
    free(r.scratch);
    return rc;
}
