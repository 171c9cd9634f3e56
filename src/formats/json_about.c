/* json_about.c - a run's "about" in sonde's JSON; see json_about.h. */
#include "json_about.h"

#include <stdio.h>
#include <string.h>

#include "doc.h"

void sonde_json_about_write(sonde_buf *b, const sonde_about *a, int pid)
{
    const char *sep = "";
    sonde_buf_puts(b, "{");
    if (a->argc) {
        sonde_buf_puts(b, DOC_KEY(DOC_ARGV) "[");
        for (uint32_t i = 0; i < a->argc; i++) {
            sonde_buf_puts(b, i ? ", " : "");
            sonde_buf_json_str(b, a->argv[i]);
        }
        sonde_buf_puts(b, "]");
        sep = ", ";
    }
    const struct { const char *key, *value; } texts[] = {
        { DOC_EXECUTABLE, a->executable }, { DOC_PYTHON_VERSION, a->version },
        { DOC_VERDICT, a->verdict }, { DOC_CWD, a->cwd },
    };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        if (!texts[i].value)
            continue;
        sonde_buf_printf(b, "%s\"%s\": ", sep, texts[i].key);
        sonde_buf_json_str(b, texts[i].value);
        sep = ", ";
    }
    if (a->start_ns > 0) {
        char when[SONDE_ABOUT_TIME_LEN];
        sonde_about_time_format(a->start_ns, when);
        sonde_buf_printf(b, "%s" DOC_KEY(DOC_START) "\"%s\"", sep, when);
        sep = ", ";
    }
    const struct { const char *key; double value; } figures[] = {
        { DOC_WALL_S, a->wall }, { DOC_CPU_S, a->cpu },
    };
    for (size_t i = 0; i < sizeof figures / sizeof figures[0]; i++) {
        if (!(figures[i].value >= 0))
            continue;
        sonde_buf_printf(b, "%s\"%s\": ", sep, figures[i].key);
        sonde_buf_num(b, figures[i].value);
        sep = ", ";
    }
    if (a->processes) {
        sonde_buf_printf(b, "%s" DOC_KEY(DOC_PROCESSES) "%u", sep, a->processes);
        sep = ", ";
    }
    if (pid > 0)
        sonde_buf_printf(b, "%s" DOC_KEY(DOC_PID) "%d", sep, pid);
    sonde_buf_puts(b, "}");
}

/* The string member key of obj into *field when present.  0, or -1 when
 * it is not a string. */
static int read_text(const sonde_jtree *t, const sonde_jval *obj, const char *key, char **field,
                     char *err, size_t errlen)
{
    const sonde_jval *v = sonde_json_get(t, obj, key);
    if (!v)
        return 0;
    if (v->type != SONDE_J_STR) {
        snprintf(err, errlen, "\"about\": \"%s\" is not a string", key);
        return -1;
    }
    if (sonde_about_set(field, sonde_json_str(t, v), v->len) < 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    return 0;
}

/* The number member key of obj, within [0, most], into *out when
 * present.  0, or -1 when it is not such a number. */
static int read_figure(const sonde_jtree *t, const sonde_jval *obj, const char *key, double most,
                       double *out, char *err, size_t errlen)
{
    const sonde_jval *v = sonde_json_get(t, obj, key);
    if (!v)
        return 0;
    if (v->type != SONDE_J_NUM || !(v->num >= 0 && v->num <= most)) {
        snprintf(err, errlen, "\"about\": \"%s\" is not a number from 0 to %.0f", key, most);
        return -1;
    }
    *out = v->num;
    return 0;
}

static int read_argv(const sonde_jtree *t, const sonde_jval *about, sonde_about *a, char *err,
                     size_t errlen)
{
    const sonde_jval *argv = sonde_json_get(t, about, DOC_ARGV);
    if (!argv)
        return 0;
    for (uint32_t i = 0; argv->type == SONDE_J_ARR && i < argv->len; i++) {
        const sonde_jval *arg = sonde_json_item(t, argv, i);
        if (arg->type != SONDE_J_STR)
            break;
        if (sonde_about_add_arg(a, sonde_json_str(t, arg), arg->len) < 0) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
    }
    if (argv->type != SONDE_J_ARR || a->argc != (argv->len < SONDE_ABOUT_MAX_ARGS
                                                     ? argv->len : SONDE_ABOUT_MAX_ARGS)) {
        snprintf(err, errlen, "\"about\": \"%s\" is not a list of strings", DOC_ARGV);
        return -1;
    }
    return 0;
}

int sonde_json_about_read(const sonde_jtree *t, const sonde_jval *root, sonde_about *a, int *pid,
                          char *err, size_t errlen)
{
    const sonde_jval *about = sonde_json_get(t, root, DOC_ABOUT);
    if (!about)
        return 0;
    if (about->type != SONDE_J_OBJ) {
        snprintf(err, errlen, "\"about\" is not an object");
        return -1;
    }
    double processes = 0, process = 0;
    if (read_argv(t, about, a, err, errlen) < 0 ||
        read_text(t, about, DOC_EXECUTABLE, &a->executable, err, errlen) < 0 ||
        read_text(t, about, DOC_PYTHON_VERSION, &a->version, err, errlen) < 0 ||
        read_text(t, about, DOC_VERDICT, &a->verdict, err, errlen) < 0 ||
        read_text(t, about, DOC_CWD, &a->cwd, err, errlen) < 0 ||
        read_figure(t, about, DOC_WALL_S, 1e9, &a->wall, err, errlen) < 0 ||
        read_figure(t, about, DOC_CPU_S, 1e9, &a->cpu, err, errlen) < 0 ||
        read_figure(t, about, DOC_PROCESSES, 1e6, &processes, err, errlen) < 0 ||
        read_figure(t, about, DOC_PID, 4194304, &process, err, errlen) < 0)
        return -1;
    a->processes = (uint32_t)processes;
    if (pid && process >= 1)
        *pid = (int)process;
    const sonde_jval *start = sonde_json_get(t, about, DOC_START);
    if (start && sonde_about_time_parse(sonde_json_str(t, start), &a->start_ns) < 0) {
        snprintf(err, errlen, "\"about\": \"%s\" is not a time such as "
                 "2026-11-26T17:22:08.123456Z", DOC_START);
        return -1;
    }
    return 0;
}

void sonde_json_about_insert(sonde_buf *b, const char *text, size_t len, const sonde_about *a,
                             int pid)
{
    size_t head = sonde_doc_envelope_len(text, len);
    sonde_buf_put(b, text, head);
    if (head) {
        sonde_buf_puts(b, ", " DOC_KEY(DOC_ABOUT));
        sonde_json_about_write(b, a, pid);
    }
    sonde_buf_put(b, text + head, len - head);
}
