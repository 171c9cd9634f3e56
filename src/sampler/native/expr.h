/* expr.h - the DWARF expressions that call frame information uses.
 *
 * CFI rules may compute a frame address or a saved register with a DWARF
 * expression (glibc's PLT entries and signal trampolines do).  This is a
 * small stack machine over the registers of the frame being unwound and
 * the copy of its stack: the arithmetic, logic, comparison, branch,
 * register and memory operations; nothing that needs debug info
 * (DW_OP_fbreg, pieces, entry values).  Bounded: at most
 * SONDE_EXPR_MAX_OPS operations and SONDE_EXPR_MAX_STACK entries. */
#ifndef SONDE_EXPR_H
#define SONDE_EXPR_H

#include <stdint.h>

#define SONDE_EXPR_MAX_OPS 256
#define SONDE_EXPR_MAX_STACK 32

/* Reads the 8 bytes at addr of the stack being unwound: 0, or -1 when
 * they are not in the copy. */
typedef int (*sonde_expr_read)(void *ctx, uint64_t addr, uint64_t *out);

/* Evaluates expr[0..len) with nregs registers (valid[i]: regs[i] is
 * known), first pushing initial when push_first.  0 with the top of the
 * stack in *out, or -1 when it cannot be computed: an unknown register,
 * an unreadable address, an unsupported or malformed operation. */
int sonde_expr_eval(const uint8_t *expr, uint32_t len, const uint64_t *regs,
                    const uint8_t *valid, unsigned nregs, int push_first, uint64_t initial,
                    sonde_expr_read read, void *ctx, uint64_t *out);

#endif
