/* collapsed_read.c - collapsed stacks into the profile model; see collapsed_read.h.
 *
 * Two passes over the lines.  The first checks every line (its bytes,
 * its count, its frames) and finds each function's smallest line; the
 * second, which then cannot fail but for memory, adds each stack to its
 * thread's tree, root first.  A function is found by its interned file
 * and name packed into one key (file id << 32 | name id): its slot holds
 * that smallest line and, once made, the profile's function. */
#include "collapsed_read.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/grow.h"
#include "collapsed_frame.h"

typedef struct reader {
    sonde_profile *p;
    char *err;
    size_t errlen;
    int failed;
    size_t number;                /* the line being read, from 1 */
    char *scratch;                /* a frame's name and file, unescaped */
    sonde_u64map slot_of;         /* file id << 32 | name id -> slot */
    int32_t *min_line;            /* slot -> the smallest line of the function's frames */
    uint32_t *func_of;            /* slot -> its function, SONDE_NO_FUNC until made */
    size_t nslots, min_cap, func_cap;
    sonde_strtab thread_keys;     /* the text of the frames that name a thread */
    sonde_u64map thread_of;       /* key id -> thread index */
    uint64_t samples;
} reader;

/* One line that is not blank: its stack and its count. */
typedef struct stack_line {
    const char *stack;
    size_t len;
    uint64_t count;
} stack_line;

static int fail(reader *r, const char *fmt, ...)
{
    if (!r->failed) {
        int n = r->number ? snprintf(r->err, r->errlen, "line %zu ", r->number) : 0;
        va_list ap;
        va_start(ap, fmt);
        if (n >= 0 && (size_t)n < r->errlen)
            vsnprintf(r->err + n, r->errlen - (size_t)n, fmt, ap);
        va_end(ap);
        r->failed = 1;
    }
    return -1;
}

static int oom(reader *r)
{
    r->number = 0;
    return fail(r, "out of memory");
}

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r';
}

/* text[0..len) without its trailing blanks and newline. */
static size_t trimmed(const char *text, size_t len)
{
    while (len > 0 && is_space(text[len - 1]))
        len--;
    return len;
}

/* The count at the end of a line: 1, or -1 (recorded). */
static int read_count(reader *r, const char *s, size_t n, uint64_t *count)
{
    size_t digits = 0;
    while (digits < n && s[digits] >= '0' && s[digits] <= '9')
        digits++;
    if (n == 0 || digits != n)
        return fail(r, "does not end in a count of samples ('%.*s' is not a whole number; "
                    "a line is 'frame;frame;... COUNT')", (int)(n < 40 ? n : 40), s);
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (v > (SONDE_COLLAPSED_MAX_SAMPLES - (uint64_t)(s[i] - '0')) / 10)
            return fail(r, "has a count too large (%.*s%s): the counts may add up to "
                        "2^53 - 1 samples at most", (int)(n < 40 ? n : 40), s,
                        n > 40 ? "..." : "");
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    if (v > SONDE_COLLAPSED_MAX_SAMPLES - r->samples)
        return fail(r, "brings the counts past 2^53 - 1 samples in all");
    r->samples += v;
    *count = v;
    return 1;
}

/* Splits text[0..len) (one line, its newline left out) into *out: 1, 0
 * when it is blank, -1 when it is bad (recorded). */
static int split_line(reader *r, const char *text, size_t len, stack_line *out)
{
    if (len > SONDE_COLLAPSED_MAX_LINE)
        return fail(r, "is longer than %u bytes", SONDE_COLLAPSED_MAX_LINE);
    len = trimmed(text, len);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)text[i];
        if ((c < 0x20 && c != '\t') || c == 0x7f)
            return fail(r, "holds byte 0x%02x at column %zu: collapsed stacks are text",
                        c, i + 1);
    }
    if (len == 0)
        return 0;
    size_t space = len;
    while (space > 0 && text[space - 1] != ' ' && text[space - 1] != '\t')
        space--;
    if (read_count(r, text + space, len - space, &out->count) < 0)
        return -1;
    if (space == 0)
        return fail(r, "has no frames before its count");
    out->stack = text;
    out->len = trimmed(text, space - 1); /* 0: its samples had no frames */
    return 1;
}

/* The slot of a frame's function (made when new, its smallest line kept
 * up to date) and the frame's line; -1 on out of memory (recorded). */
static int64_t slot_for(reader *r, const char *frame, size_t n, int32_t *line)
{
    sonde_cframe f;
    sonde_cframe_parse(frame, n, &f);
    char *name = r->scratch, *file = r->scratch + SONDE_COLLAPSED_MAX_LINE + 1;
    size_t name_len = sonde_cframe_unescape(f.name, f.name_len, name);
    size_t file_len = sonde_cframe_unescape(f.file, f.file_len, file);
    int64_t name_id = sonde_strtab_intern(&r->p->strings, name, name_len);
    int64_t file_id = sonde_strtab_intern(&r->p->strings, file, file_len);
    if (name_id < 0 || file_id < 0)
        return oom(r);
    uint64_t key = (uint64_t)file_id << 32 | (uint64_t)name_id;
    uint32_t slot = sonde_u64map_get(&r->slot_of, key);
    if (slot == SONDE_U64MAP_NONE) {
        int32_t *mins = sonde_grow(r->min_line, &r->min_cap, r->nslots + 1, sizeof *mins,
                                   UINT32_MAX - 1);
        if (mins)
            r->min_line = mins;
        uint32_t *funcs = mins ? sonde_grow(r->func_of, &r->func_cap, r->nslots + 1,
                                            sizeof *funcs, UINT32_MAX - 1) : NULL;
        if (funcs)
            r->func_of = funcs;
        if (!funcs || !sonde_u64map_slot(&r->slot_of, key, (uint32_t)r->nslots))
            return oom(r);
        slot = (uint32_t)r->nslots++;
        r->min_line[slot] = f.line;
        r->func_of[slot] = SONDE_NO_FUNC;
    }
    if (f.line < r->min_line[slot])
        r->min_line[slot] = f.line;
    *line = f.line;
    return slot;
}

/* The profile's function of a slot, made on first use. */
static uint32_t func_of(reader *r, const char *frame, size_t n, int32_t *line)
{
    int64_t slot = slot_for(r, frame, n, line);
    if (slot < 0)
        return SONDE_NO_FUNC;
    if (r->func_of[slot] == SONDE_NO_FUNC) {
        const char *name = r->scratch, *file = r->scratch + SONDE_COLLAPSED_MAX_LINE + 1;
        int32_t first = r->min_line[slot];
        r->func_of[slot] = sonde_profile_func(r->p, file, first, name, name,
                                              sonde_func_kind_of(file, first));
        if (r->func_of[slot] == SONDE_NO_FUNC)
            oom(r);
    }
    return r->func_of[slot];
}

/* The root of the thread whose frames start the stack (made when new). */
static uint32_t thread_root(reader *r, const sonde_cthread *t, const char *stack)
{
    int64_t key = sonde_strtab_intern(&r->thread_keys, stack, t->len);
    uint32_t k = key < 0 ? SONDE_U64MAP_NONE : sonde_u64map_get(&r->thread_of, (uint64_t)key);
    if (key >= 0 && k == SONDE_U64MAP_NONE) {
        int64_t made = sonde_profile_add_thread(r->p, t->ident, t->native_id,
                                                t->frames ? t->name : "all threads");
        if (made >= 0 && sonde_u64map_slot(&r->thread_of, (uint64_t)key, (uint32_t)made))
            k = (uint32_t)made;
    }
    if (k == SONDE_U64MAP_NONE) {
        oom(r);
        return SONDE_NO_NODE;
    }
    return r->p->threads[k].root;
}

/* Checks a stack's frames (build 0) or adds the stack to the tree
 * (build 1).  0, or -1 (recorded). */
static int walk_stack(reader *r, const stack_line *l, int build)
{
    sonde_cthread t;
    sonde_cframe_thread(l->stack, l->len, &t);
    uint32_t node = build ? thread_root(r, &t, l->stack) : SONDE_NO_NODE;
    if (build && node == SONDE_NO_NODE)
        return -1;
    if (build)
        r->p->nodes[node].total += l->count;
    if (l->len == 0) { /* a sample with no frames (py-spy's raw lines of idle threads) */
        if (build)
            r->p->nodes[node].self += l->count;
        return 0;
    }
    size_t at = t.frames ? t.len + 1 : 0, depth = 0;
    while (!(t.frames && t.len == l->len)) {    /* a thread with no frames: none */
        const char *semi = memchr(l->stack + at, ';', l->len - at);
        size_t end = semi ? (size_t)(semi - l->stack) : l->len;
        int32_t line;
        if (end == at)
            return fail(r, "has an empty frame (frame %zu: two ';' in a row, or one at an end)",
                        depth + 1);
        if (++depth > SONDE_COLLAPSED_MAX_DEPTH)
            return fail(r, "is more than %u frames deep", SONDE_COLLAPSED_MAX_DEPTH);
        if (!build) {
            if (slot_for(r, l->stack + at, end - at, &line) < 0)
                return -1;
        } else {
            uint32_t f = func_of(r, l->stack + at, end - at, &line);
            if (f != SONDE_NO_FUNC)
                node = sonde_profile_child_for(r->p, node, f, line);
            if (f == SONDE_NO_FUNC || node == SONDE_NO_NODE)
                return oom(r);
            r->p->nodes[node].total += l->count;
        }
        if (end == l->len)
            break;
        at = end + 1;
    }
    if (build)
        r->p->nodes[node].self += l->count;
    return 0;
}

/* One pass over every line: checks them (build 0) or builds the trees. */
static int pass(reader *r, const uint8_t *data, size_t len, int build)
{
    size_t stacks = 0, at = 0;
    r->number = 0;
    r->samples = 0;
    while (at < len && !r->failed) {
        const char *text = (const char *)data + at;
        const char *nl = memchr(text, '\n', len - at);
        size_t n = nl ? (size_t)(nl - text) : len - at;
        at += n + 1;
        r->number++;
        stack_line l = { NULL, 0, 0 };
        int rc = split_line(r, text, n, &l);
        if (rc > 0 && (!build || l.count > 0) && walk_stack(r, &l, build) == 0)
            stacks++;
    }
    r->number = 0;
    if (!r->failed && stacks == 0 && !build)
        fail(r, "it holds no stacks, only blank lines");
    return r->failed ? -1 : 0;
}

int sonde_collapsed_read(const uint8_t *data, size_t len, sonde_profile *p, char *err,
                         size_t errlen)
{
    reader r = { .p = p, .err = err, .errlen = errlen };
    if (errlen)
        err[0] = '\0';
    sonde_u64map_init(&r.slot_of);
    sonde_u64map_init(&r.thread_of);
    sonde_strtab_init(&r.thread_keys);
    r.scratch = malloc(2 * ((size_t)SONDE_COLLAPSED_MAX_LINE + 1));
    if (!r.scratch)
        oom(&r);
    else if (pass(&r, data, len, 0) == 0)
        pass(&r, data, len, 1);
    p->sample_rate = 1;
    p->seconds_per_tick = 1;
    p->rate_unknown = 1;
    free(r.scratch);
    free(r.min_line);
    free(r.func_of);
    sonde_u64map_free(&r.slot_of);
    sonde_u64map_free(&r.thread_of);
    sonde_strtab_free(&r.thread_keys);
    return r.failed ? -1 : 0;
}

/* 1 when s[0..n) is text: no byte below 0x20 but tab and a last '\r', no 0x7f. */
static int is_text(const uint8_t *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if ((s[i] < 0x20 && s[i] != '\t' && !(s[i] == '\r' && i + 1 == n)) || s[i] == 0x7f)
            return 0;
    return 1;
}

int sonde_collapsed_is(const uint8_t *data, size_t len)
{
    size_t at = 0;
    while (at < len && (is_space((char)data[at]) || data[at] == '\n'))
        at++;
    if (at == len)
        return len > 0;
    const uint8_t *nl = memchr(data + at, '\n', len - at);
    size_t n = nl ? (size_t)(nl - data - at) : len - at, head = n < 4096 ? n : 4096;
    if (!is_text(data + at, head))
        return 0;
    const char *line = (const char *)data + at;
    n = trimmed(line, n);
    size_t digits = 0;
    while (digits < n && line[n - 1 - digits] >= '0' && line[n - 1 - digits] <= '9')
        digits++;
    int counted = digits > 0 && digits < n && line[n - 1 - digits] == ' ';
    return counted || memchr(line, ';', head < n ? head : n) != NULL;
}
