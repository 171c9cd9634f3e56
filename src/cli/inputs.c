/* inputs.c - one or several profile files read as one; see inputs.h. */
#include "inputs.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/merge.h"
#include "../report/doc_merge.h"
#include "lprof_load.h"
#include "options.h"

/* One file read: a profile of calls or a document. */
typedef struct one {
    enum sonde_load_kind kind;
    sonde_profile p;
    sonde_stats s;
    sonde_jtree doc;
    int has_doc;
} one;

static void one_free(one *o)
{
    sonde_stats_free(&o->s);
    sonde_profile_free(&o->p);
    if (o->has_doc)
        sonde_jtree_free(&o->doc);
    o->has_doc = 0;
}

/* Reads file into *o (initialised here).  0, or an exit code. */
static int one_load(const sonde_env *env, const char *file, one *o)
{
    char err[512];
    memset(o, 0, sizeof *o);
    sonde_stats_init(&o->s);
    if (sonde_profile_init(&o->p) < 0)
        return cli_fail(SONDE_EXIT_FAILED, "out of memory");
    if (cli_lprof_is(file)) {
        int rc = cli_lprof_load(env, file, &o->doc);
        o->kind = SONDE_LOADED_LINES;
        o->has_doc = rc == 0;
        return rc;
    }
    if (sonde_load_any(file, &o->p, &o->s, &o->doc, &o->kind, err, sizeof err) < 0)
        return cli_fail(SONDE_EXIT_FAILED, "%s", err);
    o->has_doc = o->kind != SONDE_LOADED_PROFILE;
    return 0;
}

static const char *kind_name(enum sonde_load_kind k)
{
    return k == SONDE_LOADED_LINES ? "sonde lines's per-line figures"
           : k == SONDE_LOADED_MEM ? "sonde mem's per-line memory" : "a profile of calls";
}

/* The span of time a file's profile covers, ns since the epoch; {0, 0}
 * when it does not say. */
typedef struct span {
    int64_t start, end;
} span;

/* 1 when a and b are known and apart: two windows of one process (record
 * --every's files), which may share its label.  Adjacent windows may
 * seem to overlap by the rounding of their files' times. */
static int apart(span a, span b)
{
    const int64_t slack = 10000000; /* 10 ms */
    return a.end > a.start && b.end > b.start &&
           (a.end - slack <= b.start || b.end - slack <= a.start);
}

/* The label of file's process, made unique among labels[0..n) but for the
 * parts of the same process in other windows of time (spans): 1 when it
 * is such a part (its process is counted already), else 0. */
static int label_for(const one *o, const char *file, char labels[][SONDE_MERGE_LABEL_MAX],
                     span *spans, int n)
{
    int pid = o->p.pid;
    sonde_about doc_about;
    const sonde_about *a = &o->p.about;
    sonde_about_init(&doc_about);
    if (o->has_doc) {
        sonde_doc_merge_about(&o->doc, &pid, &doc_about);
        a = &doc_about;
    }
    char *out = labels[n];
    sonde_merge_label(out, SONDE_MERGE_LABEL_MAX, pid, a, file);
    if (!o->has_doc && a->start_ns > 0 && a->wall > 0 && a->wall < 1e9)
        spans[n] = (span){ a->start_ns, a->start_ns + (int64_t)(a->wall * 1e9) };
    sonde_about_clear(&doc_about);
    size_t len = strlen(out);
    for (int copy = 2;; copy++) {
        int seen = 0, window = 0;
        for (int i = 0; i < n && !seen; i++) {
            int same = strcmp(labels[i], out) == 0;
            seen = same && !apart(spans[i], spans[n]);
            window |= same;
        }
        if (!seen)
            return window;
        char tail[16];
        int k = snprintf(tail, sizeof tail, " #%d", copy % 1000000);
        size_t at = len + (size_t)k < SONDE_MERGE_LABEL_MAX ? len : SONDE_MERGE_LABEL_MAX - 1 - (size_t)k;
        memcpy(out + at, tail, (size_t)k + 1);
    }
}

/* Why `o` (of file) cannot be summed with `first` (of first_file): an
 * exit code after one line, or 0. */
static int clash(const char *cmd, const one *first, const char *first_file, const one *o,
                 const char *file)
{
    char why[256];
    const char *w = NULL;
    if (o->kind != first->kind) {
        snprintf(why, sizeof why, "holds %s and the other %s", kind_name(first->kind),
                 kind_name(o->kind));
        w = why;
    } else if (o->kind == SONDE_LOADED_PROFILE) {
        w = sonde_merge_unit_clash(&first->p, &first->s, &o->p, &o->s, why, sizeof why);
    } else {
        w = sonde_doc_merge_clash(&first->doc, &o->doc, why, sizeof why);
    }
    if (!w)
        return 0;
    fprintf(stderr, "sonde %s: cannot sum '%s' and '%s': the first %s\n", cmd, first_file, file,
            w);
    return SONDE_EXIT_USAGE;
}

/* Adds o (a profile of file, labelled label) to in: node by node while
 * every input so far had a tree, else by its stats.  0, or -1. */
static int add_profile(cli_inputs *in, one *o, const char *label)
{
    int tree_so_far = in->p.nthreads > 0 || in->p.nfuncs == 0;
    if (sonde_load_has_tree(&o->p) && tree_so_far)
        return sonde_merge_tree(&in->p, &o->p, label);
    if (tree_so_far && in->p.nthreads > 0) {
        /* the first input without a tree: what was merged becomes stats */
        sonde_profile p;
        sonde_stats s;
        sonde_stats_init(&s);
        if (sonde_profile_init(&p) < 0)
            return -1;
        int rc = sonde_stats_from_profile(&in->s, &in->p);
        if (rc == 0)
            rc = sonde_merge_stats(&p, &s, &in->p, &in->s, label);
        sonde_stats_free(&in->s);
        sonde_profile_free(&in->p);
        in->p = p;
        in->s = s;
        if (rc < 0)
            return -1;
    }
    if (!sonde_load_has_tree(&o->p))
        return sonde_merge_stats(&in->p, &in->s, &o->p, &o->s, label);
    /* a tree after a .prof: its stats, under its process frame */
    sonde_profile t;
    sonde_stats ts;
    sonde_stats_init(&ts);
    if (sonde_profile_init(&t) < 0)
        return -1;
    int rc = sonde_merge_tree(&t, &o->p, label);
    if (rc == 0)
        rc = sonde_stats_from_profile(&ts, &t);
    if (rc == 0)
        rc = sonde_merge_stats(&in->p, &in->s, &t, &ts, label);
    sonde_stats_free(&ts);
    sonde_profile_free(&t);
    return rc;
}

/* The documents of every file summed into in->text and in->doc. */
static int merge_documents(cli_inputs *in, one *docs, char labels[][SONDE_MERGE_LABEL_MAX],
                           char *const *files, int n)
{
    sonde_doc_part *parts = calloc((size_t)n, sizeof *parts);
    char err[256];
    if (!parts)
        return cli_fail(SONDE_EXIT_FAILED, "out of memory");
    for (int i = 0; i < n; i++)
        parts[i] = (sonde_doc_part){ &docs[i].doc, labels[i], files[i] };
    int rc = sonde_doc_merge_write(&in->text, in->kind == SONDE_LOADED_MEM, parts, (uint32_t)n,
                                   err, sizeof err);
    free(parts);
    if (rc < 0)
        return cli_fail(SONDE_EXIT_FAILED, "%s", err);
    if (sonde_json_read(&in->doc, in->text.data, in->text.len, err, sizeof err) < 0)
        return cli_fail(SONDE_EXIT_FAILED, "the merged document: %s", err);
    return 0;
}

/* Several files summed into in.  0, or an exit code. */
static int load_several(const sonde_env *env, const char *cmd, char *const *files, int n,
                        const char *label, cli_inputs *in)
{
    char (*labels)[SONDE_MERGE_LABEL_MAX] = calloc((size_t)n, sizeof *labels);
    span *spans = calloc((size_t)n, sizeof *spans);
    one *docs = calloc((size_t)n, sizeof *docs); /* documents stay until summed */
    one first, cur;
    int rc = labels && spans && docs ? 0 : cli_fail(SONDE_EXIT_FAILED, "out of memory"),
        loaded = 0;
    for (int i = 0; rc == 0 && i < n; i++) {
        one *o = i == 0 ? &first : &cur;
        if ((rc = one_load(env, files[i], o)) != 0) {
            one_free(o);
            break;
        }
        loaded = 1;
        if (i && (rc = clash(cmd, &first, files[0], o, files[i])) != 0) {
            one_free(o);
            break;
        }
        int window = 0;
        if (label)
            snprintf(labels[i], sizeof labels[i], "%s", label);
        else
            window = label_for(o, files[i], labels, spans, i);
        in->kind = o->kind;
        if (o->kind != SONDE_LOADED_PROFILE) {
            docs[i].doc = o->doc; /* moved: freed with docs (first keeps a view) */
            docs[i].has_doc = 1;
            o->has_doc = 0;
            if (i)
                one_free(o);
            continue;
        }
        uint32_t processes = in->p.about.processes;
        if (add_profile(in, o, labels[i]) < 0)
            rc = cli_fail(SONDE_EXIT_FAILED, "out of memory merging '%s'", files[i]);
        else if (window) /* the same processes, later (a child more, maybe) */
            in->p.about.processes = processes > o->p.about.processes ? processes
                                                                     : o->p.about.processes;
        if (i)
            one_free(o);
    }
    if (rc == 0 && in->kind != SONDE_LOADED_PROFILE)
        rc = merge_documents(in, docs, labels, files, n);
    if (rc == 0 && in->kind == SONDE_LOADED_PROFILE && sonde_load_has_tree(&in->p) &&
        (sonde_merge_finish(&in->p) < 0 || sonde_stats_from_profile(&in->s, &in->p) < 0))
        rc = cli_fail(SONDE_EXIT_FAILED, "out of memory");
    for (int i = 0; docs && i < n; i++)
        if (docs[i].has_doc)
            sonde_jtree_free(&docs[i].doc);
    if (loaded)
        one_free(&first);
    free(docs);
    free(spans);
    free(labels);
    return rc;
}

int cli_inputs_load(const sonde_env *env, const char *cmd, char *const *files, int n,
                    const char *label, cli_inputs *in)
{
    memset(in, 0, sizeof *in);
    sonde_stats_init(&in->s);
    sonde_buf_init(&in->text);
    if (sonde_profile_init(&in->p) < 0)
        return cli_fail(SONDE_EXIT_FAILED, "out of memory");
    if (n > 1) {
        in->merged = 1;
        return load_several(env, cmd, files, n, label, in);
    }
    one o;
    int rc = one_load(env, files[0], &o);
    if (rc != 0) {
        one_free(&o);
        return rc;
    }
    in->kind = o.kind;
    sonde_profile_free(&in->p);
    in->p = o.p;
    in->s = o.s;
    in->doc = o.doc;
    return 0;
}

void cli_inputs_free(cli_inputs *in)
{
    sonde_stats_free(&in->s);
    sonde_profile_free(&in->p);
    if (in->kind != SONDE_LOADED_PROFILE)
        sonde_jtree_free(&in->doc);
    sonde_buf_free(&in->text);
    in->kind = SONDE_LOADED_PROFILE;
}

void cli_inputs_title(char *out, size_t outlen, char *const *files, int n)
{
    if (n > 1)
        snprintf(out, outlen, "%s + %d more", files[0], n - 1);
    else
        snprintf(out, outlen, "%s", files[0]);
}
