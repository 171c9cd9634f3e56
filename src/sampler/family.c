/* family.c - following a process's Python descendants; see family.h. */
#include "family.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proc/maps.h"

/* Where the member's interpreter file is mapped now (0 when not at all). */
static uint64_t image_of(int pid, const char *path)
{
    sonde_maps m;
    if (sonde_maps_read(pid, &m) < 0)
        return 0;
    const sonde_map *base = sonde_maps_find_base(&m, path);
    uint64_t start = base ? base->start : 0;
    sonde_maps_free(&m);
    return start;
}

/* "process PID (command line)", on one line (arguments can hold newlines,
 * which would break line-based formats) and at most 80 characters of it. */
static void label_of(int pid, char *out, size_t outlen)
{
    char path[64], cmd[84] = "";
    snprintf(path, sizeof path, "/proc/%d/cmdline", pid);
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(cmd, 1, sizeof cmd - 1, f) : 0;
    if (f)
        fclose(f);
    while (n > 0 && cmd[n - 1] == '\0')
        n--;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)cmd[i] < 0x20)
            cmd[i] = ' ';
    if (n > 80)
        memcpy(cmd + 77, "...", 4);
    else
        cmd[n] = '\0';
    snprintf(out, outlen, "process %d (%s)", pid, cmd);
}

void sonde_family_init(sonde_family *f, sonde_walker *main, sonde_profile *profile)
{
    memset(f, 0, sizeof *f);
    f->profile = profile;
    sonde_family_member *m = &f->members[f->count++];
    m->walker = main;
    m->pid = main->proc.pid;
    m->image = image_of(m->pid, main->runtime.path);
    label_of(m->pid, m->label, sizeof m->label);
}

static int known(const sonde_family *f, int pid)
{
    for (uint32_t i = 0; i < f->count; i++)
        if (f->members[i].pid == pid)
            return 1;
    for (uint32_t i = 0; i < f->ntried; i++)
        if (f->tried[i] == pid)
            return 1;
    return 0;
}

static void try_join(sonde_family *f, int pid)
{
    if (f->count == SONDE_FAMILY_MAX || known(f, pid))
        return;
    sonde_walker *w = malloc(sizeof *w);
    char err[256];
    if (!w)
        return;
    if (sonde_walker_open(w, pid, f->profile, err, sizeof err) < 0) {
        sonde_walker_close(w);
        free(w);
        if (f->ntried < sizeof f->tried / sizeof f->tried[0])
            f->tried[f->ntried++] = pid; /* not Python, or not yet: see refresh */
        return;
    }
    sonde_family_member *m = &f->members[f->count++];
    m->walker = w;
    m->pid = pid;
    m->image = image_of(pid, w->runtime.path);
    label_of(pid, m->label, sizeof m->label);
}

/* Adds the children of every thread of pid to the family. */
static void join_children(sonde_family *f, int pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", pid);
    DIR *tasks = opendir(path);
    if (!tasks)
        return;
    struct dirent *t;
    uint32_t seen = 0;
    while ((t = readdir(tasks)) && seen++ < SONDE_WALK_MAX_THREADS + 2) {
        if (t->d_name[0] == '.')
            continue;
        char children[128];
        snprintf(children, sizeof children, "/proc/%d/task/%.16s/children", pid, t->d_name);
        FILE *c = fopen(children, "r");
        int child;
        while (c && fscanf(c, "%d", &child) == 1)
            try_join(f, child);
        if (c)
            fclose(c);
    }
    closedir(tasks);
}

void sonde_family_drop(sonde_family *f, uint32_t i)
{
    if (i == 0 || i >= f->count)
        return;
    sonde_walker_close(f->members[i].walker);
    free(f->members[i].walker);
    f->members[i] = f->members[--f->count];
}

int sonde_family_refresh(sonde_family *f, int descendants)
{
    /* The first member is the caller's walker: re-open it in place. */
    sonde_family_member *first = &f->members[0];
    if (image_of(first->pid, first->walker->runtime.path) != first->image) {
        char err[256];
        sonde_walker_close(first->walker);
        if (sonde_walker_open(first->walker, first->pid, f->profile, err, sizeof err) < 0)
            return -1;
        first->image = image_of(first->pid, first->walker->runtime.path);
        label_of(first->pid, first->label, sizeof first->label);
    }
    /* Exec'd descendants: the interpreter moved (or left); attach afresh. */
    for (uint32_t i = 1; i < f->count;) {
        sonde_family_member *m = &f->members[i];
        if (image_of(m->pid, m->walker->runtime.path) != m->image) {
            int pid = m->pid;
            sonde_family_drop(f, i);
            try_join(f, pid);
            continue;
        }
        i++;
    }
    /* `tried` spares a second look within one refresh; a process found not
     * to be Python may exec into one later, so each refresh looks again. */
    f->ntried = 0;
    for (uint32_t i = 0; descendants && i < f->count; i++) /* grows as it walks the tree */
        join_children(f, f->members[i].pid);
    return 0;
}

void sonde_family_free(sonde_family *f)
{
    while (f->count > 1)
        sonde_family_drop(f, f->count - 1);
    memset(f, 0, sizeof *f);
}
