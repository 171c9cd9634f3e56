/* perf.c - perf_event_open with user registers and stack; see perf.h. */
#include "perf.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* perf's x86-64 register numbers of DWARF registers 0-16 (rax, rdx, rcx,
 * rbx, rsi, rdi, rbp, rsp, r8-r15, rip). */
static const uint8_t perf_reg[SONDE_CFI_NREGS] = { 0, 3, 2, 1, 4, 5, 6, 7, 16, 17, 18, 19,
                                                  20, 21, 22, 23, 8 };
#define MAX_RECORD 65536   /* a record's size is 16 bits: the kernel trims the stack to fit */

static uint64_t reg_mask(void)
{
    uint64_t m = 0;
    for (int i = 0; i < SONDE_CFI_NREGS; i++)
        m |= 1ull << perf_reg[i];
    return m;
}

int sonde_native_perf_open(sonde_native_perf *p, int tid, uint64_t period_ns,
                           uint32_t stack_bytes, uint32_t ring_pages)
{
    memset(p, 0, sizeof *p);
    p->fd = -1;
    if (stack_bytes % 8 || stack_bytes > SONDE_PERF_STACK_MAX || ring_pages == 0 ||
        (ring_pages & (ring_pages - 1)) || period_ns == 0)
        return -EINVAL;
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_TASK_CLOCK;   /* the thread's own CPU time */
    a.sample_period = period_ns;
    a.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_REGS_USER |
                    PERF_SAMPLE_STACK_USER;
    a.sample_regs_user = reg_mask();
    a.sample_stack_user = stack_bytes;
    a.exclude_kernel = 1;   /* allowed without privileges at paranoid 2 */
    a.exclude_hv = 1;
    a.use_clockid = 1;
    a.clockid = CLOCK_MONOTONIC;
    long fd = syscall(SYS_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0)
        return -errno;
    p->fd = (int)fd;
    p->tid = tid;
    long page = sysconf(_SC_PAGESIZE);
    p->data_size = (size_t)ring_pages * (size_t)page;
    void *ring = mmap(NULL, p->data_size + (size_t)page, PROT_READ | PROT_WRITE, MAP_SHARED, p->fd, 0);
    p->record = malloc(MAX_RECORD);
    if (ring == MAP_FAILED || !p->record) {
        int rc = ring == MAP_FAILED ? -errno : -ENOMEM;
        if (ring != MAP_FAILED)
            munmap(ring, p->data_size + (size_t)page);
        sonde_native_perf_close(p);
        return rc;
    }
    p->ring = ring;
    return 0;
}

void sonde_native_perf_close(sonde_native_perf *p)
{
    if (p->ring)
        munmap(p->ring, p->data_size + (size_t)sysconf(_SC_PAGESIZE));
    if (p->fd >= 0)
        close(p->fd);
    free(p->record);
    memset(p, 0, sizeof *p);
    p->fd = -1;
}

typedef struct reader {   /* a bounded walk over one record */
    const uint8_t *p, *end;
} reader;

static int take(reader *r, void *out, size_t n)
{
    if ((size_t)(r->end - r->p) < n)
        return -1;
    memcpy(out, r->p, n);
    r->p += n;
    return 0;
}

static int parse_sample(const uint8_t *rec, size_t len, sonde_native_stack *st, uint64_t *time_ns)
{
    reader r = { rec + sizeof(struct perf_event_header), rec + len };
    uint32_t ids[2];
    uint64_t abi, regs[SONDE_CFI_NREGS], size, dyn = 0;
    if (take(&r, ids, sizeof ids) < 0 || take(&r, time_ns, 8) < 0 || take(&r, &abi, 8) < 0)
        return -EIO;
    /* Values come in the mask's bit order: rax rbx rcx rdx rsi rdi rbp rsp rip r8-r15. */
    uint64_t by_bit[24] = { 0 };
    for (int bit = 0; abi && bit < 24; bit++)
        if ((reg_mask() >> bit & 1) && take(&r, &by_bit[bit], 8) < 0)
            return -EIO;
    for (int i = 0; i < SONDE_CFI_NREGS; i++)
        regs[i] = by_bit[perf_reg[i]];
    if (take(&r, &size, 8) < 0 || size > (uint64_t)(r.end - r.p))
        return -EIO;
    const uint8_t *data = r.p;
    r.p += size;
    if (size && take(&r, &dyn, 8) < 0)
        return -EIO;
    if (!abi || dyn > size)
        return -EIO;   /* no user registers: a kernel thread, or a thread exiting */
    st->tid = (int)ids[1];
    memcpy(st->regs, regs, sizeof regs);
    st->len = (uint32_t)(dyn < st->cap ? dyn : st->cap);
    memcpy(st->data, data, st->len);
    return 0;
}

int sonde_native_perf_next(sonde_native_perf *p, sonde_native_stack *st, uint64_t *time_ns)
{
    struct perf_event_mmap_page *meta = (struct perf_event_mmap_page *)p->ring;
    const uint8_t *data = p->ring + sysconf(_SC_PAGESIZE);
    for (;;) {
        uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
        uint64_t tail = meta->data_tail;
        if (tail == head)
            return 0;
        struct perf_event_header h;
        size_t at = (size_t)(tail % p->data_size);
        for (size_t i = 0; i < sizeof h; i++)
            ((uint8_t *)&h)[i] = data[(at + i) % p->data_size];
        if (h.size < sizeof h || head - tail < h.size) {
            __atomic_store_n(&meta->data_tail, head, __ATOMIC_RELEASE);   /* resynchronise */
            return -EIO;
        }
        const uint8_t *rec = data + at;
        if (at + h.size > p->data_size) {   /* the record wraps: copy it out */
            size_t first = p->data_size - at;
            memcpy(p->record, data + at, first);
            memcpy(p->record + first, data, h.size - first);
            rec = p->record;
        }
        int rc = 1;
        if (h.type == PERF_RECORD_SAMPLE)
            rc = parse_sample(rec, h.size, st, time_ns) == 0 ? 1 : -EIO;
        else if (h.type == PERF_RECORD_LOST && h.size >= sizeof h + 16)
            p->lost += *(const uint64_t *)(rec + sizeof h + 8);
        __atomic_store_n(&meta->data_tail, tail + h.size, __ATOMIC_RELEASE);
        if (h.type == PERF_RECORD_SAMPLE)
            return rc;
    }
}
