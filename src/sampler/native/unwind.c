/* unwind.c - CFI steps over a stack copy, frame pointers where CFI is missing; see unwind.h. */
#include "unwind.h"

#include <string.h>

#include "../../core/clock.h"
#include "expr.h"
#include "guard.h"

/* The registers of the frame being unwound; valid[i] when regs[i] is known. */
typedef struct frame_regs {
    uint64_t regs[SONDE_CFI_NREGS];
    uint8_t valid[SONDE_CFI_NREGS];
} frame_regs;

static int read_copy(void *ctx, uint64_t addr, uint64_t *out)
{
    const sonde_native_stack *st = ctx;
    uint64_t base = st->regs[SONDE_CFI_RSP];
    if (addr < base || addr - base > st->len || st->len - (addr - base) < 8)
        return -1;
    memcpy(out, st->data + (addr - base), 8);
    return 0;
}

/* The value a rule gives the caller's register i; -1 unknown, -2 a read
 * outside the copy. */
static int apply(const sonde_native_stack *st, const frame_regs *f, const sonde_cfi_rule *r,
                 int i, uint64_t cfa, uint64_t *out, uint8_t *valid)
{
    uint64_t at;
    *valid = 1;
    switch (r->kind) {
    case SONDE_CFI_SAME:
        *out = f->regs[i];
        *valid = f->valid[i];
        return 0;
    case SONDE_CFI_UNDEFINED:
        *valid = 0;
        return 0;
    case SONDE_CFI_OFFSET:
        return read_copy((void *)st, cfa + (uint64_t)r->off, out) < 0 ? -2 : 0;
    case SONDE_CFI_VAL_OFFSET:
        *out = cfa + (uint64_t)r->off;
        return 0;
    case SONDE_CFI_REGISTER:
        *out = f->regs[r->reg];
        *valid = f->valid[r->reg];
        return 0;
    case SONDE_CFI_EXPR:
    case SONDE_CFI_VAL_EXPR:
        if (sonde_expr_eval(r->expr, r->expr_len, f->regs, f->valid, SONDE_CFI_NREGS, 1, cfa,
                            read_copy, (void *)st, &at) < 0)
            return -1;
        if (r->kind == SONDE_CFI_VAL_EXPR) {
            *out = at;
            return 0;
        }
        return read_copy((void *)st, at, out) < 0 ? -2 : 0;
    }
    return -1;
}

/* One step by CFI row: f becomes the caller's registers.  An enum
 * sonde_native_end, or -1 when the return address is undefined (the
 * outermost frame). */
static int step_cfi(const sonde_native_stack *st, frame_regs *f, const sonde_cfi_row *row,
                    int *signal)
{
    uint64_t cfa;
    if (row->cfa_expr) {
        if (sonde_expr_eval(row->cfa_expr, row->cfa_expr_len, f->regs, f->valid,
                            SONDE_CFI_NREGS, 0, 0, read_copy, (void *)st, &cfa) < 0)
            return SONDE_NATIVE_BAD_FRAME;
    } else {
        if (!f->valid[row->cfa_reg])
            return SONDE_NATIVE_BAD_FRAME;
        cfa = f->regs[row->cfa_reg] + (uint64_t)row->cfa_off;
    }
    if (row->regs[row->ra_reg].kind == SONDE_CFI_UNDEFINED)
        return -1;
    frame_regs caller;
    for (int i = 0; i < SONDE_CFI_NREGS; i++) {
        const sonde_cfi_rule *r = &row->regs[i];
        int rc = apply(st, f, r, i, cfa, &caller.regs[i], &caller.valid[i]);
        if (rc == -2 && i != row->ra_reg && r->kind == SONDE_CFI_OFFSET &&
            cfa + (uint64_t)r->off < f->regs[SONDE_CFI_RSP]) {
            /* A save slot below the stack pointer: an epilogue has popped
             * it already (GCC's CFI keeps the slot's rule until the
             * return), so the register holds the caller's value again. */
            caller.regs[i] = f->regs[i];
            caller.valid[i] = f->valid[i];
            continue;
        }
        if (rc < 0)
            return rc == -2 ? SONDE_NATIVE_OUT_OF_COPY : SONDE_NATIVE_BAD_FRAME;
    }
    if (!caller.valid[row->ra_reg])
        return SONDE_NATIVE_BAD_FRAME;
    uint64_t ra = caller.regs[row->ra_reg];
    caller.regs[SONDE_CFI_RSP] = cfa;   /* on x86-64 the CFA is the caller's stack pointer */
    caller.valid[SONDE_CFI_RSP] = 1;
    caller.regs[SONDE_CFI_RIP] = ra;
    caller.valid[SONDE_CFI_RIP] = 1;
    /* Each frame lies above the one it called: a step that does not climb
     * would loop.  A signal frame's saved registers may point anywhere. */
    if (!row->signal_frame && cfa <= f->regs[SONDE_CFI_RSP])
        return SONDE_NATIVE_BAD_FRAME;
    *signal = row->signal_frame;
    *f = caller;
    return SONDE_NATIVE_COMPLETE;
}

/* One step by frame pointer: [rbp] is the caller's rbp, [rbp + 8] the
 * return address. */
static int step_fp(const sonde_native_stack *st, frame_regs *f)
{
    uint64_t rbp = f->regs[SONDE_CFI_RBP], saved, ra;
    if (!f->valid[SONDE_CFI_RBP] || rbp < f->regs[SONDE_CFI_RSP] || rbp > UINT64_MAX - 16)
        return SONDE_NATIVE_NO_UNWIND_INFO;
    if (read_copy((void *)st, rbp, &saved) < 0 || read_copy((void *)st, rbp + 8, &ra) < 0)
        return SONDE_NATIVE_OUT_OF_COPY;
    f->regs[SONDE_CFI_RBP] = saved;
    f->regs[SONDE_CFI_RSP] = rbp + 16;
    f->regs[SONDE_CFI_RIP] = ra;
    return SONDE_NATIVE_COMPLETE;
}

/* sonde_native_unwind's work, guarded by it. */
static int unwind(sonde_native_objects *o, const sonde_native_stack *st,
                  sonde_native_frame *frames, uint32_t max, uint32_t *n, sonde_native_counts *c)
{
    frame_regs f;
    memcpy(f.regs, st->regs, sizeof f.regs);
    memset(f.valid, 1, sizeof f.valid);
    int refreshed = 0, exact = 1, end = SONDE_NATIVE_COMPLETE;
    *n = 0;
    c->stacks++;
    while (f.regs[SONDE_CFI_RIP] != 0) {
        if (*n == max) {
            end = SONDE_NATIVE_DEPTH;
            break;
        }
        uint64_t pc = f.regs[SONDE_CFI_RIP];
        frames[*n] = (sonde_native_frame){ pc, f.regs[SONDE_CFI_RSP], 0 };
        (*n)++;
        /* A return address may lie just past its function (a call that
         * does not return): look up the call instruction instead. */
        uint64_t at = exact ? pc : pc - 1;
        sonde_native_object *ob = sonde_native_objects_find(o, at);
        if (!ob && !refreshed && sonde_native_objects_stale(o, at, sonde_clock_ns())) {
            refreshed = 1;
            c->refreshes++;
            if (sonde_native_objects_refresh(o) == 0)
                ob = sonde_native_objects_find(o, at);
        }
        sonde_cfi_row row;
        int signal = 0, rc;
        if (ob && sonde_cfi_row_at(&ob->f->cfi, at - ob->bias, &row) == 0) {
            rc = step_cfi(st, &f, &row, &signal);
        } else {
            rc = step_fp(st, &f);
            frames[*n - 1].via_fp = 1;
            c->fp_steps++;
        }
        if (rc == -1)
            break;
        if (rc != SONDE_NATIVE_COMPLETE) {
            end = rc;
            break;
        }
        exact = signal;
    }
    c->frames += *n;
    c->ends[end]++;
    return end;
}

int sonde_native_unwind(sonde_native_objects *o, const sonde_native_stack *st,
                        sonde_native_frame *frames, uint32_t max, uint32_t *n,
                        sonde_native_counts *c)
{
    sonde_native_guard g;
    if (sigsetjmp(g.jump, 1)) {
        /* An object's file shrank under sonde while its CFI was read: it is
         * given up, and this stack ends where it had got to. */
        sonde_native_guard_end(&g);
        sonde_native_objects_shrunk(o, g.fault, NULL);
        c->ends[SONDE_NATIVE_NO_UNWIND_INFO]++;
        return SONDE_NATIVE_NO_UNWIND_INFO;
    }
    sonde_native_guard_begin(&g);
    int end = unwind(o, st, frames, max, n, c);
    sonde_native_guard_end(&g);
    return end;
}
