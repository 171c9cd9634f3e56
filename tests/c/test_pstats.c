/* test_pstats.c - .prof writing and reading: round trip, tuple order, bad files. */
#include <string.h>

#include "formats/format.h"
#include "formats/marshal.h"
#include "formats/pstats.h"
#include "fixture.h"
#include "harness.h"

enum { MAIN, FIB, LEN };

/* main -> fib -> fib -> fib, main -> len, fib -> len (calls, total, self):
 * fib: ncalls 1+2+4 = 7, pcalls 1; edge fib->fib: ncalls 2+4 = 6, pcalls 2. */
static void build(sonde_profile *p, sonde_stats *s)
{
    sonde_profile_func(p, "app.py", 1, "main", NULL, SONDE_FUNC_PYTHON);
    sonde_profile_func(p, "app.py", 10, "fib", NULL, SONDE_FUNC_PYTHON);
    sonde_profile_func(p, "~", 0, "<built-in method builtins.len>", NULL, SONDE_FUNC_C);
    p->seconds_per_tick = 0.001;
    uint32_t root = fixture_thread(p, 1, 0, "MainThread");
    uint32_t main = fixture_node(p, root, MAIN, 1, 1000, 100);
    uint32_t fib1 = fixture_node(p, main, FIB, 1, 800, 290);
    uint32_t fib2 = fixture_node(p, fib1, FIB, 2, 500, 460);
    fixture_node(p, fib2, FIB, 4, 40, 40);
    fixture_node(p, fib1, LEN, 1, 10, 10);
    fixture_node(p, main, LEN, 3, 100, 100);
    sonde_stats_from_profile(s, p);
}

/* The id of a function in p by its label, or SONDE_NO_FUNC (never adds one). */
static uint32_t find_func(const sonde_profile *p, const char *file, int32_t line,
                          const char *name)
{
    for (uint32_t f = 0; f < p->nfuncs; f++)
        if (p->funcs[f].line == line &&
            strcmp(sonde_profile_str(p, p->funcs[f].file), file) == 0 &&
            strcmp(sonde_profile_str(p, p->funcs[f].name), name) == 0)
            return f;
    return SONDE_NO_FUNC;
}

/* The id in `to` of function f of `from`. */
static uint32_t same_func(const sonde_profile *from, uint32_t f, const sonde_profile *to)
{
    const sonde_func *g = &from->funcs[f];
    return find_func(to, sonde_profile_str(from, g->file), g->line,
                     sonde_profile_str(from, g->name));
}

static void test_round_trip(void)
{
    sonde_profile p, q;
    sonde_stats s, r;
    sonde_profile_init(&p);
    sonde_profile_init(&q);
    sonde_stats_init(&s);
    sonde_stats_init(&r);
    build(&p, &s);
    sonde_buf b;
    sonde_buf_init(&b);
    sonde_pstats_write(&b, &p, &s, NULL);
    char err[256];
    check(sonde_pstats_read((const uint8_t *)b.data, b.len, &q, &r, err, sizeof err) == 0,
          "read back: %s", err);

    check_u64(q.nfuncs, 3);
    check_u64(r.nedges, s.nedges);
    for (uint32_t f = 0; f < p.nfuncs; f++) {
        uint32_t g = same_func(&p, f, &q);
        check(g != SONDE_NO_FUNC && g < r.nfuncs, "function %u read back", f);
        if (g == SONDE_NO_FUNC || g >= r.nfuncs)
            continue;
        check(r.funcs[g].present, "function %u has an entry", f);
        check_u64(r.funcs[g].ncalls, s.funcs[f].ncalls);
        check_u64(r.funcs[g].pcalls, s.funcs[f].pcalls);
        check_dbl(r.funcs[g].tottime, s.funcs[f].tottime);
        check_dbl(r.funcs[g].cumtime, s.funcs[f].cumtime);
        check_u64(q.funcs[g].kind, p.funcs[f].kind);
    }
    for (uint32_t i = 0; i < s.nedges; i++) {
        const sonde_edge *e = &s.edges[i];
        uint64_t key = (uint64_t)same_func(&p, e->caller, &q) << 32 |
                       same_func(&p, e->callee, &q);
        uint32_t j = sonde_u64map_get(&r.edge_index, key);
        check(j < r.nedges, "edge %u->%u read back", e->caller, e->callee);
        if (j >= r.nedges)
            continue;
        check_u64(r.edges[j].ncalls, e->ncalls);
        check_u64(r.edges[j].pcalls, e->pcalls);
        check_dbl(r.edges[j].tottime, e->tottime);
        check_dbl(r.edges[j].cumtime, e->cumtime);
    }
    /* Hand-computed figures survive too. */
    uint32_t fib = find_func(&q, "app.py", 10, "fib");
    uint32_t len = find_func(&q, "~", 0, "<built-in method builtins.len>");
    if (fib < r.nfuncs && len < r.nfuncs) {
        check_u64(r.funcs[fib].ncalls, 7);
        check_u64(r.funcs[fib].pcalls, 1);
        check_u64(r.funcs[len].ncalls, 4);
        check_u64(q.funcs[len].kind, SONDE_FUNC_C);
    }

    sonde_buf_free(&b);
    sonde_stats_free(&r);
    sonde_stats_free(&s);
    sonde_profile_free(&q);
    sonde_profile_free(&p);
}

/* The dict entry whose key names (file, line, name), or NULL. */
static const sonde_mval *entry(const sonde_mtree *t, const sonde_mval *d, int32_t line,
                               const char *name)
{
    for (uint32_t i = 0; i < d->len; i++) {
        const sonde_mval *k = sonde_mtree_item(t, d, 2 * i);
        const sonde_mval *n = sonde_mtree_item(t, k, 2);
        if (sonde_mtree_item(t, k, 1)->i == line && n->len == strlen(name) &&
            memcmp(t->data + n->off, name, n->len) == 0)
            return sonde_mtree_item(t, d, 2 * i + 1);
    }
    return NULL;
}

/* Decodes the written bytes independently of the .prof reader: the
 * function tuple is (pcalls, ncalls, ...), a caller's is (ncalls, pcalls, ...). */
static void test_tuple_order(void)
{
    sonde_profile p;
    sonde_stats s;
    sonde_profile_init(&p);
    sonde_stats_init(&s);
    build(&p, &s);
    sonde_buf b;
    sonde_buf_init(&b);
    sonde_pstats_write(&b, &p, &s, NULL);
    sonde_mtree t;
    char err[128];
    check(sonde_marshal_read(&t, (const uint8_t *)b.data, b.len, err, sizeof err) == 0,
          "decode: %s", err);
    const sonde_mval *d = &t.vals[t.root];
    check_u64(d->len, 3);
    const sonde_mval *fib = entry(&t, d, 10, "fib");
    check(fib && fib->type == SONDE_M_TUPLE && fib->len == 5, "fib entry");
    if (fib) {
        check_u64(sonde_mtree_item(&t, fib, 0)->i, 1);   /* pcalls */
        check_u64(sonde_mtree_item(&t, fib, 1)->i, 7);   /* ncalls */
        const sonde_mval *callers = sonde_mtree_item(&t, fib, 4);
        check_u64(callers->len, 2);
        const sonde_mval *self_edge = entry(&t, callers, 10, "fib");
        check(self_edge && self_edge->len == 4, "fib->fib caller entry");
        if (self_edge) {
            check_u64(sonde_mtree_item(&t, self_edge, 0)->i, 6);   /* ncalls */
            check_u64(sonde_mtree_item(&t, self_edge, 1)->i, 2);   /* pcalls */
        }
    }
    /* main has no caller: an empty callers dict. */
    const sonde_mval *main = entry(&t, d, 1, "main");
    check(main && sonde_mtree_item(&t, main, 4)->type == SONDE_M_DICT &&
          sonde_mtree_item(&t, main, 4)->len == 0, "main's callers dict is empty");
    sonde_mtree_free(&t);
    sonde_buf_free(&b);
    sonde_stats_free(&s);
    sonde_profile_free(&p);
}

static void put_key(sonde_buf *b, const char *file, int line, const char *name)
{
    sonde_marshal_tuple_begin(b, 3);
    sonde_marshal_str(b, file);
    sonde_marshal_int(b, line);
    sonde_marshal_str(b, name);
}

/* The profile module's files: a caller maps to a bare call count. */
static void test_profile_module_file(void)
{
    sonde_buf b;
    sonde_buf_init(&b);
    sonde_marshal_dict_begin(&b);
    put_key(&b, "a.py", 3, "f");
    sonde_marshal_tuple_begin(&b, 5);
    sonde_marshal_int(&b, 4);
    sonde_marshal_int(&b, 4);
    sonde_marshal_float(&b, 0.5);
    sonde_marshal_float(&b, 0.75);
    sonde_marshal_dict_begin(&b);
    put_key(&b, "a.py", 1, "main");
    sonde_marshal_int(&b, 4);
    sonde_marshal_dict_end(&b);
    sonde_marshal_dict_end(&b);

    sonde_profile p;
    sonde_stats s;
    sonde_profile_init(&p);
    sonde_stats_init(&s);
    char err[256];
    check(sonde_pstats_read((const uint8_t *)b.data, b.len, &p, &s, err, sizeof err) == 0,
          "profile module file: %s", err);
    uint32_t f = find_func(&p, "a.py", 3, "f"), main = find_func(&p, "a.py", 1, "main");
    check(f != SONDE_NO_FUNC && main != SONDE_NO_FUNC, "both functions known");
    check(!s.funcs[main].present, "a caller alone has no entry of its own");
    check_dbl(s.funcs[f].tottime, 0.5);
    check_dbl(s.funcs[f].cumtime, 0.75);
    check_u64(s.nedges, 1);
    check(s.edges[0].caller == main && s.edges[0].callee == f, "edge main->f");
    check_u64(s.edges[0].ncalls, 4);
    check_u64(s.edges[0].pcalls, 4);
    check_dbl(s.edges[0].cumtime, 0);
    sonde_stats_free(&s);
    sonde_profile_free(&p);
    sonde_buf_free(&b);
}

/* A well-formed marshal dict that is no profile must be refused. */
static void check_refused(const sonde_buf *b, const char *why, int line)
{
    sonde_profile p;
    sonde_stats s;
    sonde_profile_init(&p);
    sonde_stats_init(&s);
    char err[256] = "";
    int rc = sonde_pstats_read((const uint8_t *)b->data, b->len, &p, &s, err, sizeof err);
    harness_check(rc == -1, __FILE__, line, "accepted a bad file");
    harness_check(strncmp(err, "not a profile file (", 20) == 0 && strstr(err, why),
                  __FILE__, line, "message '%s', want '%s'", err, why);
    sonde_stats_free(&s);
    sonde_profile_free(&p);
}

/* Starts a one-entry stats dict for a.py:3(f) with these figures. */
static void put_entry(sonde_buf *b, int64_t pcalls, int64_t ncalls)
{
    sonde_buf_init(b);
    sonde_marshal_dict_begin(b);
    put_key(b, "a.py", 3, "f");
    sonde_marshal_tuple_begin(b, 5);
    sonde_marshal_int(b, pcalls);
    sonde_marshal_int(b, ncalls);
    sonde_marshal_float(b, 0);
    sonde_marshal_float(b, 0);
}

static void test_bad_files(void)
{
    sonde_buf b;
    sonde_buf_init(&b);
    sonde_buf_puts(&b, "{z");
    check_refused(&b, "truncated", __LINE__);
    sonde_buf_free(&b);

    sonde_buf_init(&b);
    sonde_marshal_tuple_begin(&b, 0);
    check_refused(&b, "no stats dict", __LINE__);
    sonde_buf_free(&b);

    sonde_buf_init(&b);
    sonde_marshal_dict_begin(&b);
    sonde_marshal_int(&b, 1);
    sonde_marshal_int(&b, 2);
    sonde_marshal_dict_end(&b);
    check_refused(&b, "bad function key", __LINE__);
    sonde_buf_free(&b);

    sonde_buf_init(&b);
    sonde_marshal_dict_begin(&b);
    put_key(&b, "a.py", 3, "f");
    sonde_marshal_tuple_begin(&b, 1);
    sonde_marshal_int(&b, 1);
    sonde_marshal_dict_end(&b);
    check_refused(&b, "bad function figures", __LINE__);
    sonde_buf_free(&b);

    put_entry(&b, 1, -1);
    sonde_marshal_dict_begin(&b);
    sonde_marshal_dict_end(&b);
    sonde_marshal_dict_end(&b);
    check_refused(&b, "bad call count", __LINE__);
    sonde_buf_free(&b);

    put_entry(&b, 1, 1);
    sonde_marshal_int(&b, 0);
    sonde_marshal_dict_end(&b);
    check_refused(&b, "callers is not a dict", __LINE__);
    sonde_buf_free(&b);

    put_entry(&b, 1, 1);
    sonde_marshal_dict_begin(&b);
    sonde_marshal_str(&b, "main");
    sonde_marshal_int(&b, 1);
    sonde_marshal_dict_end(&b);
    sonde_marshal_dict_end(&b);
    check_refused(&b, "bad caller key", __LINE__);
    sonde_buf_free(&b);

    put_entry(&b, 1, 1);
    sonde_marshal_dict_begin(&b);
    put_key(&b, "a.py", 1, "main");
    sonde_marshal_str(&b, "many");
    sonde_marshal_dict_end(&b);
    sonde_marshal_dict_end(&b);
    check_refused(&b, "bad caller figures", __LINE__);
    sonde_buf_free(&b);
}

void test_pstats(void)
{
    test_round_trip();
    test_tuple_order();
    test_profile_module_file();
    test_bad_files();
}
