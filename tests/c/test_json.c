/* test_json.c - sonde's own JSON profile: golden output, read back into
 * the same stats and the same call graph, and refused when malformed. */
#include <string.h>

#include "fixture.h"
#include "formats/format.h"
#include "formats/json_profile.h"
#include "harness.h"

static const char json_want[] =
    "{\"sonde\": 1, \"mode\": \"run\", \"unit\": \"seconds\",\n"
    "\"functions\": [\n"
    "  {\"name\": \"main\", \"qualname\": \"main\", \"file\": \"app.py\", \"line\": 1, "
    "\"kind\": \"python\"},\n"
    "  {\"name\": \"work\", \"qualname\": \"Worker.work\", \"file\": \"app.py\", \"line\": 5, "
    "\"kind\": \"python\"},\n"
    "  {\"name\": \"\\u003cbuilt-in method builtins.len\\u003e\", "
    "\"qualname\": \"\\u003cbuilt-in method builtins.len\\u003e\", \"file\": \"~\", "
    "\"line\": 0, \"kind\": \"c\"}],\n"
    "\"threads\": [{\"ident\": 1, \"native_id\": 100, \"name\": \"MainThread\", \"root\": 1}, "
    "{\"ident\": 2, \"native_id\": 0, \"name\": \"pool \\\"A\\\"\", \"root\": 5}],\n"
    "\"nodes\": [\n"
    "  [-1, 0, 0, 0, 0],\n"
    "  [-1, 0, 0, 0, 0],\n"
    "  [0, 1, 1, 10, 2.5],\n"
    "  [1, 2, 2, 7.5, 6],\n"
    "  [2, 3, 4, 1.5, 1.5],\n"
    "  [-1, 0, 0, 0, 0],\n"
    "  [1, 5, 1, 2, 1.5],\n"
    "  [1, 6, 1, 0.5, 0.5]],\n"
    "\"stats\": [\n"
    "  {\"function\": 0, \"ncalls\": 1, \"pcalls\": 1, \"tottime\": 2.5, \"cumtime\": 10, "
    "\"callers\": []},\n"
    "  {\"function\": 1, \"ncalls\": 4, \"pcalls\": 3, \"tottime\": 8, \"cumtime\": 9.5, "
    "\"callers\": [[0, 2, 2, 6, 7.5], [1, 1, 1, 0.5, 0.5]]},\n"
    "  {\"function\": 2, \"ncalls\": 4, \"pcalls\": 4, \"tottime\": 1.5, \"cumtime\": 1.5, "
    "\"callers\": [[1, 4, 4, 1.5, 1.5]]}]\n"
    "}\n";

static void test_json_written(void)
{
    sonde_profile p;
    sonde_stats s;
    sonde_profile_init(&p);
    sonde_stats_init(&s);
    fixture_app(&p, &s);
    sonde_buf b;
    sonde_buf_init(&b);
    const sonde_format *fmt = sonde_format_find("json");
    check(fmt && !fmt->needs_tree && fmt->write(&b, &p, &s, NULL) == 0, "json writer");
    check_str(b.data, json_want);
    sonde_buf_free(&b);
    sonde_stats_free(&s);
    sonde_profile_free(&p);
}

static int read_json(const char *text, sonde_profile *p, char *err, size_t errlen)
{
    sonde_jtree t;
    if (sonde_json_read(&t, text, strlen(text), err, errlen) < 0)
        return -1;
    int rc = sonde_json_profile_is(&t) ? sonde_json_profile_read(&t, p, err, errlen) : -2;
    sonde_jtree_free(&t);
    return rc;
}

/* json.c's output read back: the same stats, the same DOT. */
static void test_json_round_trip(void)
{
    sonde_profile p, q;
    sonde_stats s, r;
    sonde_profile_init(&p);
    sonde_profile_init(&q);
    sonde_stats_init(&s);
    sonde_stats_init(&r);
    fixture_app(&p, &s);
    sonde_buf b, d1, d2;
    sonde_buf_init(&b);
    sonde_buf_init(&d1);
    sonde_buf_init(&d2);
    sonde_format_find("json")->write(&b, &p, &s, NULL);
    char err[200];
    check(read_json(b.data, &q, err, sizeof err) == 0, "read back: %s", err);
    check(sonde_stats_from_profile(&r, &q) == 0, "stats");
    sonde_format_opts o = { .node_thres = 0, .edge_thres = 0 };
    sonde_dot_write(&d1, &p, &s, &o);
    sonde_dot_write(&d2, &q, &r, &o);
    check_str(d2.data, d1.data);
    check_u64(q.nthreads, 2);
    sonde_buf_free(&b);
    sonde_buf_free(&d1);
    sonde_buf_free(&d2);
    sonde_stats_free(&s);
    sonde_stats_free(&r);
    sonde_profile_free(&p);
    sonde_profile_free(&q);
}

/* A profile sampled at rate: app.py's main (its node, at line 3, in
 * *top) on thread 0, MainThread; returns the function work (app.py:5),
 * which it calls. */
static uint32_t sampled_main(sonde_profile *p, double rate, uint32_t *top)
{
    sonde_profile_init(p);
    p->sample_rate = rate;
    p->seconds_per_tick = 1.0 / rate;
    uint32_t main_f = sonde_profile_func(p, "app.py", 1, "main", "main", SONDE_FUNC_PYTHON);
    uint32_t work = sonde_profile_func(p, "app.py", 5, "work", "work", SONDE_FUNC_PYTHON);
    check(sonde_profile_add_thread(p, 1, 11, "MainThread") == 0, "thread");
    *top = sonde_profile_child_for(p, p->threads[0].root, main_f, 3);
    return work;
}

/* A sampled profile read back counts samples again, each frame at the
 * line it was sampled at: its collapsed stacks are the same. */
static void test_json_sampled_round_trip(void)
{
    sonde_profile p, q;
    uint32_t top, work = sampled_main(&p, 250, &top);
    sonde_profile_init(&q);
    uint32_t at7 = sonde_profile_child_for(&p, top, work, 7);
    uint32_t at8 = sonde_profile_child_for(&p, top, work, 8);
    p.nodes[at7].self = p.nodes[at7].total = 37;
    p.nodes[at8].self = p.nodes[at8].total = 5;
    p.nodes[top].total = 42;
    sonde_stats s;
    sonde_stats_init(&s);
    check(sonde_stats_from_profile(&s, &p) == 0, "stats");
    sonde_buf j, c1, c2;
    sonde_buf_init(&j);
    sonde_buf_init(&c1);
    sonde_buf_init(&c2);
    sonde_format_find("json")->write(&j, &p, &s, NULL);
    char err[200];
    check(read_json(j.data, &q, err, sizeof err) == 0, "sampled read back: %s", err);
    sonde_collapsed_write(&c1, &p, NULL, NULL);
    sonde_collapsed_write(&c2, &q, NULL, NULL);
    check(strstr(c1.data, "work (app.py:7) 37\n") != NULL, "samples at line 7: %s", c1.data);
    check_str(c2.data, c1.data);
    sonde_buf_free(&j);
    sonde_buf_free(&c1);
    sonde_buf_free(&c2);
    sonde_stats_free(&s);
    sonde_profile_free(&p);
    sonde_profile_free(&q);
}

/* A sampled profile's timeline read back: every sample at its time, of
 * its thread, on the same stack; the samples in time order again, the
 * cap's mark kept. */
static void test_json_timeline_round_trip(void)
{
    sonde_profile p, q;
    uint32_t top, work = sampled_main(&p, 100, &top);
    sonde_profile_init(&q);
    sonde_profile_add_thread(&p, 2, 12, "worker");
    uint32_t at7 = sonde_profile_child_for(&p, top, work, 7);
    uint32_t other = sonde_profile_child_for(&p, p.threads[1].root, work, 8);
    static const struct { uint64_t t; uint32_t thread; int which; } samples[] = {
        { 100, 0, 0 }, { 150, 1, 2 }, { 200, 0, 1 }, { 200, 1, 2 }, { 10000123, 0, 0 },
    };
    uint32_t nodes[] = { top, at7, other };
    for (size_t i = 0; i < 5; i++) {
        p.nodes[nodes[samples[i].which]].total++;
        p.nodes[nodes[samples[i].which]].self++;
        sonde_profile_add_event(&p, samples[i].t, samples[i].thread, nodes[samples[i].which]);
    }
    p.events_dropped = 1;
    sonde_stats s;
    sonde_stats_init(&s);
    check(sonde_stats_from_profile(&s, &p) == 0, "stats");
    sonde_buf j;
    sonde_buf_init(&j);
    sonde_format_find("json")->write(&j, &p, &s, NULL);
    check(strstr(j.data, "\"timeline\": {\"capped\": true, \"threads\": [\n"
                 "  {\"t_ns\": [100,100,9999923], \"nodes\": [") != NULL, "timeline: %s", j.data);
    char err[200];
    check(read_json(j.data, &q, err, sizeof err) == 0, "timeline read back: %s", err);
    check_u64(q.nevents, 5);
    check(q.events_dropped, "capped");
    for (uint64_t i = 0; i < 5 && i < q.nevents; i++) {
        const sonde_sample_event *e = &q.events[i];
        const sonde_node *want = &p.nodes[nodes[samples[i].which]], *got = &q.nodes[e->node];
        check_u64(e->t_ns, samples[i].t);
        check_u64(e->thread, samples[i].thread);
        check(got->func == want->func && got->line == want->line &&
              q.nodes[got->parent].func == p.nodes[want->parent].func, "sample %llu's stack",
              (unsigned long long)i);
    }
    sonde_buf_free(&j);
    sonde_stats_free(&s);
    sonde_profile_free(&p);
    sonde_profile_free(&q);
}

static void test_json_refused(void)
{
    static const char *bad[] = {
        "{\"mode\": \"run\", \"nodes\": []}",
        "{\"mode\": \"run\", \"functions\": [], \"threads\": [{\"root\": 5}], \"nodes\": [0]}",
        "{\"mode\": \"run\", \"functions\": [{\"name\": \"f\"}], \"threads\": [{\"root\": 1}],"
        " \"nodes\": [[-1,0,0,0,0], [-1,0,0,0,0], [7,1,1,1,1]]}",
        "{\"mode\": \"run\", \"functions\": [{\"name\": \"f\"}], \"threads\": [{\"root\": 1}],"
        " \"nodes\": [[-1,0,0,0,0], [-1,0,0,0,0], [0,3,1,1,1], [0,2,1,1,1]]}",
        "{\"mode\": \"run\", \"functions\": [{\"name\": \"f\"}, {\"name\": \"f\"}],"
        " \"threads\": [], \"nodes\": []}",
        "{\"mode\": \"run\", \"sample_rate\": 1e-300, \"functions\": [], \"threads\": [],"
        " \"nodes\": []}",
        "{\"mode\": \"run\", \"sample_rate\": 1e9, \"functions\": [], \"threads\": [],"
        " \"nodes\": []}",
        /* a timeline's sample on no frame's node, or without its time */
        "{\"mode\": \"run\", \"functions\": [{\"name\": \"f\"}], \"threads\": [{\"root\": 1}],"
        " \"nodes\": [[-1,0,0,0,0], [-1,0,0,0,0], [0,1,1,1,1]],"
        " \"timeline\": {\"threads\": [{\"t_ns\": [5], \"nodes\": [1]}]}}",
        "{\"mode\": \"run\", \"functions\": [{\"name\": \"f\"}], \"threads\": [{\"root\": 1}],"
        " \"nodes\": [[-1,0,0,0,0], [-1,0,0,0,0], [0,1,1,1,1]],"
        " \"timeline\": {\"threads\": [{\"t_ns\": [5, 6], \"nodes\": [2]}]}}",
        "{\"mode\": \"run\", \"functions\": [{\"name\": \"f\"}], \"threads\": [{\"root\": 1}],"
        " \"nodes\": [[-1,0,0,0,0], [-1,0,0,0,0], [0,1,1,1,1]],"
        " \"timeline\": {\"threads\": [{\"t_ns\": [-5], \"nodes\": [2]}]}}",
        "{\"mode\": \"run\", \"functions\": [{\"name\": \"f\"}], \"threads\": [{\"root\": 1}],"
        " \"nodes\": [[-1,0,0,0,0], [-1,0,0,0,0], [0,1,1,1,1]],"
        " \"timeline\": {\"threads\": [{\"t_ns\": [5], \"nodes\": [2]}, {}]}}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        sonde_profile p;
        sonde_profile_init(&p);
        char err[200] = "";
        check(read_json(bad[i], &p, err, sizeof err) == -1 && err[0], "refused %zu: %s", i, err);
        sonde_profile_free(&p);
    }
}

void test_json(void)
{
    test_json_written();
    test_json_round_trip();
    test_json_sampled_round_trip();
    test_json_timeline_round_trip();
    test_json_refused();
}
