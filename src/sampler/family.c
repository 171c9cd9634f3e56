/* family.c - finding and following the Python processes under a process; see family.h. */
#include "family.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proc/maps.h"
#include "proc/task.h"

/* Where the member's interpreter file is mapped now, into *start (0 when
 * not at all).  0, or -1 when its maps cannot be read: it has ended, or
 * made itself undumpable (sampling finds and says which). */
static int image_of(int pid, const char *path, uint64_t *start)
{
    sonde_maps m;
    *start = 0;
    if (sonde_maps_read(pid, &m) < 0)
        return -1;
    const sonde_map *base = sonde_maps_find_base(&m, path);
    *start = base ? base->start : 0;
    sonde_maps_free(&m);
    return 0;
}

/* The image a walker just opened reads: where its runtime's file is
 * mapped now, or 0 when its _PyRuntime is not in that file's mappings any
 * more (the process exec'd while the walker was being opened, and the
 * walker holds the old image's addresses: 0 is then no image, and the
 * next refresh opens it again). */
static uint64_t walker_image(int pid, const sonde_walker *w)
{
    sonde_maps m;
    if (sonde_maps_read(pid, &m) < 0)
        return 0;
    const sonde_map *base = sonde_maps_find_base(&m, w->runtime.path);
    uint64_t start = 0;
    for (size_t i = 0; base && i < m.count; i++) {
        /* the file's own mappings, or the zeroed ones just after (.bss) */
        const char *owner = !m.v[i].path[0] && i > 0 ? m.v[i - 1].path : m.v[i].path;
        if (m.v[i].start <= w->runtime.addr && w->runtime.addr < m.v[i].end &&
            strcmp(owner, w->runtime.path) == 0)
            start = base->start;
    }
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

/* The first Python process's interpreter into the profile's about: its
 * executable and the version its runtime says (the remote sys.version
 * string is not read).  Out of memory leaves them unknown. */
static void note_interpreter(sonde_family *f, int pid, const sonde_runtime *rt)
{
    sonde_about *a = &f->profile->about;
    if (a->executable || a->version)
        return;
    char path[64], exe[PATH_MAX], version[48];
    snprintf(path, sizeof path, "/proc/%d/exe", pid);
    ssize_t n = readlink(path, exe, sizeof exe);
    if (n > 0)
        sonde_about_set(&a->executable, exe, (size_t)n);
    int len = rt->micro >= 0
                  ? snprintf(version, sizeof version, "%d.%d.%d", rt->major, rt->minor, rt->micro)
                  : snprintf(version, sizeof version, "%d.%d", rt->major, rt->minor);
    if (len > 0 && (size_t)len < sizeof version)
        sonde_about_set(&a->version, version, (size_t)len);
}

/* The executable of pid (its device and inode); -1 when it cannot be seen. */
static int exe_of(int pid, uint64_t *dev, uint64_t *ino)
{
    char path[64];
    struct stat st;
    snprintf(path, sizeof path, "/proc/%d/exe", pid);
    if (stat(path, &st) < 0)
        return -1;
    *dev = (uint64_t)st.st_dev;
    *ino = (uint64_t)st.st_ino;
    return 0;
}

/* 1 when pid's executable is called python-something: a process that has
 * just exec'd an interpreter whose libpython is not mapped yet. */
static int named_python(int pid)
{
    char link[64], exe[4096];
    snprintf(link, sizeof link, "/proc/%d/exe", pid);
    ssize_t n = readlink(link, exe, sizeof exe - 1);
    if (n <= 0)
        return 0;
    exe[n] = '\0';
    const char *slash = strrchr(exe, '/');
    return strstr(slash ? slash + 1 : exe, "python") != NULL;
}

void sonde_family_init(sonde_family *f, int root, int all, sonde_profile *profile)
{
    memset(f, 0, sizeof *f);
    f->root = root;
    f->all = all;
    f->profile = profile;
}

static int is_member(const sonde_family *f, int pid)
{
    for (uint32_t i = 0; i < f->count; i++)
        if (f->members[i].pid == pid)
            return 1;
    return 0;
}

/* 1 when pid was found not to be Python and has not exec'd since. */
static int known_other(const sonde_family *f, int pid)
{
    uint64_t dev, ino;
    for (uint32_t i = 0; i < f->nothers; i++)
        if (f->others[i].pid == pid)
            return exe_of(pid, &dev, &ino) == 0 && dev == f->others[i].dev &&
                   ino == f->others[i].ino;
    return 0;
}

static void remember_other(sonde_family *f, int pid)
{
    uint64_t dev, ino;
    if (exe_of(pid, &dev, &ino) < 0)
        return;
    for (uint32_t i = 0; i < f->nothers; i++)
        if (f->others[i].pid == pid) {
            f->others[i] = (sonde_family_other){ pid, dev, ino };
            return;
        }
    if (f->nothers < sizeof f->others / sizeof f->others[0])
        f->others[f->nothers++] = (sonde_family_other){ pid, dev, ino };
}

/* Why pid could not be attached: kept for the root, and where the process
 * runs a Python sonde cannot read (a version, a permission). */
static void note_failure(sonde_family *f, int pid, int rc, const char *err)
{
    if (pid == f->root) {
        f->root_error = rc;
        snprintf(f->root_message, sizeof f->root_message, "%s", err);
    }
    if (rc != -ENOEXEC && rc != -ESRCH && rc != -EFAULT && rc != -ENOENT)
        snprintf(f->last_message, sizeof f->last_message, "%s", err);
}

/* Attaches pid when it runs Python.  1 when it is a member (now or
 * already, or would be but the family is full), 0 when it is not Python. */
static int try_join(sonde_family *f, int pid)
{
    if (is_member(f, pid))
        return 1;
    if (known_other(f, pid))
        return 0;
    sonde_walker *w = malloc(sizeof *w);
    char err[512];
    if (!w)
        return 0;
    int rc = sonde_walker_open(w, pid, f->profile, err, sizeof err);
    if (rc < 0 || f->count == SONDE_FAMILY_MAX) {
        sonde_walker_close(w);
        free(w);
        if (rc == 0)
            return 1;
        note_failure(f, pid, rc, err);
        /* An interpreter whose libpython the loader has not mapped yet is
         * looked at again on the next refresh. */
        if (rc != -ENOEXEC || !named_python(pid))
            remember_other(f, pid);
        return 0;
    }
    if (pid == f->root)
        f->root_error = 0;
    sonde_family_member *m = &f->members[f->count++];
    m->walker = w;
    m->pid = pid;
    m->image = walker_image(pid, w);
    label_of(pid, m->label, sizeof m->label);
    note_interpreter(f, pid, &w->runtime);
    f->joined++;
    return 1;
}

/* Threads of one process whose children are looked for at a refresh: each
 * is a file read five times a second.  A process started by a thread past
 * them is not followed. */
#define CHILDREN_THREADS_MAX 4096

/* Pushes the children of every thread of pid onto stack[*n .. cap). */
static void push_children(int pid, int *stack, uint32_t *n, uint32_t cap)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", pid);
    DIR *tasks = opendir(path);
    if (!tasks)
        return;
    struct dirent *t;
    uint32_t seen = 0;
    while ((t = readdir(tasks)) && seen++ < CHILDREN_THREADS_MAX + 2) {
        if (t->d_name[0] == '.')
            continue;
        char children[128];
        snprintf(children, sizeof children, "/proc/%d/task/%.16s/children", pid, t->d_name);
        FILE *c = fopen(children, "r");
        int child;
        while (c && *n < cap && fscanf(c, "%d", &child) == 1)
            stack[(*n)++] = child;
        if (c)
            fclose(c);
    }
    closedir(tasks);
}

void sonde_family_drop(sonde_family *f, uint32_t i)
{
    if (i >= f->count)
        return;
    sonde_walker_close(f->members[i].walker);
    free(f->members[i].walker);
    f->members[i] = f->members[--f->count];
}

/* Members that exec'd: the interpreter moved, or left.  Re-attached in
 * place, or dropped when the new image is not Python.  A member whose
 * maps cannot be read is left to its next sample, which tells that it
 * ended or that sonde lost the right to read it (a drop here said
 * neither: its samples just stopped). */
static void follow_execs(sonde_family *f)
{
    for (uint32_t i = 0; i < f->count;) {
        sonde_family_member *m = &f->members[i];
        uint64_t image;
        if (image_of(m->pid, m->walker->runtime.path, &image) < 0 || image == m->image) {
            i++;
            continue;
        }
        char err[512];
        sonde_walker_close(m->walker);
        if (sonde_walker_open(m->walker, m->pid, f->profile, err, sizeof err) < 0) {
            sonde_family_drop(f, i);
            continue;
        }
        m->image = walker_image(m->pid, m->walker);
        label_of(m->pid, m->label, sizeof m->label);
        i++;
    }
}

int sonde_family_refresh(sonde_family *f, int full)
{
    if (full) {
        follow_execs(f);
        f->nothers = 0; /* a process may load Python without an exec (embedding) */
    }
    int alive = sonde_proc_alive(f->root);
    if (alive <= 0)
        return alive < 0 ? alive : -ESRCH;
    /* Depth first from the root: below a process that is not Python, and
     * with `all` below every one. */
    uint32_t n = 0, visited = 0;
    f->visit[n++] = f->root;
    while (n > 0 && visited++ < SONDE_FAMILY_VISIT_MAX) {
        int pid = f->visit[--n];
        if (!try_join(f, pid) || f->all)
            push_children(pid, f->visit, &n, SONDE_FAMILY_VISIT_MAX);
    }
    return 0;
}

int sonde_family_attach(sonde_family *f, char *err, size_t errlen)
{
    if (sonde_family_refresh(f, 1) < 0) {
        sonde_proc_explain(f->root, -ESRCH, err, errlen);
        return -ESRCH;
    }
    if (f->count > 0)
        return 0;
    if (f->last_message[0])
        snprintf(err, errlen, "%s", f->last_message);
    else if (f->root_error == -ENOEXEC)
        snprintf(err, errlen, "%s, and runs no Python process", f->root_message);
    else
        snprintf(err, errlen, "%s", f->root_message);
    return f->root_error ? f->root_error : -ENOEXEC;
}

void sonde_family_free(sonde_family *f)
{
    while (f->count > 0)
        sonde_family_drop(f, f->count - 1);
    memset(f, 0, sizeof *f);
}
