/* pstats.c - .prof writer and reader; see pstats.h. */
#include "pstats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "marshal.h"

static void write_key(sonde_buf *b, const sonde_profile *p, uint32_t func)
{
    const sonde_func *f = &p->funcs[func];
    sonde_marshal_tuple_begin(b, 3);
    sonde_marshal_str(b, sonde_profile_str(p, f->file));
    sonde_marshal_int(b, f->line);
    sonde_marshal_str(b, sonde_profile_str(p, f->name));
}

int sonde_pstats_write(sonde_buf *b, const sonde_profile *p, const sonde_stats *s,
                       const sonde_format_opts *o)
{
    (void)o;
    uint32_t *start, *order;
    if (sonde_stats_group_edges(s, 0, &start, &order) < 0) {
        b->oom = 1;
        return -1;
    }
    sonde_marshal_dict_begin(b);
    for (uint32_t f = 0; f < s->nfuncs; f++) {
        const sonde_fstat *fs = &s->funcs[f];
        if (!fs->present)
            continue;
        write_key(b, p, f);
        sonde_marshal_tuple_begin(b, 5);
        sonde_marshal_int(b, (int64_t)fs->pcalls);
        sonde_marshal_int(b, (int64_t)fs->ncalls);
        sonde_marshal_float(b, fs->tottime);
        sonde_marshal_float(b, fs->cumtime);
        sonde_marshal_dict_begin(b);
        for (uint32_t i = start[f]; i < start[f + 1]; i++) {
            const sonde_edge *e = &s->edges[order[i]];
            write_key(b, p, e->caller);
            sonde_marshal_tuple_begin(b, 4);
            sonde_marshal_int(b, (int64_t)e->ncalls);
            sonde_marshal_int(b, (int64_t)e->pcalls);
            sonde_marshal_float(b, e->tottime);
            sonde_marshal_float(b, e->cumtime);
        }
        sonde_marshal_dict_end(b);
    }
    sonde_marshal_dict_end(b);
    free(start);
    free(order);
    return sonde_buf_ok(b) ? 0 : -1;
}

/* ---- reading ---- */

static int bad(char *err, size_t errlen, const char *what)
{
    snprintf(err, errlen, "not a profile file (%s)", what);
    return -1;
}

/* The function id for a (file, line, name) key; SONDE_NO_FUNC when the key
 * is malformed or memory runs out (*oom tells which). */
static uint32_t read_key(const sonde_mtree *t, const sonde_mval *k,
                         sonde_profile *p, int *oom)
{
    *oom = 0;
    if (k->type != SONDE_M_TUPLE || k->len != 3)
        return SONDE_NO_FUNC;
    const sonde_mval *file = sonde_mtree_item(t, k, 0);
    const sonde_mval *line = sonde_mtree_item(t, k, 1);
    const sonde_mval *name = sonde_mtree_item(t, k, 2);
    if (file->type != SONDE_M_STR || line->type != SONDE_M_INT ||
        name->type != SONDE_M_STR || line->i < INT32_MIN || line->i > INT32_MAX)
        return SONDE_NO_FUNC;
    char *fs = sonde_mval_str(t, file), *ns = sonde_mval_str(t, name);
    uint32_t id = SONDE_NO_FUNC;
    if (fs && ns) {
        id = sonde_profile_func(p, fs, (int32_t)line->i, ns, ns,
                                sonde_func_kind_of(fs, (int32_t)line->i));
    }
    *oom = id == SONDE_NO_FUNC;
    free(fs);
    free(ns);
    return id;
}

/* 1 when k is the ('__sampled__',) key that Python 3.15's sampling profiler
 * (profiling.sampling) puts beside the functions: its figures are samples,
 * not calls, and the key names no function. */
static int sampled_marker(const sonde_mtree *t, const sonde_mval *k)
{
    static const char marker[] = "__sampled__";
    if (k->type != SONDE_M_TUPLE || k->len != 1)
        return 0;
    const sonde_mval *s = sonde_mtree_item(t, k, 0);
    return s->type == SONDE_M_STR && s->len == sizeof marker - 1 &&
           memcmp(t->data + s->off, marker, sizeof marker - 1) == 0;
}

static int count(double v, uint64_t *out)
{
    if (!(v >= 0 && v < 1.8e19))
        return -1;
    *out = (uint64_t)v;
    return 0;
}

/* Reads one callers dict into edges ending at callee. */
static int read_callers(const sonde_mtree *t, const sonde_mval *d, uint32_t callee,
                        sonde_profile *p, sonde_stats *s, char *err, size_t errlen)
{
    if (d->type != SONDE_M_DICT)
        return bad(err, errlen, "callers is not a dict");
    for (uint32_t i = 0; i < d->len; i++) {
        int oom;
        uint32_t caller = read_key(t, sonde_mtree_item(t, d, 2 * i), p, &oom);
        if (caller == SONDE_NO_FUNC)
            return oom ? (snprintf(err, errlen, "out of memory"), -1)
                       : bad(err, errlen, "bad caller key");
        if (sonde_stats_reserve_funcs(s, p->nfuncs) < 0)
            return snprintf(err, errlen, "out of memory"), -1;
        const sonde_mval *v = sonde_mtree_item(t, d, 2 * i + 1);
        double nc = 0, cc = 0, tt = 0, ct = 0;
        if (v->type == SONDE_M_TUPLE && v->len == 4) {
            /* cProfile: (ncalls, pcalls, tottime, cumtime) */
            int ok = sonde_mval_number(sonde_mtree_item(t, v, 0), &nc) &
                     sonde_mval_number(sonde_mtree_item(t, v, 1), &cc) &
                     sonde_mval_number(sonde_mtree_item(t, v, 2), &tt) &
                     sonde_mval_number(sonde_mtree_item(t, v, 3), &ct);
            if (!ok)
                return bad(err, errlen, "bad caller figures");
        } else if (sonde_mval_number(v, &nc)) {
            cc = nc; /* the profile module stores a bare call count */
        } else {
            return bad(err, errlen, "bad caller figures");
        }
        if (!isfinite(tt) || !isfinite(ct))
            return bad(err, errlen, "bad time");
        sonde_edge *e = sonde_stats_edge(s, caller, callee);
        if (!e)
            return snprintf(err, errlen, "out of memory"), -1;
        uint64_t n, pc;
        if (count(nc, &n) < 0 || count(cc, &pc) < 0)
            return bad(err, errlen, "bad call count");
        e->ncalls += n;
        e->pcalls += pc;
        e->tottime += tt;
        e->cumtime += ct;
        if (!isfinite(e->tottime) || !isfinite(e->cumtime))
            return bad(err, errlen, "bad time");
    }
    return 0;
}

int sonde_pstats_read(const uint8_t *data, size_t len, sonde_profile *p,
                      sonde_stats *s, char *err, size_t errlen)
{
    sonde_mtree t;
    char merr[128];
    if (sonde_marshal_read(&t, data, len, merr, sizeof merr) < 0) {
        snprintf(err, errlen, "not a profile file (%s)", merr);
        return -1;
    }
    int rc = 0;
    const sonde_mval *root = &t.vals[t.root];
    if (root->type != SONDE_M_DICT) {
        rc = bad(err, errlen, "no stats dict");
        goto out;
    }
    for (uint32_t i = 0; i < root->len && rc == 0; i++) {
        int oom;
        if (sampled_marker(&t, sonde_mtree_item(&t, root, 2 * i))) {
            s->sampled = 1;
            continue;
        }
        uint32_t f = read_key(&t, sonde_mtree_item(&t, root, 2 * i), p, &oom);
        if (f == SONDE_NO_FUNC) {
            rc = oom ? (snprintf(err, errlen, "out of memory"), -1)
                     : bad(err, errlen, "bad function key");
            break;
        }
        const sonde_mval *v = sonde_mtree_item(&t, root, 2 * i + 1);
        double cc, nc, tt, ct;
        if (v->type != SONDE_M_TUPLE || v->len != 5 ||
            !sonde_mval_number(sonde_mtree_item(&t, v, 0), &cc) ||
            !sonde_mval_number(sonde_mtree_item(&t, v, 1), &nc) ||
            !sonde_mval_number(sonde_mtree_item(&t, v, 2), &tt) ||
            !sonde_mval_number(sonde_mtree_item(&t, v, 3), &ct)) {
            rc = bad(err, errlen, "bad function figures");
            break;
        }
        if (!isfinite(tt) || !isfinite(ct)) {
            rc = bad(err, errlen, "bad time");
            break;
        }
        if (sonde_stats_reserve_funcs(s, p->nfuncs) < 0) {
            rc = -1;
            snprintf(err, errlen, "out of memory");
            break;
        }
        uint64_t n, pc;
        if (count(nc, &n) < 0 || count(cc, &pc) < 0) {
            rc = bad(err, errlen, "bad call count");
            break;
        }
        sonde_fstat *fs = &s->funcs[f];
        fs->present = 1;
        fs->ncalls += n;
        fs->pcalls += pc;
        fs->tottime += tt;
        fs->cumtime += ct;
        if (!isfinite(fs->tottime) || !isfinite(fs->cumtime)) {
            rc = bad(err, errlen, "bad time");
            break;
        }
        rc = read_callers(&t, sonde_mtree_item(&t, v, 4), f, p, s, err, errlen);
    }
out:
    sonde_mtree_free(&t);
    return rc;
}
