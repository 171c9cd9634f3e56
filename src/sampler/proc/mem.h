/* mem.h - reading another process's memory without stopping it.
 *
 * Reads go through process_vm_readv(2): the target is neither
 * ptrace-stopped nor changed, so what comes back may be mid-update and
 * every value read must be treated as untrusted.  The kernel allows it
 * where it would allow ptrace attach: same user (or root), subject to
 * Yama's /proc/sys/kernel/yama/ptrace_scope and CAP_SYS_PTRACE.
 *
 * A sonde_proc may instead be given a source: a function that serves the
 * reads (a snapshot of a process's memory, replayed or mutated by the
 * tests and the walker's fuzz target).  Everything above it reads the
 * same way either way. */
#ifndef SONDE_PROC_MEM_H
#define SONDE_PROC_MEM_H

#include <stddef.h>
#include <stdint.h>

#define SONDE_PROC_READ_MAX (64u * 1024 * 1024)   /* one read, at most */

/* Reads len bytes at addr into buf: 0, or a negative errno as
 * sonde_proc_read gives. */
typedef int (*sonde_proc_source)(void *ctx, uint64_t addr, void *buf, size_t len);

typedef struct sonde_proc {
    int pid;
    sonde_proc_source source;   /* NULL: the live process's memory */
    void *source_ctx;
} sonde_proc;

/* Checks that pid exists and that its memory can be read (one word from
 * its first readable mapping); p reads the live process.  0, or a negative
 * errno with one line in err saying why and what to do: -ESRCH no such
 * process, -EPERM not allowed, -EINVAL a bad pid, -EFAULT nothing readable
 * (a zombie or a kernel thread), -ENOENT /proc is not mounted, others as
 * from the system. */
int sonde_proc_open(sonde_proc *p, int pid, char *err, size_t errlen);

/* Reads len bytes at addr in the process into buf.  0 when all len bytes
 * were read, else a negative errno: -ESRCH the process is gone, -EFAULT
 * some of the range is not mapped, -EPERM not allowed, -EINVAL len is
 * above SONDE_PROC_READ_MAX. */
int sonde_proc_read(const sonde_proc *p, uint64_t addr, void *buf, size_t len);

#define SONDE_PROC_SCATTER_MAX 1024   /* ranges in one sonde_proc_read_many (IOV_MAX) */

/* Reads n ranges of `each` bytes, addrs[i] into out + i * each, in one
 * system call (one call of the source per range).  The number of ranges read whole from the first on (the
 * kernel stops at the first that is not mapped), or a negative errno. */
int sonde_proc_read_many(const sonde_proc *p, const uint64_t *addrs, uint32_t n, size_t each,
                         void *out);

/* One range of sonde_proc_read_ranges: len bytes at addr into buf. */
typedef struct sonde_proc_range {
    uint64_t addr;
    void *buf;
    size_t len;
} sonde_proc_range;

/* Reads n ranges of any sizes in one system call (one call of the source
 * per range).  The number of ranges read whole from the first on (the
 * kernel stops at the first that is not mapped; the ones after it are
 * left unread), or a negative errno. */
int sonde_proc_read_ranges(const sonde_proc *p, const sonde_proc_range *r, uint32_t n);

/* One line for a failure code from reading pid's memory or /proc files:
 * what went wrong and, for permissions, what to change. */
void sonde_proc_explain(int pid, int code, char *err, size_t errlen);

#endif
