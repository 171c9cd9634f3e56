/* run_children.c - --subprocesses' sum of the program's and its children's
 * parts: run's profiles, lines' documents; see run_children.h. */
#include "run_children.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/merge.h"
#include "../core/outfile.h"
#include "../formats/json_about.h"
#include "../formats/load.h"
#include "../report/doc_merge.h"
#include "options.h"

static int by_pid(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* The pids of the children that left a profile or a line to say (PID.out,
 * PID.said), in order, each once, into a malloc'd *pids.  Their count, or
 * -1 on out of memory. */
static int children_of(const launcher_session *run, int **pids)
{
    char dir[PATH_MAX];
    *pids = NULL;
    if (launcher_path(run, "children", dir, sizeof dir) < 0)
        return 0;
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int n = 0, *all = malloc(RUN_CHILDREN_MAX * sizeof *all);
    struct dirent *e;
    while (all && (e = readdir(d)) != NULL) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (pid <= 0 || pid > 0x7fffffff || (strcmp(end, ".out") != 0 && strcmp(end, ".said")))
            continue;
        if (n == RUN_CHILDREN_MAX) {
            cli_fail(0, "--subprocesses: more than %d children left a profile: the others "
                     "are left out", RUN_CHILDREN_MAX);
            break;
        }
        all[n++] = (int)pid;
    }
    closedir(d);
    if (!all)
        return -1;
    qsort(all, (size_t)n, sizeof *all, by_pid);
    int unique = 0;
    for (int i = 0; i < n; i++)
        if (unique == 0 || all[unique - 1] != all[i])
            all[unique++] = all[i];
    *pids = all;
    return unique;
}

/* The pid the program's own process had: DIR/owner's first word. */
static int program_pid(const launcher_session *run)
{
    sonde_buf b;
    sonde_buf_init(&b);
    int pid = 0;
    if (launcher_read(run, "owner", &b) == 0) {
        sonde_buf_putc(&b, '\0');
        pid = sonde_buf_ok(&b) && b.data ? atoi(b.data) : 0;
    }
    sonde_buf_free(&b);
    return pid;
}

/* Prints what child pid had to say (PID.said), and its command line
 * (PID.argv) into a.  0, or -1 on out of memory. */
static int child_about(const launcher_session *run, int pid, sonde_about *a)
{
    char name[64];
    sonde_buf b;
    sonde_buf_init(&b);
    snprintf(name, sizeof name, "children/%d.said", pid);
    if (launcher_read(run, name, &b) == 0)
        cli_report(&b);
    sonde_buf_free(&b);
    sonde_buf_init(&b);
    snprintf(name, sizeof name, "children/%d.argv", pid);
    int rc = 0;
    if (launcher_read(run, name, &b) == 0)
        for (size_t at = 0; rc == 0 && at < b.len;) {
            size_t len = strnlen(b.data + at, b.len - at);
            rc = sonde_about_add_arg(a, b.data + at, len);
            at += len + 1;
        }
    rc |= b.oom ? -1 : 0;
    sonde_buf_free(&b);
    return rc;
}

/* The whole number, not negative, that the folder's file `name` holds
 * (a child's rank, a part's start), or -1 when it holds none. */
static long long small_number(const launcher_session *run, const char *name)
{
    sonde_buf b;
    sonde_buf_init(&b);
    long long value = -1;
    if (launcher_read(run, name, &b) == 0 && b.len > 0 && b.len < 24) {
        char text[24], *end;
        memcpy(text, b.data, b.len);
        text[b.len] = '\0';
        long long v = strtoll(text, &end, 10);
        value = *end == '\0' && v >= 0 ? v : -1;
    }
    sonde_buf_free(&b);
    return value;
}

/* The rank child pid said it has (PID.rank: torch.distributed's RANK in
 * its environment), or -1. */
static long child_rank(const launcher_session *run, int pid)
{
    char name[64];
    snprintf(name, sizeof name, "children/%d.rank", pid);
    long long rank = small_number(run, name);
    return rank <= 1000000000 ? (long)rank : -1;
}

/* Adds the profile in the folder's file `name` to p, labelled for pid
 * and a's command line.  0, or SONDE_EXIT_FAILED after printing why. */
static int add_part(const launcher_session *run, const char *name, int pid, const sonde_about *a,
                    sonde_profile *p)
{
    char path[PATH_MAX], err[512], label[SONDE_MERGE_LABEL_MAX];
    sonde_profile part;
    sonde_stats ps;
    if (launcher_prepare_load(run, name, path, sizeof path, &part, &ps) != 0)
        return SONDE_EXIT_FAILED;
    int rc = 0;
    if (sonde_load_file(path, &part, &ps, err, sizeof err) < 0) {
        rc = cli_fail(SONDE_EXIT_FAILED, "%s", err);
    } else {
        sonde_merge_label_ranked(label, sizeof label, pid, a, name, child_rank(run, pid));
        if (sonde_merge_tree(p, &part, label) < 0)
            rc = cli_fail(SONDE_EXIT_FAILED, "out of memory");
    }
    sonde_stats_free(&ps);
    sonde_profile_free(&part);
    return rc;
}

int run_children_load(const launcher_session *run, const sonde_about *about, sonde_profile *p,
                      sonde_stats *s, int *children)
{
    sonde_stats_init(s);
    *children = 0;
    if (sonde_profile_init(p) < 0)
        return cli_fail(SONDE_EXIT_FAILED, "out of memory");
    int *pids;
    int n = children_of(run, &pids);
    int rc = n < 0 ? cli_fail(SONDE_EXIT_FAILED, "out of memory")
                   : add_part(run, "out", program_pid(run), about, p);
    for (int i = 0; rc == 0 && i < n; i++) {
        char name[64], path[PATH_MAX];
        sonde_about a;
        sonde_about_init(&a);
        snprintf(name, sizeof name, "children/%d.out", pids[i]);
        int left_out = launcher_path(run, name, path, sizeof path) < 0 || access(path, F_OK) < 0;
        if (child_about(run, pids[i], &a) < 0)
            rc = cli_fail(SONDE_EXIT_FAILED, "out of memory");
        else if (!left_out && (rc = add_part(run, name, pids[i], &a, p)) == 0)
            ++*children;
        sonde_about_clear(&a);
    }
    free(pids);
    if (rc == 0 && (sonde_merge_finish(p) < 0 || sonde_stats_from_profile(s, p) < 0))
        rc = cli_fail(SONDE_EXIT_FAILED, "out of memory");
    return rc;
}

/* One part of a document sum: its text, its tree and its label. */
typedef struct doc_in {
    sonde_buf text;
    sonde_jtree tree;
    int read;
    char label[SONDE_MERGE_LABEL_MAX];
    char name[64];       /* its file in the folder */
} doc_in;

/* When the part's recording started (its file `start`: Unix ns), into
 * a->start_ns; left as it is when it did not say. */
static void part_start(const launcher_session *run, const char *start, sonde_about *a)
{
    long long ns = small_number(run, start);
    if (ns > 0)
        a->start_ns = ns;
}

/* Reads the folder's document `name` into d, what a says of its process
 * (when it started: the timelines of mem's parts are placed by it) put
 * in.  0, or SONDE_EXIT_FAILED after printing why. */
static int read_doc(const launcher_session *run, const char *name, const sonde_about *a,
                    doc_in *d)
{
    char err[256];
    sonde_buf raw;
    sonde_buf_init(&raw);
    if (launcher_read(run, name, &raw) < 0 || !sonde_buf_ok(&raw)) {
        int rc = cli_fail(SONDE_EXIT_FAILED, "%s", raw.why[0] ? raw.why : "out of memory");
        sonde_buf_free(&raw);
        return rc;
    }
    sonde_json_about_insert(&d->text, raw.data, raw.len, a, 0);
    sonde_buf_free(&raw);
    if (!sonde_buf_ok(&d->text))
        return cli_fail(SONDE_EXIT_FAILED, "out of memory");
    if (sonde_json_read(&d->tree, d->text.data, d->text.len, err, sizeof err) < 0)
        return cli_fail(SONDE_EXIT_FAILED, "%s: %s", name, err);
    d->read = 1;
    return 0;
}

static int fill_text(sonde_buf *b, void *ctx)
{
    const sonde_buf *text = ctx;
    sonde_buf_put(b, text->data, text->len);
    return sonde_buf_ok(b) ? 0 : -1;
}

int run_children_sum_documents(const launcher_session *run, const sonde_about *about, int mem,
                               int *children)
{
    *children = 0;
    int *pids;
    int n = children_of(run, &pids);
    doc_in *docs = n < 0 ? NULL : calloc((size_t)n + 1, sizeof *docs);
    sonde_doc_part *parts = docs ? calloc((size_t)n + 1, sizeof *parts) : NULL;
    sonde_about own = *about; /* shallow: only its start changes */
    part_start(run, "start", &own);
    int rc = parts ? read_doc(run, "out", &own, &docs[0])
                   : cli_fail(SONDE_EXIT_FAILED, "out of memory");
    uint32_t k = 0;
    if (rc == 0) {
        sonde_merge_label(docs[0].label, sizeof docs[0].label, program_pid(run), about, "out");
        parts[k++] = (sonde_doc_part){ &docs[0].tree, docs[0].label, "out" };
    }
    for (int i = 0; rc == 0 && i < n; i++) {
        char path[PATH_MAX], why[256];
        sonde_about a;
        sonde_about_init(&a);
        doc_in *d = &docs[k];
        const char *name = d->name;
        char start[64];
        snprintf(d->name, sizeof d->name, "children/%d.out", pids[i]);
        snprintf(start, sizeof start, "children/%d.start", pids[i]);
        part_start(run, start, &a);
        if (child_about(run, pids[i], &a) < 0)
            rc = cli_fail(SONDE_EXIT_FAILED, "out of memory");
        else if (launcher_path(run, name, path, sizeof path) < 0 || access(path, F_OK) < 0)
            ; /* left out: its .said says why */
        else if ((rc = read_doc(run, name, &a, d)) == 0 &&
                 sonde_doc_merge_clash(&docs[0].tree, &d->tree, why, sizeof why))
            rc = cli_fail(SONDE_EXIT_FAILED, "process %d's part cannot be summed: %s", pids[i],
                          why);
        else if (rc == 0) {
            sonde_merge_label_ranked(d->label, sizeof d->label, pids[i], &a, name,
                                     child_rank(run, pids[i]));
            parts[k] = (sonde_doc_part){ &d->tree, d->label, name };
            k++;
            ++*children;
        }
        sonde_about_clear(&a);
    }
    sonde_buf sum;
    sonde_buf_init(&sum);
    char err[512], path[PATH_MAX];
    if (rc == 0 && sonde_doc_merge_write(&sum, mem, parts, k, err, sizeof err) < 0)
        rc = cli_fail(SONDE_EXIT_FAILED, "%s", err);
    /* the sum takes the program's document's place: the table and -o read it */
    if (rc == 0 && launcher_path(run, "out", path, sizeof path) == 0 &&
        sonde_outfile_write(path, NULL, fill_text, &sum, err, sizeof err) < 0)
        rc = cli_fail(SONDE_EXIT_FAILED, "%s", err);
    sonde_buf_free(&sum);
    for (int i = 0; docs && i <= n; i++) {
        if (docs[i].read)
            sonde_jtree_free(&docs[i].tree);
        sonde_buf_free(&docs[i].text);
    }
    free(parts);
    free(docs);
    free(pids);
    return rc;
}
