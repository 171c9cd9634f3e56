/* thread_filter.c - which threads a sampling command reads; see thread_filter.h. */
#include "thread_filter.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void sonde_thread_filter_init(sonde_thread_filter *f)
{
    memset(f, 0, sizeof *f);
    sonde_u64map_init(&f->decided);
}

void sonde_thread_filter_free(sonde_thread_filter *f)
{
    sonde_u64map_free(&f->decided);
    memset(f, 0, sizeof *f);
}

/* The id an entry names, or 0 when it is a name (not all digits). */
static uint64_t entry_id(const char *name)
{
    uint64_t id = 0;
    for (const char *c = name; *c; c++) {
        if (*c < '0' || *c > '9' || id > UINT32_MAX)
            return 0;
        id = id * 10 + (uint64_t)(*c - '0');
    }
    return id;
}

int sonde_thread_filter_add(sonde_thread_filter *f, const char *name)
{
    if (f->n == SONDE_THREAD_FILTER_MAX || !name[0])
        return -1;
    f->names[f->n++] = name;
    f->python_names |= entry_id(name) == 0;
    return 0;
}

uint64_t sonde_thread_filter_key(uint64_t tstate, uint64_t thread_id, uint64_t tid)
{
    if (!tstate)
        return tid;   /* kernel ids stay below 2^32 */
    return (tstate ^ (thread_id * 0x9e3779b97f4a7c15ull) ^ (tid * 0xc2b2ae3d27d4eb4full)) |
           (1ull << 63);
}

int sonde_thread_filter_known(const sonde_thread_filter *f, uint64_t key)
{
    uint32_t v = sonde_u64map_get(&f->decided, key);
    return v == SONDE_U64MAP_NONE ? -1 : v == 1;
}

/* The kernel's name of thread tid of pid (its comm, at most 15 bytes)
 * into out; "" when it cannot be read. */
static void kernel_name(int pid, uint64_t tid, char *out, size_t outlen)
{
    char path[96];
    snprintf(path, sizeof path, "/proc/%d/task/%llu/comm", pid, (unsigned long long)tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t got = fd >= 0 ? read(fd, out, outlen - 1) : -1;
    if (fd >= 0)
        close(fd);
    out[got > 0 ? got : 0] = '\0';
    out[strcspn(out, "\n")] = '\0';
}

static int matches(const sonde_thread_filter *f, int pid, uint64_t tid, const char *python_name)
{
    char comm[64] = "";
    if (tid)
        kernel_name(pid, tid, comm, sizeof comm);
    for (uint32_t i = 0; i < f->n; i++) {
        uint64_t id = entry_id(f->names[i]);
        if ((id && id == tid) || (!id && comm[0] && strcmp(f->names[i], comm) == 0) ||
            (!id && python_name && strcmp(f->names[i], python_name) == 0))
            return 1;
    }
    return 0;
}

int sonde_thread_filter_decide(sonde_thread_filter *f, int pid, uint64_t key, uint64_t tid,
                               const char *python_name, int final)
{
    int known = sonde_thread_filter_known(f, key);
    if (known >= 0)
        return known;
    int keep = matches(f, pid, tid, python_name);
    if (!keep && !final && !python_name && f->python_names)
        return -1; /* its Python name, once its frames are read, may match */
    uint32_t *slot = sonde_u64map_slot(&f->decided, key, keep ? 1 : 2);
    if (slot) {
        f->seen++;
        f->kept += (uint64_t)keep;
    }
    return keep;
}

void sonde_thread_filter_describe(const sonde_thread_filter *f, char *out, size_t outlen)
{
    size_t at = 0;
    out[0] = '\0';
    for (uint32_t i = 0; i < f->n && at < outlen; i++) {
        int w = snprintf(out + at, outlen - at, "%s%s", i ? ", " : "", f->names[i]);
        if (w < 0)
            break;
        at += (size_t)w;
    }
}
