/* fixture.c - hand-built calling-context trees; see fixture.h. */
#include "fixture.h"

#include <stdlib.h>
#include <string.h>

uint32_t fixture_thread(sonde_profile *p, uint64_t ident, uint64_t native_id,
                        const char *name)
{
    int64_t t = sonde_profile_add_thread(p, ident, native_id, name);
    return p->threads[t].root;
}

uint32_t fixture_node(sonde_profile *p, uint32_t parent, uint32_t func, uint64_t calls,
                      uint64_t total, uint64_t self)
{
    uint32_t n = sonde_profile_add_child(p, parent, NULL, func);
    p->nodes[n].calls = calls;
    p->nodes[n].total = total;
    p->nodes[n].self = self;
    return n;
}

void fixture_app_funcs(sonde_profile *p)
{
    sonde_profile_func(p, "app.py", 1, "main", NULL, SONDE_FUNC_PYTHON);
    sonde_profile_func(p, "app.py", 5, "work", "Worker.work", SONDE_FUNC_PYTHON);
    sonde_profile_func(p, "~", 0, "<built-in method builtins.len>", NULL, SONDE_FUNC_C);
}

void fixture_app(sonde_profile *p, sonde_stats *s)
{
    fixture_app_funcs(p);
    p->seconds_per_tick = 0.25;
    uint32_t root = fixture_thread(p, 1, 100, "MainThread");
    uint32_t work = fixture_node(p, fixture_node(p, root, FIXTURE_MAIN, 1, 40, 10), FIXTURE_WORK,
                                 2, 30, 24);
    fixture_node(p, work, FIXTURE_LEN, 4, 6, 6);
    root = fixture_thread(p, 2, 0, "pool \"A\"");
    fixture_node(p, fixture_node(p, root, FIXTURE_WORK, 1, 8, 6), FIXTURE_WORK, 1, 2, 2);
    sonde_stats_from_profile(s, p);
}

static int compare_lines(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

char *fixture_sorted_lines(const char *text)
{
    size_t len = strlen(text), n = 0;
    char *copy = malloc(len + 1), *out = malloc(len + 1);
    char **lines = malloc((len + 1) * sizeof *lines);
    memcpy(copy, text, len + 1);
    for (char *line = strtok(copy, "\n"); line; line = strtok(NULL, "\n"))
        lines[n++] = line;
    qsort(lines, n, sizeof *lines, compare_lines);
    out[0] = '\0';
    for (size_t i = 0; i < n; i++)
        strcat(strcat(out, lines[i]), "\n");
    free(lines);
    free(copy);
    return out;
}
