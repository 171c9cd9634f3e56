/* runtime.c - locating _PyRuntime and the Python version; see runtime.h. */
#include "runtime.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "elf.h"
#include "maps.h"

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* One to three decimal digits at *s. */
static int small_number(const char **s, int *out)
{
    int v = 0, n = 0;
    for (; n < 3 && **s >= '0' && **s <= '9'; n++, (*s)++)
        v = v * 10 + (**s - '0');
    *out = v;
    return n ? 0 : -1;
}

/* Major and minor from the "python3.X" in a file's name, as in
 * libpython3.10.so.1.0, libpython3.7m.so or python3.11. */
static int version_from_name(const char *path, int *major, int *minor)
{
    const char *s = strstr(base_name(path), "python");
    if (!s)
        return -1;
    s += strlen("python");
    if (small_number(&s, major) < 0 || *s++ != '.' || small_number(&s, minor) < 0)
        return -1;
    return 0;
}

/* The executable's path as the memory map names it, or "". */
static void exe_path(int pid, char *out, size_t outlen)
{
    char link[64];
    snprintf(link, sizeof link, "/proc/%d/exe", pid);
    ssize_t n = readlink(link, out, outlen - 1);
    if (n < 0 || (size_t)n == outlen - 1)
        n = 0;   /* unreadable, or perhaps cut short */
    out[n] = '\0';
    static const char deleted[] = " (deleted)";
    size_t dn = sizeof deleted - 1;
    if ((size_t)n > dn && strcmp(out + n - dn, deleted) == 0)
        out[n - dn] = '\0';
}

/* 0 when major.minor is supported, else -ENOTSUP with the line in err. */
static int check_supported(int pid, const sonde_runtime *r, char *err, size_t errlen)
{
    if (r->major == 3 && r->minor >= SONDE_PY_FIRST_MINOR && r->minor <= SONDE_PY_LAST_MINOR)
        return 0;
    char version[48];
    if (r->micro >= 0)
        snprintf(version, sizeof version, "%d.%d.%d", r->major, r->minor, r->micro);
    else
        snprintf(version, sizeof version, "%d.%d", r->major, r->minor);
    snprintf(err, errlen, "process %d runs Python %s (%s), which sonde cannot read: it supports "
             "Python " SONDE_PY_RANGE, pid, version, r->path);
    return -ENOTSUP;
}

/* Opens the file whose offset-0 mapping is base and looks for _PyRuntime
 * in it.  0 with *elf open and out's address fields set; -ENOENT when the
 * file is no ELF64 file or has none; another negative errno when it
 * cannot be opened. */
static int try_file(int pid, const sonde_map *base, int in_libpython, sonde_elf *elf,
                    sonde_runtime *out)
{
    char path[PATH_MAX + 64];
    if (!in_libpython)   /* works even when the file was deleted */
        snprintf(path, sizeof path, "/proc/%d/exe", pid);
    else if (sonde_maps_file(pid, base, path, sizeof path) < 0)
        return -ENAMETOOLONG;
    uint64_t load_base, value, size;
    int rc = sonde_elf_open(elf, path);
    if (rc < 0)
        return rc == -ENOEXEC ? -ENOENT : rc;   /* not an ELF64 file: not CPython */
    rc = sonde_elf_load_base(elf, &load_base);
    if (rc == 0 && sonde_elf_symbol(elf, "_PyRuntime", &value, &size) < 0 &&
        sonde_elf_section(elf, ".PyRuntime", &value, &size) < 0)
        rc = -ENOENT;
    if (rc < 0) {
        sonde_elf_close(elf);
        return -ENOENT;
    }
    out->bias = base->start - load_base;
    out->addr = value + out->bias;
    out->in_libpython = in_libpython;
    snprintf(out->path, sizeof out->path, "%s", base->path);
    return 0;
}

/* Tries the executable, then each mapped libpython.  0 with *elf open;
 * -ENOENT when none has _PyRuntime, with *failed set to the mapping of
 * the first file that could not be opened and *open_rc to why (0 if none). */
static int find_file(int pid, const sonde_maps *maps, const char *exe, sonde_elf *elf,
                     sonde_runtime *out, const sonde_map **failed, int *open_rc)
{
    *failed = NULL;
    *open_rc = 0;
    const sonde_map *exe_map = exe[0] ? sonde_maps_find_base(maps, exe) : NULL;
    for (size_t i = 0; i <= maps->count; i++) {
        const sonde_map *m = i == 0 ? exe_map : &maps->v[i - 1];
        if (!m || (i > 0 && (m->offset != 0 || !strstr(base_name(m->path), "libpython"))))
            continue;
        int rc = try_file(pid, m, i > 0, elf, out);
        if (rc == 0)
            return 0;
        if (rc != -ENOENT && *open_rc == 0) {
            *failed = m;
            *open_rc = rc;
        }
    }
    return -ENOENT;
}

/* The error line when no file has _PyRuntime.  A Python too old to have
 * one (before 3.7) is named by its version where a file name tells it. */
static int no_runtime(int pid, const sonde_maps *maps, const char *exe,
                      const sonde_map *failed, int open_rc, char *err, size_t errlen)
{
    if (open_rc < 0 && failed->deleted && strcmp(failed->path, exe) != 0) {
        snprintf(err, errlen, "%s, mapped by process %d, has been deleted or replaced on disk, "
                 "and reading the old copy through /proc/%d/map_files failed (%s): that needs "
                 "root",
                 failed->path, pid, pid, strerror(-open_rc));
        return open_rc;
    }
    if (open_rc == -EACCES || open_rc == -EPERM) {
        sonde_proc_explain(pid, open_rc, err, errlen);
        return open_rc;
    }
    if (open_rc < 0) {
        snprintf(err, errlen, "cannot read %s, mapped by process %d: %s", failed->path, pid,
                 strerror(-open_rc));
        return open_rc;
    }
    sonde_runtime old = {.micro = -1};
    for (size_t i = 0; i <= maps->count; i++) {
        const char *path = i < maps->count ? maps->v[i].path : exe;
        if ((i == maps->count || strstr(base_name(path), "libpython")) &&
            version_from_name(path, &old.major, &old.minor) == 0) {
            snprintf(old.path, sizeof old.path, "%s", path);
            if (check_supported(pid, &old, err, errlen) < 0)
                return -ENOTSUP;
            break;
        }
    }
    snprintf(err, errlen,
             "process %d does not look like a CPython process (no _PyRuntime in /proc/%d/exe "
             "or a libpython)",
             pid, pid);
    return -ENOEXEC;
}

/* The version: 3.13+ put a "xdebugpy" cookie and PY_VERSION_HEX first in
 * _PyRuntime; 3.11+ export Py_Version; older ones only tell it in their
 * file names.  0, or a negative errno with the line in err. */
static int find_version(const sonde_proc *p, const sonde_elf *elf, const char *exe,
                        sonde_runtime *out, char *err, size_t errlen)
{
    unsigned char head[16];
    int rc = sonde_proc_read(p, out->addr, head, sizeof head);
    if (rc == -EFAULT) {
        snprintf(err, errlen,
                 "cannot read _PyRuntime of process %d at 0x%" PRIx64 ": is %s on disk the "
                 "file the process loaded?",
                 p->pid, out->addr, out->path);
        return rc;
    }
    if (rc < 0) {
        sonde_proc_explain(p->pid, rc, err, errlen);
        return rc;
    }
    uint64_t hex = 0, value, size;
    if (memcmp(head, "xdebugpy", 8) == 0) {
        memcpy(&hex, head + 8, sizeof hex);
        out->version_from = "_Py_DebugOffsets";
    } else if (sonde_elf_symbol(elf, "Py_Version", &value, &size) == 0) {
        uint32_t v;   /* an unsigned long, but PY_VERSION_HEX fits 32 bits */
        if (sonde_proc_read(p, value + out->bias, &v, sizeof v) == 0)
            hex = v;
        out->version_from = "Py_Version";
    }
    if (hex > 0xffffff && hex <= UINT32_MAX) {
        out->hexversion = (uint32_t)hex;
        out->major = (int)(hex >> 24);
        out->minor = (int)(hex >> 16 & 0xff);
        out->micro = (int)(hex >> 8 & 0xff);
    } else if (version_from_name(out->path, &out->major, &out->minor) == 0 ||
               version_from_name(exe, &out->major, &out->minor) == 0) {
        out->micro = -1;
        out->version_from = "file name";
    } else {
        snprintf(err, errlen, "found _PyRuntime in %s in process %d but cannot tell which "
                 "Python version it is",
                 out->path, p->pid);
        return -ENOTSUP;
    }
    return check_supported(p->pid, out, err, errlen);
}

int sonde_runtime_find(const sonde_proc *p, sonde_runtime *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    sonde_maps maps;
    int rc = sonde_maps_read(p->pid, &maps);
    if (rc < 0) {
        rc = rc == -ENOENT ? -ESRCH : rc;
        sonde_proc_explain(p->pid, rc, err, errlen);
        return rc;
    }
    char exe[PATH_MAX];
    exe_path(p->pid, exe, sizeof exe);
    sonde_elf elf;
    const sonde_map *failed;
    int open_rc;
    rc = find_file(p->pid, &maps, exe, &elf, out, &failed, &open_rc);
    if (rc == 0) {
        rc = find_version(p, &elf, exe, out, err, errlen);
        sonde_elf_close(&elf);
    } else {
        rc = no_runtime(p->pid, &maps, exe, failed, open_rc, err, errlen);
    }
    sonde_maps_free(&maps);
    return rc;
}
