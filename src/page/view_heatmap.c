/* view_heatmap.c - the source heatmap's data in sonde view's page; see
 * view_heatmap.h. */
#include "view_heatmap.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/grow.h"
#include "../core/u64map.h"

/* One line of one file: its samples. */
typedef struct cell {
    uint32_t file;       /* string id */
    int32_t line;
    uint64_t self, total;
} cell;

/* 1 when path lies in a site-packages or dist-packages folder. */
static int in_site_packages(const char *path)
{
    return strstr(path, "/site-packages/") || strstr(path, "/dist-packages/");
}

/* 1 when path is a file of the interpreter's library, site-packages or
 * frozen code: the path rule of the page's "only my code" (viewer.js). */
static int is_library(const char *path)
{
    if (path[0] == '<' || strcmp(path, "~") == 0 || in_site_packages(path))
        return 1;
    for (const char *at = strstr(path, "/lib/python"); at; at = strstr(at + 1, "/lib/python")) {
        const char *v = at + strlen("/lib/python");
        while ((*v >= '0' && *v <= '9') || *v == '.')
            v++;
        if (*v == '/')
            return 1;
    }
    return 0;
}

/* A node's (file, line): what the frames above it are compared by. */
static uint64_t line_key(const sonde_profile *p, uint32_t node)
{
    return (uint64_t)p->funcs[p->nodes[node].func].file << 32 | (uint32_t)p->nodes[node].line;
}

/* The first node of a sibling list from c on (c included) that has a
 * function, or SONDE_NO_NODE: a node without one starts a tree of its own. */
static uint32_t framed(const sonde_profile *p, uint32_t c)
{
    while (c != SONDE_NO_NODE && p->nodes[c].func == SONDE_NO_FUNC)
        c = p->nodes[c].next_sibling;
    return c;
}

/* Counts node (a frame entered: repeated[node] says whether its line was
 * already on the path) or uncounts it (left) in on_path.  0, or -1 on out
 * of memory. */
static int count_on_path(const sonde_profile *p, sonde_u64map *on_path, uint32_t node,
                         int entered, uint8_t *repeated)
{
    if (p->nodes[node].func == SONDE_NO_FUNC)
        return 0;
    uint32_t *count = sonde_u64map_slot(on_path, line_key(p, node), 0);
    if (!count)
        return -1;
    if (entered) {
        repeated[node] = *count > 0;
        ++*count;
    } else {
        --*count;
    }
    return 0;
}

/* Walks the tree under start (its frames down to the next frame without a
 * function), depth first without recursion, keeping in on_path how many
 * frames of the path from start hold each (file, line).  0, or -1. */
static int walk_tree(const sonde_profile *p, uint32_t start, sonde_u64map *on_path,
                     uint8_t *repeated)
{
    uint32_t at = start;
    if (count_on_path(p, on_path, at, 1, repeated) < 0)
        return -1;
    for (;;) {
        uint32_t down = framed(p, p->nodes[at].first_child);
        while (down == SONDE_NO_NODE) {
            if (count_on_path(p, on_path, at, 0, repeated) < 0)
                return -1;
            if (at == start)
                return 0;
            down = framed(p, p->nodes[at].next_sibling);
            at = p->nodes[at].parent;
        }
        at = down;
        if (count_on_path(p, on_path, at, 1, repeated) < 0)
            return -1;
    }
}

/* For each node, 1 when a frame above it (towards its thread's root, up
 * to the first frame without a function) is at the same file and line:
 * its samples are already in that line's total.  One walk down each tree,
 * linear in nodes (a deep recursion costs no more than a wide profile).
 * malloc'd (caller frees), or NULL on out of memory. */
static uint8_t *lines_repeated(const sonde_profile *p)
{
    uint8_t *repeated = calloc(p->nnodes, 1);
    sonde_u64map on_path; /* line_key -> frames of the path walked at it */
    sonde_u64map_init(&on_path);
    for (uint32_t i = 1; repeated && i < p->nnodes; i++) {
        const sonde_node *nd = &p->nodes[i];
        if ((nd->func == SONDE_NO_FUNC || nd->parent == SONDE_NO_NODE) &&
            walk_tree(p, i, &on_path, repeated) < 0) {
            free(repeated);
            repeated = NULL;
        }
    }
    sonde_u64map_free(&on_path);
    return repeated;
}

/* Every (file, line) of a Python frame with samples, into *out (by file,
 * then line).  0, or -1 on out of memory. */
static int count_lines(const sonde_profile *p, cell **out, uint32_t *count)
{
    sonde_u64map index; /* file << 32 | line -> cell */
    sonde_u64map_init(&index);
    cell *cells = NULL;
    size_t cap = 0;
    uint32_t n = 0;
    uint8_t *repeated = lines_repeated(p);
    int rc = repeated ? 0 : -1;
    for (uint32_t i = 1; rc == 0 && i < p->nnodes; i++) {
        const sonde_node *nd = &p->nodes[i];
        if (nd->func == SONDE_NO_FUNC || nd->line <= 0 || !nd->total ||
            p->funcs[nd->func].kind != SONDE_FUNC_PYTHON)
            continue;
        uint32_t file = p->funcs[nd->func].file;
        uint32_t *slot = sonde_u64map_slot(&index, (uint64_t)file << 32 | (uint32_t)nd->line, n);
        cell *grown = slot && *slot == n ? sonde_grow(cells, &cap, (size_t)n + 1, sizeof *cells,
                                                      UINT32_MAX - 1) : cells;
        if (!slot || !grown) {
            rc = -1;
            break;
        }
        cells = grown;
        if (*slot == n)
            cells[n++] = (cell){ .file = file, .line = nd->line };
        cells[*slot].self += nd->self;
        if (!repeated[i])
            cells[*slot].total += nd->total;
    }
    free(repeated);
    sonde_u64map_free(&index);
    *out = cells;
    *count = n;
    return rc;
}

static int by_file_and_line(const void *a, const void *b)
{
    const cell *x = a, *y = b;
    if (x->file != y->file)
        return x->file < y->file ? -1 : 1;
    return x->line < y->line ? -1 : x->line > y->line;
}

/* The folders whose files are the program's own (view_heatmap.h), as
 * real paths; "" for one not known. */
typedef struct own_folders {
    const char *cwd;          /* the recorded working directory (absolute), or NULL */
    char real_cwd[PATH_MAX];
    char script[PATH_MAX];    /* the folder of the script the command line ran */
    const char *why;          /* why no file is embedded, or NULL */
} own_folders;

/* path (relative ones from the recorded cwd) into out.  0, or -1 when it
 * does not fit or is relative without a cwd. */
static int from_cwd(const own_folders *o, const char *path, char *out, size_t outlen)
{
    int n = path[0] == '/' ? snprintf(out, outlen, "%s", path)
            : o->cwd ? snprintf(out, outlen, "%s/%s", o->cwd, path) : -1;
    return n >= 0 && (size_t)n < outlen ? 0 : -1;
}

static int ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), t = strlen(tail);
    return n >= t && strcmp(s + n - t, tail) == 0;
}

/* The program's folders from what the profile recorded: its cwd, and the
 * folder of the first argument of its command line ending in .py. */
static void find_folders(const sonde_about *a, own_folders *o)
{
    char path[PATH_MAX];
    memset(o, 0, sizeof *o);
    if (!a->cwd) {
        o->why = "no working directory recorded";
        return;
    }
    if (a->cwd[0] == '/') {
        o->cwd = a->cwd;
        if (!realpath(a->cwd, o->real_cwd))
            o->real_cwd[0] = '\0';
    }
    for (uint32_t i = 0; i < a->argc; i++) {
        if (!ends_with(a->argv[i], ".py"))
            continue;
        char *slash;
        if (from_cwd(o, a->argv[i], path, sizeof path) == 0 && (slash = strrchr(path, '/'))) {
            slash[slash == path] = '\0'; /* "/x.py": "/" */
            if (!realpath(path, o->script))
                o->script[0] = '\0';
        }
        break;
    }
    if (!o->real_cwd[0] && !o->script[0])
        o->why = "working directory not found";
}

/* 1 when real (a real path) lies under folder (one too; "" is none). */
static int under(const char *real, const char *folder)
{
    size_t n = strlen(folder);
    if (!n)
        return 0;
    if (strcmp(folder, "/") == 0)
        return real[0] == '/';
    return strncmp(real, folder, n) == 0 && real[n] == '/';
}

/* The real path of the file a frame names, when it is a .py file of a
 * site-packages folder (view_heatmap.h), into real; else NULL with *why. */
static const char *site_packages_file(const own_folders *o, const char *path, char *real,
                                      const char **why)
{
    char joined[PATH_MAX];
    *why = "unreadable";
    if (from_cwd(o, path, joined, sizeof joined) < 0 || !realpath(joined, real))
        return NULL;
    if (!ends_with(real, ".py") || !in_site_packages(real)) {
        *why = "library"; /* a link out of site-packages */
        return NULL;
    }
    return real;
}

/* The real path of the file a frame names, when it is one of the
 * program's own files (view_heatmap.h), into real; else NULL with *why. */
static const char *own_file(const own_folders *o, const char *path, char *real,
                            const char **why)
{
    char joined[PATH_MAX];
    if (o->why) {
        *why = o->why;
        return NULL;
    }
    if (!ends_with(path, ".py")) {
        *why = "not a .py file";
        return NULL;
    }
    if (from_cwd(o, path, joined, sizeof joined) < 0 || !realpath(joined, real)) {
        *why = "unreadable";
        return NULL;
    }
    if (!under(real, o->real_cwd) && !under(real, o->script)) {
        *why = "outside the program's folders";
        return NULL;
    }
    return real;
}

/* The text of a regular file of at most SONDE_VIEW_SOURCE_MAX_BYTES (NUL
 * added), or NULL with *why set.  real is a real path: opened without
 * following a link (one put there since is refused) and without blocking
 * (a FIFO is refused, not waited on); the file opened must be at real. */
static char *read_source(const char *real, size_t *len, const char **why)
{
    int fd = open(real, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
    struct stat st;
    char *text = NULL, link[64], at[PATH_MAX];
    *why = "unreadable";
    if (fd < 0)
        return NULL;
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, at, sizeof at - 1);
    if (n <= 0 || (size_t)n != strlen(real) || memcmp(at, real, (size_t)n) != 0) {
        *why = "outside the program's folders"; /* a folder above was swapped meanwhile */
        close(fd);
        return NULL;
    }
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
        if ((unsigned long long)st.st_size > SONDE_VIEW_SOURCE_MAX_BYTES)
            *why = "too large";
        else if ((text = malloc((size_t)st.st_size + 1)) != NULL) {
            size_t got = 0;
            ssize_t r;
            while (got < (size_t)st.st_size &&
                   (r = read(fd, text + got, (size_t)st.st_size - got)) > 0)
                got += (size_t)r;
            text[got] = '\0';
            *len = got;
        }
    }
    close(fd);
    return text;
}

/* "source": the file's lines as strings (a NUL inside a line ends it). */
static void put_source(sonde_buf *b, char *text, size_t len)
{
    sonde_buf_puts(b, ", \"source\": [");
    for (size_t at = 0, k = 0; at < len; k++) {
        char *end = memchr(text + at, '\n', len - at);
        size_t stop = end ? (size_t)(end - text) : len;
        size_t cut = stop > at && text[stop - 1] == '\r' ? stop - 1 : stop;
        char keep = text[cut];
        text[cut] = '\0';
        sonde_buf_puts(b, k ? (k % 8 ? "," : ",\n") : "");
        sonde_buf_json_str(b, text + at);
        text[cut] = keep;
        at = stop + 1;
    }
    sonde_buf_putc(b, ']');
}

/* Ticks as samples: ticks are samples, or (record --mode cpu) CPU ns,
 * counted here in sampling periods. */
static uint64_t samples_in(const sonde_profile *p, uint64_t ticks)
{
    return sonde_profile_ticks_in(p, ticks, 1 / p->sample_rate);
}

/* One file's entry, its cells c[0..n); *budget the source bytes the page
 * may still take. */
static void put_file(sonde_buf *b, const sonde_profile *p, const own_folders *own, uint32_t func,
                     const cell *c, uint32_t n, int site_packages, size_t *budget)
{
    const char *path = sonde_profile_str(p, c[0].file), *why = "library", *real;
    char real_path[PATH_MAX];
    sonde_buf_printf(b, "{\"func\": %u, \"lines\": [", func);
    for (uint32_t i = 0; i < n; i++)
        sonde_buf_printf(b, "%s[%d,%llu,%llu]", i ? "," : "", c[i].line,
                         (unsigned long long)samples_in(p, c[i].self),
                         (unsigned long long)samples_in(p, c[i].total));
    sonde_buf_putc(b, ']');
    size_t len = 0;
    if (!is_library(path))
        real = own_file(own, path, real_path, &why);
    else if (site_packages && path[0] == '/' && in_site_packages(path))
        real = site_packages_file(own, path, real_path, &why);
    else
        real = NULL;
    char *text = real ? read_source(real, &len, &why) : NULL;
    if (text && len > *budget) {
        why = "page full";
        free(text);
        text = NULL;
    }
    if (text) {
        *budget -= len;
        put_source(b, text, len);
    } else {
        sonde_buf_puts(b, ", \"left_out\": ");
        sonde_buf_json_str(b, why);
    }
    free(text);
    sonde_buf_putc(b, '}');
}

int sonde_view_heatmap_put(sonde_buf *b, const sonde_profile *p, int site_packages)
{
    if (!(p->sample_rate > 0))
        return 0;
    cell *cells;
    uint32_t n;
    sonde_u64map files; /* a file's string id -> the first function of it */
    sonde_u64map_init(&files);
    int rc = count_lines(p, &cells, &n);
    if (rc == 0 && n) {
        qsort(cells, n, sizeof *cells, by_file_and_line);
        for (uint32_t f = 0; rc == 0 && f < p->nfuncs; f++)
            rc = sonde_u64map_slot(&files, p->funcs[f].file, f) ? 0 : -1;
        uint64_t samples = 0;
        for (uint32_t i = 1; i < p->nnodes; i++)
            samples += p->nodes[i].self;
        sonde_buf_printf(b, ",\n\"heatmap\": {\"samples\": %llu, \"max_bytes\": %u, \"files\": [",
                         (unsigned long long)samples_in(p, samples), SONDE_VIEW_SOURCE_MAX_BYTES);
        size_t budget = SONDE_VIEW_SOURCES_MAX_BYTES;
        own_folders own;
        find_folders(&p->about, &own);
        for (uint32_t i = 0, j; rc == 0 && i < n; i = j) {
            for (j = i + 1; j < n && cells[j].file == cells[i].file; j++)
                ;
            sonde_buf_puts(b, i ? ",\n" : "\n");
            put_file(b, p, &own, sonde_u64map_get(&files, cells[i].file), &cells[i], j - i,
                     site_packages, &budget);
        }
        sonde_buf_puts(b, "]}");
    }
    free(cells);
    sonde_u64map_free(&files);
    return rc;
}
