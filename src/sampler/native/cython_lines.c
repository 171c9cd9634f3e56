/* cython_lines.c - the Cython source line of a generated C line; see cython_lines.h. */
#include "cython_lines.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAME_MAX_LEN 1024   /* bytes of a file name in a marker, at most */

void sonde_cython_lines_free(sonde_cython_lines *t)
{
    for (uint32_t i = 0; i < t->nfiles; i++)
        free(t->files[i]);
    free(t->files);
    free(t->markers);
    free(t->c_path);
    memset(t, 0, sizeof *t);
}

/* The marker on `text`, a line of the C file: `/ * "NAME":LINE` (without
 * the space), after blanks, with nothing but blanks after it.  1 with
 * name (len bytes, not terminated) and line, else 0. */
static int parse_marker(const char *text, size_t len, const char **name, size_t *name_len,
                        uint32_t *line)
{
    size_t i = 0;
    while (i < len && (text[i] == ' ' || text[i] == '\t'))
        i++;
    if (len - i < 4 || memcmp(text + i, "/* \"", 4) != 0)
        return 0;
    i += 4;
    size_t start = i;
    while (i < len && text[i] != '"' && i - start < NAME_MAX_LEN)
        i++;
    if (i == start || i >= len || text[i] != '"' || i + 1 >= len || text[i + 1] != ':')
        return 0;
    *name = text + start;
    *name_len = i - start;
    i += 2;
    uint64_t v = 0;
    size_t digits = i;
    while (i < len && text[i] >= '0' && text[i] <= '9' && v <= UINT32_MAX)
        v = v * 10 + (uint64_t)(text[i++] - '0');
    if (i == digits || v == 0 || v > UINT32_MAX)
        return 0;
    while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r' || text[i] == '\n'))
        i++;
    *line = (uint32_t)v;
    return i == len;
}

/* The index of the file named name in t, added when new; UINT32_MAX on out
 * of memory.  Markers name one file or a few: a look back suffices. */
static uint32_t file_index(sonde_cython_lines *t, const char *name, size_t len)
{
    for (uint32_t i = t->nfiles; i-- > 0;)
        if (strlen(t->files[i]) == len && memcmp(t->files[i], name, len) == 0)
            return i;
    char **more = realloc(t->files, ((size_t)t->nfiles + 1) * sizeof *more);
    char *copy = more ? strndup(name, len) : NULL;
    if (more)
        t->files = more;
    if (!copy)
        return UINT32_MAX;
    t->files[t->nfiles] = copy;
    return t->nfiles++;
}

static int add_marker(sonde_cython_lines *t, size_t *cap, sonde_cython_marker m)
{
    if (t->n == *cap) {
        size_t want = *cap ? *cap * 2 : 256;
        sonde_cython_marker *more = realloc(t->markers, want * sizeof *more);
        if (!more)
            return -1;
        t->markers = more;
        *cap = want;
    }
    t->markers[t->n++] = m;
    return 0;
}

int sonde_cython_lines_load(sonde_cython_lines *t, const char *c_path, const char *open_path)
{
    sonde_cython_lines_free(t);
    if (!(t->c_path = strdup(c_path)))
        return -1;
    FILE *f = fopen(open_path, "re");
    if (!f)
        return -1;
    char *text = NULL;
    size_t text_cap = 0, cap = 0, read_bytes = 0;
    ssize_t got;
    uint32_t c_line = 0;
    int rc = 0;
    while (rc == 0 && (got = getline(&text, &text_cap, f)) > 0) {
        read_bytes += (size_t)got;
        if (read_bytes > SONDE_CYTHON_C_MAX || ++c_line == UINT32_MAX) {
            rc = -1;
            break;
        }
        const char *name;
        size_t name_len;
        uint32_t line;
        if (!parse_marker(text, (size_t)got, &name, &name_len, &line))
            continue;
        uint32_t file = file_index(t, name, name_len);
        if (file == UINT32_MAX || t->n == SONDE_CYTHON_MARKERS_MAX ||
            add_marker(t, &cap, (sonde_cython_marker){ c_line, line, file }) < 0)
            rc = -1;
    }
    free(text);
    fclose(f);
    if (rc < 0 || t->n == 0) {
        char *path = t->c_path;
        t->c_path = NULL;
        sonde_cython_lines_free(t);
        t->c_path = path; /* tried: not asked again */
        return -1;
    }
    return 0;
}

int sonde_cython_lines_find(const sonde_cython_lines *t, uint32_t c_line, const char **file,
                            int *line)
{
    /* the last marker at or before c_line (markers are in line order) */
    uint32_t lo = 0, hi = t->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (t->markers[mid].c_line <= c_line)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return 0;
    const sonde_cython_marker *m = &t->markers[lo - 1];
    *file = t->files[m->file];
    *line = m->line <= INT32_MAX ? (int)m->line : 0;
    return *line > 0;
}
