/* maps.c - parsing /proc/PID/maps; see maps.h. */
#include "maps.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "../../core/grow.h"

/* Reads a whole /proc file (whose size stat cannot tell) into a malloc'd,
 * NUL-terminated buffer of at most max bytes. */
static int slurp(const char *path, size_t max, char **out, size_t *outlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    size_t len = 0, cap = 64 * 1024;
    char *buf = malloc(cap);
    int rc = buf ? 0 : -ENOMEM;
    while (rc == 0) {
        if (len + 1 == cap) {
            char *bigger = cap >= max ? NULL : sonde_grow(buf, &cap, cap + 1, 1, max);
            if (!bigger) {
                rc = cap >= max ? -E2BIG : -ENOMEM;
                break;
            }
            buf = bigger;
        }
        ssize_t n = read(fd, buf + len, cap - 1 - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            rc = -errno;
        else if (n == 0)
            break;
        else
            len += (size_t)n;
    }
    close(fd);
    if (rc < 0) {
        free(buf);
        return rc;
    }
    buf[len] = '\0';
    *out = buf;
    *outlen = len;
    return 0;
}

/* Reads up to max_digits digits of base 16 or 10 at *p; -1 when none. */
static int number(char **p, int base, int max_digits, uint64_t *out)
{
    uint64_t v = 0;
    int n = 0;
    for (;; n++) {
        char c = (*p)[n];
        int d;
        if (c >= '0' && c <= '9')
            d = c - '0';
        else if (base == 16 && c >= 'a' && c <= 'f')
            d = c - 'a' + 10;
        else
            break;
        if (n == max_digits)
            return -1;
        v = v * (uint64_t)base + (uint64_t)d;
    }
    if (n == 0)
        return -1;
    *p += n;
    *out = v;
    return 0;
}

static int expect(char **p, char c)
{
    if (**p != c)
        return -1;
    (*p)++;
    return 0;
}

/* Undoes the kernel's "\012" escape for a newline in a path, in place. */
static void unescape_newlines(char *s)
{
    char *w = s;
    for (const char *r = s; *r;) {
        if (strncmp(r, "\\012", 4) == 0) {
            *w++ = '\n';
            r += 4;
        } else {
            *w++ = *r++;
        }
    }
    *w = '\0';
}

/* "start-end perms offset major:minor inode   path", NUL-terminated. */
static int parse_line(char *line, sonde_map *m)
{
    char *p = line;
    uint64_t major, minor, inode;
    if (number(&p, 16, 16, &m->start) || expect(&p, '-') || number(&p, 16, 16, &m->end) ||
        expect(&p, ' ') || m->start >= m->end)
        return -1;
    for (int i = 0; i < 4; i++) {
        if (!p[i] || p[i] == ' ')
            return -1;
        m->perms[i] = p[i];
    }
    m->perms[4] = '\0';
    p += 4;
    if (expect(&p, ' ') || number(&p, 16, 16, &m->offset) || expect(&p, ' ') ||
        number(&p, 16, 8, &major) || expect(&p, ':') || number(&p, 16, 8, &minor) ||
        expect(&p, ' ') || number(&p, 10, 20, &inode))
        return -1;
    m->dev = makedev((unsigned)major, (unsigned)minor);
    m->inode = inode;
    if (*p && *p != ' ')
        return -1;
    while (*p == ' ')
        p++;
    static const char deleted[] = " (deleted)";
    size_t n = strlen(p), dn = sizeof deleted - 1;
    m->deleted = n > dn && strcmp(p + n - dn, deleted) == 0;
    if (m->deleted)
        p[n - dn] = '\0';
    unescape_newlines(p);
    m->path = p;
    return 0;
}

int sonde_maps_parse(sonde_maps *m, const char *text, size_t len)
{
    memset(m, 0, sizeof *m);
    if (len > SONDE_MAPS_MAX_TEXT)
        return -E2BIG;
    size_t lines = 0;
    for (size_t i = 0; i < len; i++)
        lines += text[i] == '\n' || i + 1 == len;
    if (lines > SONDE_MAPS_MAX_ENTRIES)
        return -E2BIG;
    m->text = malloc(len + 1);
    m->v = calloc(lines ? lines : 1, sizeof *m->v);
    if (!m->text || !m->v) {
        sonde_maps_free(m);
        return -ENOMEM;
    }
    memcpy(m->text, text, len);
    m->text[len] = '\0';
    for (char *line = m->text; *line;) {
        char *nl = strchr(line, '\n');
        char *next = nl ? nl + 1 : line + strlen(line);
        if (nl)
            *nl = '\0';
        /* An embedded NUL ends the text early: count stays within lines. */
        if (parse_line(line, &m->v[m->count]) < 0) {
            sonde_maps_free(m);
            return -EINVAL;
        }
        m->count++;
        line = next;
    }
    return 0;
}

int sonde_maps_read(int pid, sonde_maps *m)
{
    memset(m, 0, sizeof *m);
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/maps", pid);
    char *text = NULL;
    size_t len = 0;
    int rc = slurp(path, SONDE_MAPS_MAX_TEXT, &text, &len);
    if (rc < 0)
        return rc;
    rc = sonde_maps_parse(m, text, len);
    free(text);
    return rc;
}

void sonde_maps_free(sonde_maps *m)
{
    free(m->v);
    free(m->text);
    memset(m, 0, sizeof *m);
}

/* 2 when path is the file of device dev and inode ino, 1 when only the inode is, else 0. */
static int same_file(const char *path, uint64_t dev, uint64_t ino)
{
    struct stat st;
    if (stat(path, &st) < 0 || (uint64_t)st.st_ino != ino)
        return 0;
    return (uint64_t)st.st_dev == dev ? 2 : 1;
}

int sonde_maps_file(int pid, const sonde_map *m, char *out, size_t outlen)
{
    if (m->deleted) {
        int n = snprintf(out, outlen, "/proc/%d/map_files/%llx-%llx", pid,
                         (unsigned long long)m->start, (unsigned long long)m->end);
        return n < 0 || (size_t)n >= outlen ? -ENAMETOOLONG : 0;
    }
    /* The process's root as this one sees it, and the path less it: a file of a mount the
     * target's namespace alone has is named through the mount point in that namespace. */
    char root[PATH_MAX], link[PATH_MAX];
    snprintf(root, sizeof root, "/proc/%d/root", pid);
    ssize_t len = readlink(root, link, sizeof link - 1);
    link[len > 0 ? len : 0] = '\0';
    const char *inside = NULL;
    if (len > 1 && strncmp(m->path, link, (size_t)len) == 0 && m->path[len] == '/')
        inside = m->path + len;
    char candidates[3][PATH_MAX + 64];
    int n = 0;
    snprintf(candidates[n++], sizeof candidates[0], "%s%s", root, m->path);
    if (m->path[0] == '/')
        snprintf(candidates[n++], sizeof candidates[0], "%s", m->path);
    if (inside)
        snprintf(candidates[n++], sizeof candidates[0], "%s%s", root, inside);
    int best = 0, best_match = -1;
    for (int i = 0; i < n; i++) {
        int match = same_file(candidates[i], m->dev, m->inode);
        if (match > best_match) {
            best = i;
            best_match = match;
        }
    }
    if (strlen(candidates[best]) >= outlen)
        return -ENAMETOOLONG;
    snprintf(out, outlen, "%s", candidates[best]);
    return 0;
}

const sonde_map *sonde_maps_find_base(const sonde_maps *m, const char *path)
{
    for (size_t i = 0; i < m->count; i++)
        if (m->v[i].offset == 0 && strcmp(m->v[i].path, path) == 0)
            return &m->v[i];
    return NULL;
}

static uint64_t hash_path(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;   /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
    return h;
}

/* The slot of path in the table of nslots (a power of two, never full):
 * the one holding an offset-0 mapping of path, or the empty one it would go in. */
static uint32_t slot_of(const sonde_maps *m, const uint32_t *table, uint32_t nslots,
                        const char *path)
{
    uint32_t mask = nslots - 1, i = (uint32_t)hash_path(path) & mask;
    while (table[i] != SONDE_MAPS_NO_BASE && strcmp(m->v[table[i]].path, path) != 0)
        i = (i + 1) & mask;
    return i;
}

int sonde_maps_bases(const sonde_maps *m, uint32_t *base)
{
    uint32_t nslots = 64;   /* at least twice the mappings: count <= SONDE_MAPS_MAX_ENTRIES */
    while (nslots < 2 * m->count)
        nslots *= 2;
    uint32_t *table = malloc(nslots * sizeof *table);
    if (!table)
        return -ENOMEM;
    memset(table, 0xff, nslots * sizeof *table);   /* SONDE_MAPS_NO_BASE */
    for (size_t i = 0; i < m->count; i++)          /* the first one of each path */
        if (m->v[i].offset == 0 && m->v[i].path[0]) {
            uint32_t s = slot_of(m, table, nslots, m->v[i].path);
            if (table[s] == SONDE_MAPS_NO_BASE)
                table[s] = (uint32_t)i;
        }
    for (size_t i = 0; i < m->count; i++)
        base[i] = m->v[i].path[0] ? table[slot_of(m, table, nslots, m->v[i].path)]
                                  : SONDE_MAPS_NO_BASE;
    /* The nearest one before, where there is one: the file mapped again
     * read-only (by a reader of it, as sonde itself) is another load. */
    memset(table, 0xff, nslots * sizeof *table);
    for (size_t i = 0; i < m->count; i++) {
        if (!m->v[i].path[0])
            continue;
        uint32_t s = slot_of(m, table, nslots, m->v[i].path);
        if (m->v[i].offset == 0)
            table[s] = (uint32_t)i;
        if (table[s] != SONDE_MAPS_NO_BASE)
            base[i] = table[s];
    }
    free(table);
    return 0;
}
