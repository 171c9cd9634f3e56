/* cfi.h - DWARF call frame information of one x86-64 ELF object.
 *
 * Answers "how to find the caller from here" for a code address of the
 * object: the rule row of the FDE that covers it, after running its CIE's
 * and its own call frame instructions up to that address.  Two sources,
 * tried in order: .eh_frame, looked up by binary search in .eh_frame_hdr's
 * sorted table (or, without one, in an index built once by scanning
 * .eh_frame), and .debug_frame, indexed the same way.  Nothing is copied:
 * the sections are read in place in the object's read-only mapping
 * (sonde_elf), and every length, offset, pointer encoding and instruction
 * operand is checked against the section's end, so a corrupt or hostile
 * file gives -EINVAL, never a read out of bounds. */
#ifndef SONDE_CFI_H
#define SONDE_CFI_H

#include <stdint.h>

#include "../proc/elf.h"

/* DWARF's x86-64 register numbers: 0 rax, 1 rdx, 2 rcx, 3 rbx, 4 rsi,
 * 5 rdi, 6 rbp, 7 rsp, 8-15 r8-r15, 16 the return address (rip). */
#define SONDE_CFI_NREGS 17
#define SONDE_CFI_RBP 6
#define SONDE_CFI_RSP 7
#define SONDE_CFI_RIP 16

#define SONDE_CFI_MAX_INDEX (1u << 21)   /* FDEs indexed per section, at most */

enum sonde_cfi_rule_kind {
    SONDE_CFI_SAME = 0,    /* the caller's value is this frame's (the default) */
    SONDE_CFI_UNDEFINED,   /* lost: for the return address, the outermost frame */
    SONDE_CFI_OFFSET,      /* saved in memory at CFA + off */
    SONDE_CFI_VAL_OFFSET,  /* the value is CFA + off */
    SONDE_CFI_REGISTER,    /* the value is in register reg */
    SONDE_CFI_EXPR,        /* saved in memory at the address expr computes */
    SONDE_CFI_VAL_EXPR,    /* the value is what expr computes */
};

typedef struct sonde_cfi_rule {
    uint8_t kind;          /* enum sonde_cfi_rule_kind */
    uint8_t reg;
    int64_t off;
    const uint8_t *expr;   /* a DWARF expression inside the mapped section */
    uint32_t expr_len;
} sonde_cfi_rule;

/* How to compute the canonical frame address and each register of the
 * caller at one address. */
typedef struct sonde_cfi_row {
    uint8_t cfa_reg;
    int64_t cfa_off;
    const uint8_t *cfa_expr;   /* non-NULL: the CFA is what this computes */
    uint32_t cfa_expr_len;
    uint8_t ra_reg;            /* the CIE's return address column (16 on x86-64) */
    uint8_t signal_frame;      /* the CIE's 'S': the pc is not a return address */
    sonde_cfi_rule regs[SONDE_CFI_NREGS];
} sonde_cfi_row;

typedef struct sonde_cfi_entry {   /* one FDE, in an index sorted by start */
    uint64_t start, end;           /* the link-time addresses it covers */
    uint64_t fde;                  /* its offset in its section */
} sonde_cfi_entry;

typedef struct sonde_cfi_section {
    const uint8_t *data;           /* NULL: absent */
    uint64_t addr, size;           /* link-time address and size */
    int eh;                        /* 1 .eh_frame, 0 .debug_frame */
    sonde_cfi_entry *index;        /* owned; NULL while hdr serves .eh_frame */
    uint32_t nindex;
} sonde_cfi_section;

typedef struct sonde_cfi {
    sonde_cfi_section eh_frame, debug_frame;
    const uint8_t *hdr_table;      /* .eh_frame_hdr's (initial pc, FDE) pairs, datarel sdata4 */
    uint64_t hdr_addr, hdr_count;
} sonde_cfi;

/* Finds the object's call frame sections; borrows e's mapping, which must
 * outlive c.  0 (even when there are none: every lookup is then -ENOENT),
 * or -ENOMEM. */
int sonde_cfi_init(sonde_cfi *c, const sonde_elf *e);
void sonde_cfi_free(sonde_cfi *c);

/* The rule row at pc, a link-time address of the object.  0, -ENOENT when
 * no FDE covers pc, -EINVAL when the FDE or its CIE is malformed. */
int sonde_cfi_row_at(const sonde_cfi *c, uint64_t pc, sonde_cfi_row *row);

/* The link-time range [start, end) of the FDE that covers pc: one
 * function's code (or one part of it, such as its .cold block), the
 * function a stripped object no longer names.  0, -ENOENT or -EINVAL. */
int sonde_cfi_range_at(const sonde_cfi *c, uint64_t pc, uint64_t *start, uint64_t *end);

#endif
