/* mem.c - process_vm_readv reads and their error lines; see mem.h. */
#include "mem.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "maps.h"

int sonde_proc_read(const sonde_proc *p, uint64_t addr, void *buf, size_t len)
{
    if (len > SONDE_PROC_READ_MAX)
        return -EINVAL;
    if (len == 0)
        return 0;
    if (addr > UINT64_MAX - len)
        return -EFAULT;
    if (p->source)
        return p->source(p->source_ctx, addr, buf, len);
    struct iovec local = {buf, len};
    struct iovec remote = {(void *)(uintptr_t)addr, len};
    ssize_t n = process_vm_readv(p->pid, &local, 1, &remote, 1, 0);
    if (n < 0)
        return -errno;
    return (size_t)n == len ? 0 : -EFAULT;   /* a partial read ran into a hole */
}

int sonde_proc_read_many(const sonde_proc *p, const uint64_t *addrs, uint32_t n, size_t each,
                         void *out)
{
    if (n == 0)
        return 0;
    if (n > SONDE_PROC_SCATTER_MAX || each == 0 || each > SONDE_PROC_READ_MAX / n)
        return -EINVAL;
    if (p->source) {
        uint32_t got = 0;
        int rc = 0;
        while (got < n && (rc = sonde_proc_read(p, addrs[got], (char *)out + got * each, each)) == 0)
            got++;
        return got == 0 && rc != -EFAULT ? rc : (int)got;
    }
    struct iovec local[SONDE_PROC_SCATTER_MAX], remote[SONDE_PROC_SCATTER_MAX];
    for (uint32_t i = 0; i < n; i++) {
        if (addrs[i] > UINT64_MAX - each) {
            n = i; /* a range that wraps: read up to it */
            break;
        }
        local[i] = (struct iovec){ (char *)out + (size_t)i * each, each };
        remote[i] = (struct iovec){ (void *)(uintptr_t)addrs[i], each };
    }
    ssize_t got = n ? process_vm_readv(p->pid, local, n, remote, n, 0) : 0;
    if (got < 0)
        return -errno;
    return (int)((size_t)got / each);
}

int sonde_proc_read_ranges(const sonde_proc *p, const sonde_proc_range *r, uint32_t n)
{
    if (n > SONDE_PROC_SCATTER_MAX)
        return -EINVAL;
    size_t total = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (r[i].len > SONDE_PROC_READ_MAX - total)
            return -EINVAL;
        total += r[i].len;
    }
    if (p->source) {
        uint32_t got = 0;
        int rc = 0;
        while (got < n && (rc = sonde_proc_read(p, r[got].addr, r[got].buf, r[got].len)) == 0)
            got++;
        return got == 0 && n > 0 && rc != -EFAULT ? rc : (int)got;
    }
    struct iovec local[SONDE_PROC_SCATTER_MAX], remote[SONDE_PROC_SCATTER_MAX];
    uint32_t m = 0;
    for (; m < n && r[m].addr <= UINT64_MAX - r[m].len; m++) { /* a range that wraps: up to it */
        local[m] = (struct iovec){ r[m].buf, r[m].len };
        remote[m] = (struct iovec){ (void *)(uintptr_t)r[m].addr, r[m].len };
    }
    ssize_t got = m ? process_vm_readv(p->pid, local, m, remote, m, 0) : 0;
    if (got < 0)
        return -errno;
    /* The kernel reads the ranges in order and stops at the first hole. */
    uint32_t whole = 0;
    for (size_t left = (size_t)got; whole < m && r[whole].len <= left; whole++)
        left -= r[whole].len;
    return (int)whole;
}

/* Yama's ptrace_scope (0-3), or -1 when Yama is not there. */
static int ptrace_scope(void)
{
    FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "r");
    if (!f)
        return -1;
    int scope = -1;
    if (fscanf(f, "%d", &scope) != 1)
        scope = -1;
    fclose(f);
    return scope;
}

void sonde_proc_explain(int pid, int code, char *err, size_t errlen)
{
    if (code == -ESRCH || code == -ENOENT) {
        snprintf(err, errlen, "no process with pid %d (has it exited?)", pid);
        return;
    }
    if (code != -EPERM && code != -EACCES) {
        snprintf(err, errlen, "cannot read the memory of process %d: %s", pid, strerror(-code));
        return;
    }
    int scope = ptrace_scope();
    if (scope >= 3)
        snprintf(err, errlen,
                 "permission denied reading process %d: /proc/sys/kernel/yama/ptrace_scope is "
                 "%d, which forbids reading other processes until reboot",
                 pid, scope);
    else if (scope >= 1)
        snprintf(err, errlen,
                 "permission denied reading process %d: /proc/sys/kernel/yama/ptrace_scope is "
                 "%d; run sonde as root or with CAP_SYS_PTRACE (in a container: "
                 "--cap-add SYS_PTRACE), or set it to 0 with "
                 "'sysctl kernel.yama.ptrace_scope=0'",
                 pid, scope);
    else
        snprintf(err, errlen,
                 "permission denied reading process %d: run sonde as the same user as the "
                 "process or as root (in a container, add CAP_SYS_PTRACE: --cap-add "
                 "SYS_PTRACE); setuid programs can only be read by root",
                 pid);
}

int sonde_proc_open(sonde_proc *p, int pid, char *err, size_t errlen)
{
    *p = (sonde_proc){ .pid = pid };
    if (pid <= 0) {
        snprintf(err, errlen, "%d is not a process id", pid);
        return -EINVAL;
    }
    if (access("/proc/self/maps", R_OK) != 0) {
        snprintf(err, errlen, "/proc is not mounted; sonde needs it to find process %d", pid);
        return -ENOENT;
    }
    sonde_maps maps;
    int rc = sonde_maps_read(pid, &maps);
    if (rc < 0) {
        rc = rc == -ENOENT ? -ESRCH : rc;
        sonde_proc_explain(pid, rc, err, errlen);
        return rc;
    }
    /* The first readable mapping that reads; [vvar] and such may not. */
    rc = -EFAULT;
    for (size_t i = 0; i < maps.count && rc == -EFAULT; i++) {
        uint64_t word;
        if (maps.v[i].perms[0] == 'r')
            rc = sonde_proc_read(p, maps.v[i].start, &word, sizeof word);
    }
    size_t count = maps.count;
    sonde_maps_free(&maps);
    if (rc == -EFAULT)
        snprintf(err, errlen,
                 count ? "process %d has no readable memory"
                       : "process %d has no memory map (a zombie or a kernel thread?)",
                 pid);
    else if (rc < 0)
        sonde_proc_explain(pid, rc, err, errlen);
    return rc;
}
