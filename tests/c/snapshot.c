/* snapshot.c - recording, replaying and mutating a process's memory; see snapshot.h. */
#include "snapshot.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void snapshot_init(snapshot *s, int pid)
{
    memset(s, 0, sizeof *s);
    s->live.pid = pid;
}

void snapshot_attach(snapshot *s, sonde_proc *p)
{
    p->source = snapshot_read;
    p->source_ctx = s;
}

/* The range holding addr (the last one starting at or below it), or NULL. */
static snapshot_range *find(const snapshot *s, uint64_t addr)
{
    uint32_t lo = 0, hi = s->nranges;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (s->ranges[mid].addr <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo ? &s->ranges[lo - 1] : NULL;
}

static int record(snapshot *s, uint64_t addr, const void *buf, size_t len)
{
    if (s->nranges == s->cap) {
        uint32_t cap = s->cap ? 2 * s->cap : 1024;
        snapshot_range *r = realloc(s->ranges, cap * sizeof *r);
        if (!r)
            return -ENOMEM;
        s->ranges = r;
        s->cap = cap;
    }
    uint8_t *copy = malloc(len ? len : 1);
    if (!copy)
        return -ENOMEM;
    memcpy(copy, buf, len);
    s->ranges[s->nranges++] = (snapshot_range){ addr, len, len, copy };
    return 0;
}

int snapshot_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
    snapshot *s = ctx;
    s->reads++;
    if (!s->sealed) {
        int rc = sonde_proc_read(&s->live, addr, buf, len);
        return rc < 0 ? rc : record(s, addr, buf, len);
    }
    const snapshot_range *r = find(s, addr);
    if (!r || addr - r->addr > r->len || r->len - (addr - r->addr) < len)
        return -EFAULT;
    memcpy(buf, r->data + (addr - r->addr), len);
    return 0;
}

static int by_addr(const void *a, const void *b)
{
    const snapshot_range *x = *(snapshot_range *const *)a, *y = *(snapshot_range *const *)b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

int snapshot_seal(snapshot *s)
{
    snapshot_range **order = malloc((s->nranges + 1) * sizeof *order);
    snapshot_range *merged = malloc((s->nranges + 1) * sizeof *merged);
    if (!order || !merged) {
        free(order);
        free(merged);
        return -1;
    }
    for (uint32_t i = 0; i < s->nranges; i++)
        order[i] = &s->ranges[i];
    qsort(order, s->nranges, sizeof *order, by_addr);
    uint32_t n = 0;
    for (uint32_t i = 0; i < s->nranges; i++) {
        const snapshot_range *r = order[i];
        if (n > 0 && r->addr <= merged[n - 1].addr + merged[n - 1].full) {
            uint64_t end = r->addr + r->full;
            if (end > merged[n - 1].addr + merged[n - 1].full)
                merged[n - 1].full = (size_t)(end - merged[n - 1].addr);
        } else {
            merged[n++] = (snapshot_range){ r->addr, 0, r->full, NULL };
        }
    }
    int rc = 0;
    s->bytes = 0;
    for (uint32_t i = 0; i < n; i++) {
        merged[i].len = merged[i].full;
        merged[i].data = calloc(1, merged[i].full ? merged[i].full : 1);
        rc |= merged[i].data ? 0 : -1;
        s->bytes += merged[i].full;
    }
    /* The reads in the order they were made: a later copy wins. */
    snapshot_range *raw = s->ranges;
    uint32_t nraw = s->nranges;
    s->ranges = merged;
    s->nranges = n;
    for (uint32_t i = 0; i < nraw; i++) {
        snapshot_range *m = find(s, raw[i].addr);
        if (m && m->data)
            memcpy(m->data + (raw[i].addr - m->addr), raw[i].data, raw[i].full);
        free(raw[i].data);
    }
    free(raw);
    free(order);
    s->cap = n;
    s->sealed = 1;
    return rc;
}

void snapshot_free(snapshot *s)
{
    for (uint32_t i = 0; i < s->nranges; i++)
        free(s->ranges[i].data);
    free(s->ranges);
    memset(s, 0, sizeof *s);
}

/* ---- mutations ---- */

static snapshot_undo *log_bytes(snapshot *s, uint8_t *at, size_t n)
{
    if (s->nundo == SNAPSHOT_UNDO_MAX || n > sizeof s->undo[0].old)
        return NULL;
    snapshot_undo *u = &s->undo[s->nundo++];
    *u = (snapshot_undo){ .bytes = at, .n = n };
    memcpy(u->old, at, n);
    return u;
}

/* A random range: half the time any range alike (headers, strings and
 * line tables are small and many), else by size. */
static snapshot_range *pick(snapshot *s, uint64_t (*rnd)(void))
{
    if (rnd() % 2)
        return &s->ranges[rnd() % s->nranges];
    uint64_t at = rnd() % (s->bytes ? s->bytes : 1);
    for (uint32_t i = 0; i < s->nranges; i++) {
        if (at < s->ranges[i].full)
            return &s->ranges[i];
        at -= s->ranges[i].full;
    }
    return &s->ranges[0];
}

/* A place for a field of `width` bytes, aligned to it, inside r; NULL if none fits. */
static uint8_t *place(snapshot_range *r, size_t width, uint64_t (*rnd)(void))
{
    if (r->full < width)
        return NULL;
    size_t slots = (r->full - width) / width + 1;
    return r->data + (size_t)(rnd() % slots) * width;
}

void snapshot_mutate(snapshot *s, uint64_t (*rnd)(void))
{
    static const uint64_t edges64[] = { 0, 1, UINT64_MAX, 0x7fffffffu, 0x80000000u,
                                        (uint64_t)1 << 40, 0xffffffffu, 64, 4096 };
    static const uint32_t edges32[] = { 0, 1, UINT32_MAX, 0x7fffffffu, 0x80000000u, 0xffff,
                                        0x10000, 0x1fff, 0xe0, 0x20 };
    if (s->nranges == 0)
        return;
    snapshot_range *r = pick(s, rnd);
    uint8_t *at;
    uint64_t v;
    switch (rnd() % 9) {
    case 0: /* a bit */
        if ((at = place(r, 1, rnd)) && log_bytes(s, at, 1))
            *at ^= (uint8_t)(1u << rnd() % 8);
        break;
    case 1: /* a byte */
        if ((at = place(r, 1, rnd)) && log_bytes(s, at, 1))
            *at = rnd() % 2 ? (uint8_t)rnd() : (uint8_t)edges64[rnd() % 3] ^ 0x80;
        break;
    case 2: /* an int field: counts, lines, states */
        if ((at = place(r, 4, rnd)) && log_bytes(s, at, 4)) {
            uint32_t w = rnd() % 2 ? edges32[rnd() % (sizeof edges32 / sizeof edges32[0])]
                                   : (uint32_t)rnd();
            memcpy(at, &w, 4);
        }
        break;
    case 3: /* a word: lengths, sizes */
        if ((at = place(r, 8, rnd)) && log_bytes(s, at, 8)) {
            v = rnd() % 2 ? edges64[rnd() % (sizeof edges64 / sizeof edges64[0])] : rnd();
            memcpy(at, &v, 8);
        }
        break;
    case 4:
    case 5: { /* a pointer into some range (this one too): chains loop and overlap */
        snapshot_range *to = rnd() % 4 ? &s->ranges[rnd() % s->nranges] : r;
        if ((at = place(r, 8, rnd)) && log_bytes(s, at, 8)) {
            v = to->addr + (to->full ? rnd() % to->full : 0);
            v = rnd() % 2 ? v & ~(uint64_t)7 : v;
            memcpy(at, &v, 8);
        }
        break;
    }
    case 8: { /* a field nudged by a little: lengths off by one, pointers into a neighbour */
        size_t width = rnd() % 2 ? 8 : 4;
        uint64_t delta = rnd() % 33 - 16, x = 0;
        if ((at = place(r, width, rnd)) && log_bytes(s, at, width)) {
            memcpy(&x, at, width);
            x += delta;
            memcpy(at, &x, width); /* the low bytes, little-endian */
        }
        break;
    }
    case 6: { /* bytes spliced from elsewhere */
        snapshot_range *from = pick(s, rnd);
        uint8_t *src = place(from, 16, rnd);
        if (src && (at = place(r, 16, rnd)) && log_bytes(s, at, 16))
            memmove(at, src, 16);
        break;
    }
    default: /* a range cut short: a hole */
        if (s->nundo < SNAPSHOT_UNDO_MAX) {
            s->undo[s->nundo++] = (snapshot_undo){ .len = &r->len, .old_len = r->len };
            r->len = r->len ? (size_t)(rnd() % r->len) : 0;
        }
        break;
    }
}

void snapshot_undo_all(snapshot *s)
{
    while (s->nundo > 0) {
        const snapshot_undo *u = &s->undo[--s->nundo];
        if (u->bytes)
            memcpy(u->bytes, u->old, u->n);
        else
            *u->len = u->old_len;
    }
}
