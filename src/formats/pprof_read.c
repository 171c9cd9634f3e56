/* pprof_read.c - pprof files into the profile model; see pprof.h.
 *
 * Three passes over the Profile message: the first counts the repeated
 * fields, so that each table is allocated once (its size bounded by the
 * file's); the second decodes the tables (strings, sample types,
 * mappings, functions, locations); the third adds each sample's stack to
 * its thread's tree, root first.  A sample lists its Locations leaf
 * first, and a Location's Lines run from the innermost inlined function
 * to the one it was inlined into; a Location with no Line (an address no
 * symbol covered) is one frame named "FILE+0xOFFSET" after its mapping's
 * file, or "0xADDRESS" without one.  A last pass reads what was profiled
 * (p->about): time_nanos, duration_nanos and sonde's comments (pprof.h).
 *
 * Threads come from the samples' labels "thread" (a name) and
 * "thread_id" (a number), as pprof.c writes them; samples without them
 * are one thread.  A function with a file is Python-like (file, first
 * line, name); one without is a C function (file "~").  Caps: a sample
 * expands to at most MAX_DEPTH frames, and all samples together to
 * FRAMES_PER_BYTE frames per byte of the file, since an inlined Location
 * repeats its Lines wherever it is used. */
#include "pprof.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gzip.h"
#include "load.h"
#include "protobuf.h"

#define MAX_DEPTH 65536u
#define FRAMES_PER_BYTE 8u
#define NONE UINT32_MAX

enum {
    PROFILE_SAMPLE_TYPE = 1, PROFILE_SAMPLE = 2, PROFILE_MAPPING = 3, PROFILE_LOCATION = 4,
    PROFILE_FUNCTION = 5, PROFILE_STRING_TABLE = 6, PROFILE_TIME_NANOS = 9,
    PROFILE_DURATION_NANOS = 10, PROFILE_PERIOD_TYPE = 11, PROFILE_PERIOD = 12,
    PROFILE_COMMENT = 13, PROFILE_DEFAULT_SAMPLE_TYPE = 14,
};

typedef struct vtype { uint64_t type, unit; } vtype;     /* string indexes */
typedef struct pmap { uint64_t id, start, offset, file; } pmap;
typedef struct pfunc {
    uint64_t id, name, system_name, file;
    int64_t start_line;
    uint32_t func;                 /* the profile's function, NONE until used */
} pfunc;
typedef struct pline { uint64_t function; int64_t line; } pline; /* function: an index once resolved */
typedef struct ploc {
    uint64_t id, mapping, address;
    uint32_t first_line, nlines;   /* in r->lines */
    uint32_t func;                 /* a Location with no Line: its function, NONE until used */
} ploc;

/* A growable array of uint64 (a sample's location ids or values). */
typedef struct u64s { uint64_t *v; size_t n, cap; } u64s;

typedef struct reader {
    const uint8_t *data;
    size_t len;
    sonde_profile *p;
    char *err;
    size_t errlen;
    int failed;
    char *pool;                    /* every string, NUL-terminated */
    size_t *strings;               /* string index -> offset in pool */
    uint32_t nstrings;
    vtype *types, period_type;
    uint32_t ntypes;
    int64_t period;
    uint64_t default_type;
    pmap *maps;
    pfunc *funcs;
    ploc *locs;
    pline *lines;
    uint32_t nmaps, nfuncs, nlocs, nlines, lines_cap;
    sonde_u64map map_index, func_index, loc_index, thread_index;
    u64s ids, values;
    uint32_t *frame_func;          /* one sample's frames, leaf first */
    int32_t *frame_line;
    uint64_t frames_left;
} reader;

static int fail(reader *r, const char *fmt, ...)
{
    if (!r->failed) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(r->err, r->errlen, fmt, ap);
        va_end(ap);
        r->failed = 1;
    }
    return -1;
}

/* The next field of a message: 1, 0 at its end, or -1 (recorded). */
static int next(reader *r, sonde_pb_reader *pr, sonde_pb_field *f, const char *what)
{
    const char *why = "";
    int rc = r->failed ? -1 : sonde_pb_next(pr, f, &why);
    if (rc < 0)
        fail(r, "%s: %s", what, why);
    return rc;
}

/* A scalar field's value into *out: 0, or -1 when it is not a varint. */
static int scalar(reader *r, const sonde_pb_field *f, const char *what, uint64_t *out)
{
    if (f->wire != SONDE_PB_VARINT)
        return fail(r, "%s: field %u is not a number", what, f->number);
    *out = f->value;
    return 0;
}

static int check_string(reader *r, uint64_t index, const char *what)
{
    if (index >= r->nstrings && index != 0)
        return fail(r, "%s names string %llu of %u", what, (unsigned long long)index,
                    r->nstrings);
    return 0;
}

static const char *str(const reader *r, uint64_t index)
{
    return index < r->nstrings ? r->pool + r->strings[index] : "";
}

static int32_t to_line(int64_t v)
{
    return v < INT32_MIN ? INT32_MIN : v > INT32_MAX ? INT32_MAX : (int32_t)v;
}

/* ---- the tables ---- */

static int read_value_type(reader *r, const sonde_pb_field *msg, vtype *out)
{
    sonde_pb_reader pr;
    sonde_pb_field f;
    sonde_pb_reader_init(&pr, msg->data, msg->len);
    memset(out, 0, sizeof *out);
    int rc;
    while ((rc = next(r, &pr, &f, "a sample type")) > 0) {
        if ((f.number == 1 && scalar(r, &f, "a sample type", &out->type) < 0) ||
            (f.number == 2 && scalar(r, &f, "a sample type", &out->unit) < 0))
            return -1;
    }
    return rc;
}

static int read_mapping(reader *r, const sonde_pb_field *msg, pmap *m)
{
    sonde_pb_reader pr;
    sonde_pb_field f;
    sonde_pb_reader_init(&pr, msg->data, msg->len);
    memset(m, 0, sizeof *m);
    int rc;
    while ((rc = next(r, &pr, &f, "a Mapping")) > 0) {
        uint64_t *to = f.number == 1 ? &m->id : f.number == 2 ? &m->start
                       : f.number == 4 ? &m->offset : f.number == 5 ? &m->file : NULL;
        if (to && scalar(r, &f, "a Mapping", to) < 0)
            return -1;
    }
    return rc;
}

static int read_function(reader *r, const sonde_pb_field *msg, pfunc *fn)
{
    sonde_pb_reader pr;
    sonde_pb_field f;
    sonde_pb_reader_init(&pr, msg->data, msg->len);
    memset(fn, 0, sizeof *fn);
    fn->func = NONE;
    uint64_t start = 0;
    int rc;
    while ((rc = next(r, &pr, &f, "a Function")) > 0) {
        uint64_t *to = f.number == 1 ? &fn->id : f.number == 2 ? &fn->name
                       : f.number == 3 ? &fn->system_name : f.number == 4 ? &fn->file
                       : f.number == 5 ? &start : NULL;
        if (to && scalar(r, &f, "a Function", to) < 0)
            return -1;
    }
    fn->start_line = (int64_t)start;
    return rc < 0 || check_string(r, fn->name, "a Function") < 0 ||
                   check_string(r, fn->system_name, "a Function") < 0 ||
                   check_string(r, fn->file, "a Function") < 0 ? -1 : 0;
}

static int add_line(reader *r, const sonde_pb_field *msg)
{
    if (r->nlines == r->lines_cap) {
        uint32_t cap = r->lines_cap ? r->lines_cap * 2 : 256;
        pline *l = cap > r->lines_cap ? realloc(r->lines, cap * sizeof *l) : NULL;
        if (!l)
            return fail(r, "out of memory");
        r->lines = l;
        r->lines_cap = cap;
    }
    pline *l = &r->lines[r->nlines];
    memset(l, 0, sizeof *l);
    sonde_pb_reader pr;
    sonde_pb_field f;
    sonde_pb_reader_init(&pr, msg->data, msg->len);
    uint64_t line = 0;
    int rc;
    while ((rc = next(r, &pr, &f, "a Line")) > 0) {
        if ((f.number == 1 && scalar(r, &f, "a Line", &l->function) < 0) ||
            (f.number == 2 && scalar(r, &f, "a Line", &line) < 0))
            return -1;
    }
    l->line = (int64_t)line;
    r->nlines += rc == 0;
    return rc;
}

static int read_location(reader *r, const sonde_pb_field *msg, ploc *loc)
{
    sonde_pb_reader pr;
    sonde_pb_field f;
    sonde_pb_reader_init(&pr, msg->data, msg->len);
    memset(loc, 0, sizeof *loc);
    loc->first_line = r->nlines;
    loc->func = NONE;
    int rc;
    while ((rc = next(r, &pr, &f, "a Location")) > 0) {
        uint64_t *to = f.number == 1 ? &loc->id : f.number == 2 ? &loc->mapping
                       : f.number == 3 ? &loc->address : NULL;
        if (to && scalar(r, &f, "a Location", to) < 0)
            return -1;
        if (f.number == 4 && (f.wire != SONDE_PB_LEN ? fail(r, "a Line is not a message")
                                                     : add_line(r, &f)) < 0)
            return -1;
    }
    loc->nlines = r->nlines - loc->first_line;
    return rc;
}

/* The string table into one pool, NUL-terminated (a NUL inside a string
 * ends it). */
static int read_strings(reader *r, size_t bytes)
{
    r->pool = malloc(bytes + r->nstrings + 1);
    r->strings = calloc(r->nstrings + 1, sizeof *r->strings);
    if (!r->pool || !r->strings)
        return fail(r, "out of memory");
    sonde_pb_reader pr;
    sonde_pb_field f;
    sonde_pb_reader_init(&pr, r->data, r->len);
    size_t at = 0;
    uint32_t n = 0;
    while (next(r, &pr, &f, "the profile") > 0) {
        if (f.number != PROFILE_STRING_TABLE)
            continue;
        r->strings[n++] = at;
        memcpy(r->pool + at, f.data, f.len);
        at += f.len;
        r->pool[at++] = '\0';
    }
    r->pool[at] = '\0';
    return r->failed ? -1 : 0;
}

/* Pass 1: the counts of the repeated fields, and the string bytes. */
static int count_fields(reader *r, uint32_t count[7], size_t *string_bytes)
{
    sonde_pb_reader pr;
    sonde_pb_field f;
    sonde_pb_reader_init(&pr, r->data, r->len);
    memset(count, 0, 7 * sizeof *count);
    *string_bytes = 0;
    int rc;
    while ((rc = next(r, &pr, &f, "the profile")) > 0) {
        int table = f.number >= PROFILE_SAMPLE_TYPE && f.number <= PROFILE_STRING_TABLE;
        if ((table || f.number == PROFILE_PERIOD_TYPE) && f.wire != SONDE_PB_LEN)
            return fail(r, "the profile: field %u is not a message or string", f.number);
        if ((f.number == PROFILE_PERIOD || f.number == PROFILE_DEFAULT_SAMPLE_TYPE) &&
            f.wire != SONDE_PB_VARINT)
            return fail(r, "the profile: field %u is not a number", f.number);
        if (table)
            count[f.number]++;
        if (f.number == PROFILE_STRING_TABLE)
            *string_bytes += f.len;
    }
    return rc;
}

/* Each table's ids into its index: 0, or -1 when an id repeats. */
static int index_ids(reader *r, sonde_u64map *m, const void *items, size_t size, uint32_t n,
                     const char *what)
{
    for (uint32_t i = 0; i < n; i++) {
        uint64_t id = *(const uint64_t *)((const char *)items + (size_t)i * size);
        uint32_t *slot = sonde_u64map_slot(m, id, i);
        if (!slot)
            return fail(r, "out of memory");
        if (*slot != i)
            return fail(r, "two %ss have id %llu", what, (unsigned long long)id);
    }
    return 0;
}

/* Pass 2: the tables, then every id resolved to an index. */
static int read_tables(reader *r)
{
    uint32_t count[7];
    size_t string_bytes;
    if (count_fields(r, count, &string_bytes) < 0)
        return -1;
    r->nstrings = count[PROFILE_STRING_TABLE];
    if (read_strings(r, string_bytes) < 0)
        return -1;
    r->types = calloc(count[PROFILE_SAMPLE_TYPE] + 1, sizeof *r->types);
    r->maps = calloc(count[PROFILE_MAPPING] + 1, sizeof *r->maps);
    r->funcs = calloc(count[PROFILE_FUNCTION] + 1, sizeof *r->funcs);
    r->locs = calloc(count[PROFILE_LOCATION] + 1, sizeof *r->locs);
    if (!r->types || !r->maps || !r->funcs || !r->locs)
        return fail(r, "out of memory");
    sonde_pb_reader pr;
    sonde_pb_field f;
    sonde_pb_reader_init(&pr, r->data, r->len);
    uint64_t v;
    while (next(r, &pr, &f, "the profile") > 0) {
        int rc = 0;
        switch (f.number) {
        case PROFILE_SAMPLE_TYPE:
            rc = read_value_type(r, &f, &r->types[r->ntypes++]);
            break;
        case PROFILE_PERIOD_TYPE:
            rc = read_value_type(r, &f, &r->period_type);
            break;
        case PROFILE_MAPPING:
            rc = read_mapping(r, &f, &r->maps[r->nmaps++]);
            break;
        case PROFILE_FUNCTION:
            rc = read_function(r, &f, &r->funcs[r->nfuncs++]);
            break;
        case PROFILE_LOCATION:
            rc = read_location(r, &f, &r->locs[r->nlocs++]);
            break;
        case PROFILE_PERIOD:
            r->period = (int64_t)f.value;
            break;
        case PROFILE_DEFAULT_SAMPLE_TYPE:
            r->default_type = f.value;
            break;
        }
        if (rc < 0)
            return -1;
    }
    if (r->failed)
        return -1;
    for (uint32_t i = 0; i < r->ntypes; i++)
        if (check_string(r, r->types[i].type, "a sample type") < 0 ||
            check_string(r, r->types[i].unit, "a sample type") < 0)
            return -1;
    if (check_string(r, r->period_type.type, "the period type") < 0 ||
        check_string(r, r->period_type.unit, "the period type") < 0 ||
        check_string(r, r->default_type, "the default sample type") < 0)
        return -1;
    for (uint32_t i = 0; i < r->nmaps; i++)
        if (check_string(r, r->maps[i].file, "a Mapping") < 0)
            return -1;
    if (index_ids(r, &r->map_index, r->maps, sizeof *r->maps, r->nmaps, "Mapping") < 0 ||
        index_ids(r, &r->func_index, r->funcs, sizeof *r->funcs, r->nfuncs, "Function") < 0 ||
        index_ids(r, &r->loc_index, r->locs, sizeof *r->locs, r->nlocs, "Location") < 0)
        return -1;
    for (uint32_t i = 0; i < r->nlines; i++) {
        if ((v = sonde_u64map_get(&r->func_index, r->lines[i].function)) == SONDE_U64MAP_NONE)
            return fail(r, "a Line names function %llu, which the file does not have",
                        (unsigned long long)r->lines[i].function);
        r->lines[i].function = v;
    }
    return 0;
}

/* ---- the samples ---- */

static int u64s_add(reader *r, u64s *a, const sonde_pb_field *f, const char *what)
{
    size_t n = sonde_pb_count(f);
    if (n > a->cap - a->n) {
        size_t cap = a->cap ? a->cap : 64;
        while (cap - a->n < n)
            cap *= 2;
        uint64_t *v = realloc(a->v, cap * sizeof *v);
        if (!v)
            return fail(r, "out of memory");
        a->v = v;
        a->cap = cap;
    }
    if (sonde_pb_unpack(f, a->v + a->n, n) < 0)
        return fail(r, "%s: a malformed list of numbers", what);
    a->n += n;
    return 0;
}

/* The profile's function for Function index i. */
static uint32_t func_of(reader *r, uint32_t i)
{
    pfunc *fn = &r->funcs[i];
    if (fn->func != NONE)
        return fn->func;
    const char *name = str(r, fn->system_name), *qualname = str(r, fn->name);
    const char *file = str(r, fn->file);
    name = *name ? name : *qualname ? qualname : "(unnamed)";
    qualname = *qualname ? qualname : name;
    int32_t line = to_line(fn->start_line);
    fn->func = *file ? sonde_profile_func(r->p, file, line, name, qualname,
                                          sonde_func_kind_of(file, line))
                     : sonde_profile_func(r->p, "~", 0, name, qualname, SONDE_FUNC_C);
    return fn->func;
}

/* The function of a Location with no Line: its place in its mapping. */
static uint32_t address_func(reader *r, ploc *loc)
{
    if (loc->func != NONE)
        return loc->func;
    char name[512];
    uint32_t m = sonde_u64map_get(&r->map_index, loc->mapping);
    if (loc->mapping && m != SONDE_U64MAP_NONE && *str(r, r->maps[m].file)) {
        const char *file = str(r, r->maps[m].file), *base = strrchr(file, '/');
        snprintf(name, sizeof name, "%.400s+0x%llx", base ? base + 1 : file,
                 (unsigned long long)(loc->address - r->maps[m].start + r->maps[m].offset));
    } else {
        snprintf(name, sizeof name, "0x%llx", (unsigned long long)loc->address);
    }
    loc->func = sonde_profile_func(r->p, "~", 0, name, name, SONDE_FUNC_C);
    return loc->func;
}

/* The sample's frames, leaf first, into r->frame_*: their count, or -1. */
static int64_t expand(reader *r)
{
    uint32_t n = 0;
    for (size_t i = 0; i < r->ids.n; i++) {
        uint32_t li = sonde_u64map_get(&r->loc_index, r->ids.v[i]);
        if (li == SONDE_U64MAP_NONE)
            return fail(r, "a sample names location %llu, which the file does not have",
                        (unsigned long long)r->ids.v[i]);
        ploc *loc = &r->locs[li];
        uint32_t k = loc->nlines ? loc->nlines : 1;
        if (k > MAX_DEPTH - n)
            return fail(r, "a sample is more than %u frames deep", MAX_DEPTH);
        if (k > r->frames_left)
            return fail(r, "its samples list more frames than a file of its size may");
        r->frames_left -= k;
        for (uint32_t j = 0; j < k; j++) {
            const pline *l = loc->nlines ? &r->lines[loc->first_line + j] : NULL;
            r->frame_func[n] = l ? func_of(r, (uint32_t)l->function) : address_func(r, loc);
            r->frame_line[n] = l ? to_line(l->line) : 0;
            if (r->frame_func[n++] == SONDE_NO_FUNC)
                return fail(r, "out of memory");
        }
    }
    return n;
}

/* The thread a sample's labels name (made on first sight): its root. */
static uint32_t thread_root(reader *r, uint64_t name, uint64_t tid)
{
    uint64_t key = name << 32 | (tid & 0xffffffffu);
    uint32_t t = sonde_u64map_get(&r->thread_index, key);
    if (t != SONDE_U64MAP_NONE)
        return r->p->threads[t].root;
    char label[64];
    snprintf(label, sizeof label, "thread %llu", (unsigned long long)tid);
    int64_t k = sonde_profile_add_thread(r->p, 0, tid,
                                         name ? str(r, name) : tid ? label : "all threads");
    if (k < 0 || !sonde_u64map_slot(&r->thread_index, key, (uint32_t)k))
        return SONDE_NO_NODE;
    return r->p->threads[k].root;
}

/* The sample's labels: the thread's name and id. */
static int read_label(reader *r, const sonde_pb_field *msg, uint64_t *name, uint64_t *tid)
{
    sonde_pb_reader pr;
    sonde_pb_field f;
    sonde_pb_reader_init(&pr, msg->data, msg->len);
    uint64_t key = 0, s = 0, num = 0;
    int rc;
    while ((rc = next(r, &pr, &f, "a label")) > 0) {
        uint64_t *to = f.number == 1 ? &key : f.number == 2 ? &s : f.number == 3 ? &num : NULL;
        if (to && scalar(r, &f, "a label", to) < 0)
            return -1;
    }
    if (rc < 0 || check_string(r, key, "a label") < 0 || check_string(r, s, "a label") < 0)
        return -1;
    if (strcmp(str(r, key), "thread") == 0)
        *name = s;
    else if (strcmp(str(r, key), "thread_id") == 0)
        *tid = num;
    return 0;
}

/* Adds one sample (weight ticks, calls) to the tree. */
static int add_sample(reader *r, const sonde_pb_field *msg, uint32_t weight_at, int64_t calls_at)
{
    sonde_pb_reader pr;
    sonde_pb_field f;
    sonde_pb_reader_init(&pr, msg->data, msg->len);
    r->ids.n = r->values.n = 0;
    uint64_t name = 0, tid = 0;
    int rc;
    while ((rc = next(r, &pr, &f, "a sample")) > 0) {
        if ((f.number == 1 && u64s_add(r, &r->ids, &f, "a sample") < 0) ||
            (f.number == 2 && u64s_add(r, &r->values, &f, "a sample") < 0) ||
            (f.number == 3 && (f.wire != SONDE_PB_LEN ? fail(r, "a label is not a message")
                                                      : read_label(r, &f, &name, &tid)) < 0))
            return -1;
    }
    if (rc < 0)
        return -1;
    if (r->values.n != r->ntypes)
        return fail(r, "a sample has %zu values for %u sample types", r->values.n, r->ntypes);
    int64_t weight = (int64_t)r->values.v[weight_at];
    int64_t calls = calls_at >= 0 ? (int64_t)r->values.v[calls_at] : 0;
    weight = weight > 0 ? weight : 0;
    calls = calls > 0 ? calls : 0;
    int64_t depth = expand(r);
    if (depth < 0)
        return -1;
    if (weight == 0 && calls == 0)
        return 0;
    uint32_t node = thread_root(r, name, tid);
    if (node == SONDE_NO_NODE)
        return fail(r, "out of memory");
    r->p->nodes[node].total += (uint64_t)weight;
    for (int64_t i = depth; i-- > 0;) {
        node = sonde_profile_child_for(r->p, node, r->frame_func[i], r->frame_line[i]);
        if (node == SONDE_NO_NODE)
            return fail(r, "out of memory");
        r->p->nodes[node].total += (uint64_t)weight;
    }
    r->p->nodes[node].self += (uint64_t)weight;
    r->p->nodes[node].calls += (uint64_t)calls;
    return 0;
}

/* 1 when sample type i is (type, unit). */
static int type_is(const reader *r, const vtype *t, const char *type, const char *unit)
{
    return strcmp(str(r, t->type), type) == 0 && (!unit || strcmp(str(r, t->unit), unit) == 0);
}

/* Seconds a unit of time is, or 0 for a unit that is not time. */
static double unit_seconds(const char *unit)
{
    static const struct { const char *unit; double seconds; } units[] = {
        { "nanoseconds", 1e-9 }, { "microseconds", 1e-6 }, { "milliseconds", 1e-3 },
        { "seconds", 1 },
    };
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (strcmp(unit, units[i].unit) == 0)
            return units[i].seconds;
    return 0;
}

/* Which value is the weight, which the calls (-1: none), and the
 * profile's clock: sampled at a rate, or ticks of a unit. */
static void choose_values(reader *r, uint32_t *weight_at, int64_t *calls_at)
{
    *calls_at = -1;
    if (type_is(r, &r->types[0], "samples", "count")) {
        *weight_at = 0;
        double tick = unit_seconds(str(r, r->period_type.unit));
        r->p->sample_rate = tick > 0 && r->period > 0 ? 1 / (tick * (double)r->period) : 1;
        r->p->seconds_per_tick = 1 / r->p->sample_rate;
        return;
    }
    *weight_at = r->ntypes - 1;
    for (uint32_t i = 0; i < r->ntypes; i++)
        if (r->default_type && strcmp(str(r, r->types[i].type), str(r, r->default_type)) == 0)
            *weight_at = i;
    for (uint32_t i = 0; i < r->ntypes; i++)
        if (i != *weight_at && type_is(r, &r->types[i], "calls", "count"))
            *calls_at = i;
    double tick = unit_seconds(str(r, r->types[*weight_at].unit));
    r->p->sample_rate = 0;
    r->p->seconds_per_tick = tick > 0 ? tick : 1;
}

/* Pass 3: every sample into the tree. */
static int read_samples(reader *r)
{
    if (r->ntypes == 0)
        return fail(r, "it has no sample types");
    uint32_t weight_at;
    int64_t calls_at;
    choose_values(r, &weight_at, &calls_at);
    r->frame_func = malloc(MAX_DEPTH * sizeof *r->frame_func);
    r->frame_line = malloc(MAX_DEPTH * sizeof *r->frame_line);
    if (!r->frame_func || !r->frame_line)
        return fail(r, "out of memory");
    r->frames_left = (uint64_t)r->len * FRAMES_PER_BYTE + (1u << 20);
    sonde_pb_reader pr;
    sonde_pb_field f;
    sonde_pb_reader_init(&pr, r->data, r->len);
    while (next(r, &pr, &f, "the profile") > 0)
        if (f.number == PROFILE_SAMPLE && add_sample(r, &f, weight_at, calls_at) < 0)
            return -1;
    return r->failed ? -1 : 0;
}

/* ---- what was profiled ---- */

/* text after prefix, or NULL when it does not start with it. */
static const char *after(const char *text, const char *prefix)
{
    size_t n = strlen(prefix);
    return strncmp(text, prefix, n) == 0 ? text + n : NULL;
}

/* A command line quoted as a POSIX shell takes it (sonde_about_command
 * writes it so) back into its arguments.  0, or -1 on out of memory. */
static int split_command(sonde_about *a, const char *s)
{
    sonde_buf word;
    sonde_buf_init(&word);
    int rc = 0, in_word = 0;
    for (;; s++) {
        if (*s == '\'') {
            const char *end = strchr(s + 1, '\'');
            if (!end)
                end = s + strlen(s);
            sonde_buf_put(&word, s + 1, (size_t)(end - s - 1));
            in_word = 1;
            s = *end ? end : end - 1;
        } else if (*s == '\\' && s[1]) {
            sonde_buf_putc(&word, *++s);
            in_word = 1;
        } else if (*s == ' ' || *s == '\0') {
            if (in_word)
                rc |= sonde_about_add_arg(a, word.data ? word.data : "", word.len);
            word.len = 0;
            in_word = 0;
            if (!*s)
                break;
        } else {
            sonde_buf_putc(&word, *s);
            in_word = 1;
        }
    }
    rc |= sonde_buf_ok(&word) ? 0 : -1;
    sonde_buf_free(&word);
    return rc;
}

/* One comment: sonde's "KEY: VALUE" (pprof.h) into p->about; others are
 * left alone.  0, or -1 on out of memory. */
static int take_comment(reader *r, const char *text)
{
    sonde_about *a = &r->p->about;
    const char *v;
    double x;
    if ((v = after(text, SONDE_PPROF_COMMAND)))
        return a->argc ? 0 : split_command(a, v);
    if ((v = after(text, SONDE_PPROF_EXECUTABLE)))
        return sonde_about_set(&a->executable, v, strlen(v));
    if ((v = after(text, SONDE_PPROF_VERSION)))
        return sonde_about_set(&a->version, v, strlen(v));
    if ((v = after(text, SONDE_PPROF_VERDICT)))
        return sonde_about_set(&a->verdict, v, strlen(v));
    if ((v = after(text, SONDE_PPROF_CWD)))
        return sonde_about_set(&a->cwd, v, strlen(v));
    if ((v = after(text, SONDE_PPROF_CPU)) && (x = strtod(v, NULL)) >= 0 && x <= 1e9)
        a->cpu = x;
    else if ((v = after(text, SONDE_PPROF_PROCESSES)) && (x = strtod(v, NULL)) >= 1 && x <= 1e6)
        a->processes = (uint32_t)x;
    else if ((v = after(text, SONDE_PPROF_PID)) && (x = strtod(v, NULL)) >= 1 && x <= 4194304)
        r->p->pid = (int)x;
    return 0;
}

/* The profile's time, duration and comments into p->about. */
static int read_about(reader *r)
{
    u64s comments = { 0 };
    sonde_pb_reader pr;
    sonde_pb_field f;
    sonde_pb_reader_init(&pr, r->data, r->len);
    sonde_about *a = &r->p->about;
    while (next(r, &pr, &f, "the profile") > 0) {
        int64_t v = f.wire == SONDE_PB_VARINT ? (int64_t)f.value : 0;
        if (f.number == PROFILE_TIME_NANOS && v > 0)
            a->start_ns = v;
        else if (f.number == PROFILE_DURATION_NANOS && v > 0)
            a->wall = (double)v / 1e9;
        else if (f.number == PROFILE_COMMENT && u64s_add(r, &comments, &f, "a comment") < 0)
            break;
    }
    for (size_t i = 0; !r->failed && i < comments.n; i++)
        if (check_string(r, comments.v[i], "a comment") == 0 &&
            take_comment(r, str(r, comments.v[i])) < 0)
            fail(r, "out of memory");
    free(comments.v);
    return r->failed ? -1 : 0;
}

int sonde_pprof_is(const uint8_t *data, size_t len)
{
    /* Profile's fields 1-15 with their wire types: what its first byte may be */
    static const uint8_t tags[] = { 0x0a, 0x12, 0x1a, 0x22, 0x2a, 0x32, 0x38, 0x40, 0x48,
                                    0x50, 0x5a, 0x60, 0x68, 0x6a, 0x70, 0x78 };
    if (sonde_gz_is(data, len))
        return 1;
    for (size_t i = 0; len > 0 && i < sizeof tags; i++)
        if (data[0] == tags[i])
            return 1;
    return 0;
}

int sonde_pprof_read(const uint8_t *data, size_t len, sonde_profile *p, char *err,
                     size_t errlen)
{
    reader r = { .p = p, .err = err, .errlen = errlen };
    uint8_t *plain = NULL;
    if (errlen)
        err[0] = '\0';
    if (sonde_gz_is(data, len)) {
        char why[160];
        if (sonde_gz_inflate(data, len, SONDE_LOAD_MAX_BYTES, &plain, &len, why, sizeof why) < 0)
            return fail(&r, "%s", why);
        data = plain;
    }
    r.data = data;
    r.len = len;
    sonde_u64map_init(&r.map_index);
    sonde_u64map_init(&r.func_index);
    sonde_u64map_init(&r.loc_index);
    sonde_u64map_init(&r.thread_index);
    int rc = read_tables(&r) < 0 || read_samples(&r) < 0 || read_about(&r) < 0 ? -1 : 0;
    sonde_u64map_free(&r.map_index);
    sonde_u64map_free(&r.func_index);
    sonde_u64map_free(&r.loc_index);
    sonde_u64map_free(&r.thread_index);
    free(r.pool);
    free(r.strings);
    free(r.types);
    free(r.maps);
    free(r.funcs);
    free(r.locs);
    free(r.lines);
    free(r.ids.v);
    free(r.values.v);
    free(r.frame_func);
    free(r.frame_line);
    free(plain);
    return rc;
}
