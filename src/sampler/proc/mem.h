/* mem.h - reading another process's memory without stopping it.
 *
 * Reads go through process_vm_readv(2): the target is neither
 * ptrace-stopped nor changed, so what comes back may be mid-update and
 * every value read must be treated as untrusted.  The kernel allows it
 * where it would allow ptrace attach: same user (or root), subject to
 * Yama's /proc/sys/kernel/yama/ptrace_scope and CAP_SYS_PTRACE. */
#ifndef SONDE_MEM_H
#define SONDE_MEM_H

#include <stddef.h>
#include <stdint.h>

#define SONDE_PROC_READ_MAX (64u * 1024 * 1024)   /* one read, at most */

typedef struct sonde_proc {
    int pid;
} sonde_proc;

/* Checks that pid exists and that its memory can be read (one word from
 * its first readable mapping).  0, or a negative errno with one line in
 * err saying why and what to do: -ESRCH no such process, -EPERM not
 * allowed, -EINVAL a bad pid, -EFAULT nothing readable (a zombie or a
 * kernel thread), others as from the system. */
int sonde_proc_open(sonde_proc *p, int pid, char *err, size_t errlen);

/* Reads len bytes at addr in the process into buf.  0 when all len bytes
 * were read, else a negative errno: -ESRCH the process is gone, -EFAULT
 * some of the range is not mapped, -EPERM not allowed, -EINVAL len is
 * above SONDE_PROC_READ_MAX. */
int sonde_proc_read(const sonde_proc *p, uint64_t addr, void *buf, size_t len);

/* Reads two ranges in one system call: [addr1, len1) into buf1 and, when
 * len2 is not 0, [addr2, len2) into buf2.  0 when both were read whole,
 * else as sonde_proc_read. */
int sonde_proc_read2(const sonde_proc *p, uint64_t addr1, void *buf1, size_t len1,
                     uint64_t addr2, void *buf2, size_t len2);

/* One line for a failure code from reading pid's memory or /proc files:
 * what went wrong and, for permissions, what to change. */
void sonde_proc_explain(int pid, int code, char *err, size_t errlen);

#endif
