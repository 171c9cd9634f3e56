/* cfi.c - .eh_frame / .debug_frame lookup and the CFA program; see cfi.h. */
#include "cfi.h"

#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* A read position inside a section: every read checks the end, and a
 * read past it sets bad (sticky) and gives 0. */
typedef struct cursor {
    const uint8_t *p, *end;
    const uint8_t *base;   /* the section's first byte */
    uint64_t base_addr;    /* ... and its link-time address (for pcrel) */
    int bad;
} cursor;

static uint64_t take(cursor *c, unsigned n)
{
    if (c->bad || (uint64_t)(c->end - c->p) < n) {
        c->bad = 1;
        return 0;
    }
    uint64_t v = 0;
    memcpy(&v, c->p, n);   /* little-endian host, as the objects are */
    c->p += n;
    return v;
}

static uint64_t uleb(cursor *c)
{
    uint64_t v = 0;
    for (unsigned shift = 0; !c->bad; shift += 7) {
        uint8_t b = (uint8_t)take(c, 1);
        if (shift < 64)
            v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return v;
        if (shift > 70)
            c->bad = 1;
    }
    return 0;
}

static int64_t sleb(cursor *c)
{
    uint64_t v = 0;
    unsigned shift = 0;
    uint8_t b = 0x80;
    while (!c->bad && (b & 0x80)) {
        b = (uint8_t)take(c, 1);
        if (shift < 64)
            v |= (uint64_t)(b & 0x7f) << shift;
        shift += 7;
        if (shift > 77)
            c->bad = 1;
    }
    if (shift < 64 && (b & 0x40))
        v |= ~0ull << shift;
    return (int64_t)v;
}

/* A pointer in encoding enc (DW_EH_PE_*); datarel is relative to data. */
static uint64_t pointer(cursor *c, uint8_t enc, uint64_t data)
{
    uint64_t at = c->base_addr + (uint64_t)(c->p - c->base), v;
    switch (enc & 0x0f) {
    case 0x00: v = take(c, 8); break;                            /* absptr */
    case 0x01: v = uleb(c); break;
    case 0x02: v = take(c, 2); break;
    case 0x03: v = take(c, 4); break;
    case 0x04: v = take(c, 8); break;
    case 0x09: v = (uint64_t)sleb(c); break;
    case 0x0a: v = (uint64_t)(int64_t)(int16_t)take(c, 2); break;
    case 0x0b: v = (uint64_t)(int64_t)(int32_t)take(c, 4); break;
    case 0x0c: v = take(c, 8); break;
    default: c->bad = 1; return 0;
    }
    switch (enc & 0x70) {
    case 0x00: break;
    case 0x10: v += at; break;     /* pcrel */
    case 0x30: v += data; break;   /* datarel */
    default: c->bad = 1; return 0; /* textrel, funcrel, aligned: not on x86-64 */
    }
    if (enc & 0x80)
        c->bad = 1;                /* indirect: would need the process's memory */
    return v;
}

/* One CIE's fields that its FDEs and their programs need. */
typedef struct cie {
    uint64_t code_align;
    int64_t data_align;
    uint8_t ra_reg, fde_enc, lsda_enc, has_z, signal;
    const uint8_t *insns, *insns_end;
} cie;

/* The entry (CIE or FDE) at off: its body [*body, *end), 0 or -EINVAL;
 * *id_at is where the CIE id / CIE pointer field starts. */
static int entry_at(const sonde_cfi_section *s, uint64_t off, cursor *body, uint64_t *id)
{
    if (off >= s->size)
        return -EINVAL;
    cursor c = { s->data + off, s->data + s->size, s->data, s->addr, 0 };
    uint64_t len = take(&c, 4);
    int wide = len == 0xffffffffu;
    if (wide)
        len = take(&c, 8);
    if (c.bad || len == 0 || len > (uint64_t)(c.end - c.p))
        return -EINVAL;
    cursor b = { c.p, c.p + len, s->data, s->addr, 0 };
    uint64_t id_at = (uint64_t)(c.p - s->data);
    uint64_t raw = take(&b, wide ? 8 : 4);
    if (b.bad)
        return -EINVAL;
    /* .eh_frame: 0 is a CIE, else the distance back to it from id_at;
     * .debug_frame: all ones is a CIE, else its offset. */
    if (s->eh)
        *id = raw == 0 ? UINT64_MAX : (raw <= id_at ? id_at - raw : UINT64_MAX - 1);
    else
        *id = raw == (wide ? UINT64_MAX : 0xffffffffu) ? UINT64_MAX : raw;
    *body = b;
    return 0;
}

static int parse_cie(const sonde_cfi_section *s, uint64_t off, cie *out)
{
    cursor c;
    uint64_t id;
    if (entry_at(s, off, &c, &id) < 0 || id != UINT64_MAX)
        return -EINVAL;
    memset(out, 0, sizeof *out);
    uint8_t version = (uint8_t)take(&c, 1);
    const uint8_t *aug = c.p;
    while (!c.bad && take(&c, 1) != 0)
        ;
    if (c.bad || (version != 1 && version != 3 && version != 4))
        return -EINVAL;
    if (version == 4 && (take(&c, 1) != 8 || take(&c, 1) != 0))
        return -EINVAL;   /* address size 8, no segments */
    out->code_align = uleb(&c);
    out->data_align = sleb(&c);
    out->ra_reg = (uint8_t)(version == 1 ? take(&c, 1) : uleb(&c));
    out->fde_enc = 0x00;   /* absptr unless 'R' says otherwise */
    out->lsda_enc = 0xff;
    const uint8_t *aug_end = NULL;
    for (const uint8_t *a = aug; *a && !c.bad; a++) {
        if (a == aug && *a == 'z') {
            uint64_t n = uleb(&c);
            if (n > (uint64_t)(c.end - c.p))
                return -EINVAL;
            aug_end = c.p + n;
            out->has_z = 1;
        } else if (*a == 'R') {
            out->fde_enc = (uint8_t)take(&c, 1);
        } else if (*a == 'L') {
            out->lsda_enc = (uint8_t)take(&c, 1);
        } else if (*a == 'P') {
            uint8_t enc = (uint8_t)take(&c, 1);
            pointer(&c, enc & 0x7f, 0);   /* the personality routine: skipped */
        } else if (*a == 'S') {
            out->signal = 1;
        } else if (!out->has_z) {
            return -EINVAL;   /* an augmentation we cannot skip */
        } else {
            break;            /* 'z' tells where the rest ends */
        }
    }
    if (aug_end)
        c.p = aug_end;
    if (c.bad || out->ra_reg >= SONDE_CFI_NREGS || out->code_align == 0)
        return -EINVAL;
    out->insns = c.p;
    out->insns_end = c.end;
    return 0;
}

/* The FDE at off: the addresses it covers, its CIE and its program. */
typedef struct fde {
    uint64_t start, end;
    cie cie;
    const uint8_t *insns, *insns_end;
} fde;

static int parse_fde(const sonde_cfi_section *s, uint64_t off, fde *out)
{
    cursor c;
    uint64_t cie_off;
    if (entry_at(s, off, &c, &cie_off) < 0 || cie_off >= UINT64_MAX - 1 ||
        parse_cie(s, cie_off, &out->cie) < 0)
        return -EINVAL;
    uint8_t enc = out->cie.fde_enc;
    out->start = pointer(&c, enc, 0);
    uint64_t range = pointer(&c, enc & 0x0f, 0);
    if (out->cie.has_z) {
        uint64_t n = uleb(&c);
        if (n > (uint64_t)(c.end - c.p))
            return -EINVAL;
        c.p += n;
    }
    if (c.bad || range > UINT64_MAX - out->start)
        return -EINVAL;
    out->end = out->start + range;
    out->insns = c.p;
    out->insns_end = c.end;
    return 0;
}

/* ---- the CFA program ---- */

#define STATE_DEPTH 8   /* DW_CFA_remember_state nesting kept */

typedef struct program {
    sonde_cfi_row row, initial;    /* initial: after the CIE's instructions */
    sonde_cfi_row saved[STATE_DEPTH];
    unsigned nsaved;
} program;

static void set_rule(sonde_cfi_row *r, uint64_t reg, sonde_cfi_rule rule)
{
    if (reg < SONDE_CFI_NREGS)   /* vector registers: not needed to unwind */
        r->regs[reg] = rule;
}

static sonde_cfi_rule block_rule(cursor *c, uint8_t kind)
{
    uint64_t n = uleb(c);
    sonde_cfi_rule rule = { .kind = kind, .expr = c->p };
    if (n > (uint64_t)(c->end - c->p) || n > UINT32_MAX) {
        c->bad = 1;
        return rule;
    }
    rule.expr_len = (uint32_t)n;
    c->p += n;
    return rule;
}

/* Runs instructions [c) until the location passes pc (with loc starting
 * at start); the CIE's own instructions run with pc = UINT64_MAX. */
static int run(program *pr, cursor *c, const cie *ci, uint64_t start, uint64_t pc)
{
    sonde_cfi_row *r = &pr->row;
    uint64_t loc = start;
    unsigned steps = 0;
    while (c->p < c->end && !c->bad) {
        if (++steps > 100000)
            return -EINVAL;
        uint8_t op = (uint8_t)take(c, 1), low = op & 0x3f;
        uint64_t reg, delta = 0;
        switch (op >> 6) {
        case 1: delta = low; goto advance;
        case 2:
            set_rule(r, low, (sonde_cfi_rule){ SONDE_CFI_OFFSET, 0,
                                               (int64_t)uleb(c) * ci->data_align, NULL, 0 });
            continue;
        case 3:
            if (low < SONDE_CFI_NREGS)
                r->regs[low] = pr->initial.regs[low];
            continue;
        }
        switch (op) {
        case 0x00: break;
        case 0x01: loc = pointer(c, ci->fde_enc, 0); if (loc > pc) return 0; break;
        case 0x02: delta = take(c, 1); goto advance;
        case 0x03: delta = take(c, 2); goto advance;
        case 0x04: delta = take(c, 4); goto advance;
        case 0x05: reg = uleb(c);
            set_rule(r, reg, (sonde_cfi_rule){ SONDE_CFI_OFFSET, 0,
                                               (int64_t)uleb(c) * ci->data_align, NULL, 0 });
            break;
        case 0x06: reg = uleb(c);
            if (reg < SONDE_CFI_NREGS)
                r->regs[reg] = pr->initial.regs[reg];
            break;
        case 0x07: set_rule(r, uleb(c), (sonde_cfi_rule){ .kind = SONDE_CFI_UNDEFINED }); break;
        case 0x08: set_rule(r, uleb(c), (sonde_cfi_rule){ .kind = SONDE_CFI_SAME }); break;
        case 0x09: {
            reg = uleb(c);
            uint64_t from = uleb(c);
            if (reg < SONDE_CFI_NREGS && from >= SONDE_CFI_NREGS)
                return -EINVAL;
            set_rule(r, reg, (sonde_cfi_rule){ .kind = SONDE_CFI_REGISTER, .reg = (uint8_t)from });
            break;
        }
        case 0x0a:
            if (pr->nsaved == STATE_DEPTH)
                return -EINVAL;
            pr->saved[pr->nsaved++] = *r;
            break;
        case 0x0b:
            if (pr->nsaved == 0)
                return -EINVAL;
            *r = pr->saved[--pr->nsaved];   /* the CFA rule too, as GCC's unwinder does */
            break;
        case 0x0c: r->cfa_reg = (uint8_t)uleb(c); r->cfa_off = (int64_t)uleb(c);
            r->cfa_expr = NULL; break;
        case 0x0d: r->cfa_reg = (uint8_t)uleb(c); r->cfa_expr = NULL; break;
        case 0x0e: r->cfa_off = (int64_t)uleb(c); break;
        case 0x0f: {
            sonde_cfi_rule b = block_rule(c, SONDE_CFI_EXPR);
            r->cfa_expr = b.expr;
            r->cfa_expr_len = b.expr_len;
            break;
        }
        case 0x10: reg = uleb(c); set_rule(r, reg, block_rule(c, SONDE_CFI_EXPR)); break;
        case 0x11: reg = uleb(c);
            set_rule(r, reg, (sonde_cfi_rule){ SONDE_CFI_OFFSET, 0, sleb(c) * ci->data_align,
                                               NULL, 0 });
            break;
        case 0x12: r->cfa_reg = (uint8_t)uleb(c); r->cfa_off = sleb(c) * ci->data_align;
            r->cfa_expr = NULL; break;
        case 0x13: r->cfa_off = sleb(c) * ci->data_align; break;
        case 0x14: reg = uleb(c);
            set_rule(r, reg, (sonde_cfi_rule){ SONDE_CFI_VAL_OFFSET, 0,
                                               (int64_t)uleb(c) * ci->data_align, NULL, 0 });
            break;
        case 0x15: reg = uleb(c);
            set_rule(r, reg, (sonde_cfi_rule){ SONDE_CFI_VAL_OFFSET, 0,
                                               sleb(c) * ci->data_align, NULL, 0 });
            break;
        case 0x16: reg = uleb(c); set_rule(r, reg, block_rule(c, SONDE_CFI_VAL_EXPR)); break;
        case 0x2e: uleb(c); break;   /* GNU_args_size */
        case 0x2f: reg = uleb(c);    /* GNU_negative_offset_extended */
            set_rule(r, reg, (sonde_cfi_rule){ SONDE_CFI_OFFSET, 0,
                                               -(int64_t)uleb(c) * ci->data_align, NULL, 0 });
            break;
        default: return -EINVAL;
        }
        continue;
    advance:
        if (delta > (UINT64_MAX - loc) / ci->code_align)
            return -EINVAL;
        loc += delta * ci->code_align;
        if (loc > pc)
            return 0;
    }
    return c->bad || r->cfa_reg >= SONDE_CFI_NREGS ? -EINVAL : 0;
}

static int row_of(const sonde_cfi_section *s, const fde *f, uint64_t pc, sonde_cfi_row *row)
{
    static program pr;   /* 2.5 KiB: off the stack; unwinding runs on one thread */
    memset(&pr.row, 0, sizeof pr.row);
    pr.nsaved = 0;
    pr.row.ra_reg = f->cie.ra_reg;
    pr.row.signal_frame = f->cie.signal;
    cursor c = { f->cie.insns, f->cie.insns_end, s->data, s->addr, 0 };
    if (run(&pr, &c, &f->cie, 0, UINT64_MAX) < 0)
        return -EINVAL;
    pr.initial = pr.row;
    pr.nsaved = 0;
    cursor d = { f->insns, f->insns_end, s->data, s->addr, 0 };
    if (run(&pr, &d, &f->cie, f->start, pc) < 0)
        return -EINVAL;
    *row = pr.row;
    return 0;
}

/* ---- finding the FDE ---- */

static int by_start(const void *a, const void *b)
{
    const sonde_cfi_entry *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* Indexes every FDE of s (for .debug_frame, or an .eh_frame without a
 * usable .eh_frame_hdr), sorted by start. */
static int build_index(sonde_cfi_section *s)
{
    uint32_t cap = 0;
    for (uint64_t off = 0; off + 4 <= s->size && s->nindex < SONDE_CFI_MAX_INDEX;) {
        cursor c;
        uint64_t id;
        if (entry_at(s, off, &c, &id) < 0)
            break;   /* a zero terminator or garbage: what came before stays */
        fde f;
        if (id != UINT64_MAX && parse_fde(s, off, &f) == 0 && f.end > f.start) {
            if (s->nindex == cap) {
                cap = cap ? cap * 2 : 256;
                sonde_cfi_entry *v = realloc(s->index, cap * sizeof *v);
                if (!v)
                    return -ENOMEM;
                s->index = v;
            }
            s->index[s->nindex++] = (sonde_cfi_entry){ f.start, f.end, off };
        }
        off = (uint64_t)(c.end - s->data);
    }
    if (s->nindex)
        qsort(s->index, s->nindex, sizeof *s->index, by_start);
    return 0;
}

static int find_in_index(const sonde_cfi_section *s, uint64_t pc, fde *out)
{
    uint32_t lo = 0, hi = s->nindex;   /* the last entry with start <= pc */
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (s->index[mid].start <= pc)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0 || pc >= s->index[lo - 1].end)
        return -ENOENT;
    return parse_fde(s, s->index[lo - 1].fde, out);
}

static int32_t table_word(const sonde_cfi *c, uint64_t i, int second)
{
    int32_t v;
    memcpy(&v, c->hdr_table + i * 8 + (second ? 4 : 0), 4);
    return v;
}

static int find_in_hdr(const sonde_cfi *c, uint64_t pc, fde *out)
{
    uint64_t lo = 0, hi = c->hdr_count;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (c->hdr_addr + (uint64_t)(int64_t)table_word(c, mid, 0) <= pc)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return -ENOENT;
    uint64_t at = c->hdr_addr + (uint64_t)(int64_t)table_word(c, lo - 1, 1);
    const sonde_cfi_section *s = &c->eh_frame;
    if (at < s->addr || at - s->addr >= s->size || parse_fde(s, at - s->addr, out) < 0)
        return -EINVAL;
    return pc >= out->start && pc < out->end ? 0 : -ENOENT;
}

/* Reads .eh_frame_hdr: only the table encoding every linker writes
 * (datarel sdata4) is searched; else .eh_frame gets an index. */
static void read_hdr(sonde_cfi *c, const sonde_elf_sect *h)
{
    if (!h->data || h->size < 4 || h->data[0] != 1 || h->data[3] != 0x3b)
        return;
    cursor cur = { h->data + 4, h->data + h->size, h->data, h->addr, 0 };
    pointer(&cur, h->data[1], h->addr);
    uint64_t count = pointer(&cur, h->data[2], h->addr);
    if (cur.bad || count > (uint64_t)(cur.end - cur.p) / 8)
        return;
    c->hdr_table = cur.p;
    c->hdr_addr = h->addr;
    c->hdr_count = count;
}

static void section_of(const sonde_elf *e, const char *name, int eh, sonde_cfi_section *s)
{
    sonde_elf_sect sec;
    memset(s, 0, sizeof *s);
    s->eh = eh;
    /* A compressed section (SHF_COMPRESSED) cannot be read in place. */
    if (sonde_elf_section_find(e, name, &sec) == 0 && sec.data && !(sec.flags & SHF_COMPRESSED)) {
        s->data = sec.data;
        s->addr = sec.addr;
        s->size = sec.size;
    }
}

int sonde_cfi_init(sonde_cfi *c, const sonde_elf *e)
{
    memset(c, 0, sizeof *c);
    section_of(e, ".eh_frame", 1, &c->eh_frame);
    section_of(e, ".debug_frame", 0, &c->debug_frame);
    sonde_elf_sect hdr;
    if (c->eh_frame.data && sonde_elf_section_find(e, ".eh_frame_hdr", &hdr) == 0)
        read_hdr(c, &hdr);
    int rc = 0;
    if (c->eh_frame.data && !c->hdr_table)
        rc = build_index(&c->eh_frame);
    if (rc == 0 && c->debug_frame.data)
        rc = build_index(&c->debug_frame);
    if (rc < 0)
        sonde_cfi_free(c);
    return rc;
}

void sonde_cfi_free(sonde_cfi *c)
{
    free(c->eh_frame.index);
    free(c->debug_frame.index);
    memset(c, 0, sizeof *c);
}

/* The FDE covering pc and the section it is in: 0, -ENOENT or -EINVAL. */
static int covering(const sonde_cfi *c, uint64_t pc, fde *f, const sonde_cfi_section **in)
{
    int rc = -ENOENT;
    if (c->hdr_table)
        rc = find_in_hdr(c, pc, f);
    else if (c->eh_frame.index)
        rc = find_in_index(&c->eh_frame, pc, f);
    if (rc == 0) {
        *in = &c->eh_frame;
        return 0;
    }
    if (c->debug_frame.index && (rc = find_in_index(&c->debug_frame, pc, f)) == 0)
        *in = &c->debug_frame;
    return rc;
}

int sonde_cfi_row_at(const sonde_cfi *c, uint64_t pc, sonde_cfi_row *row)
{
    fde f;
    const sonde_cfi_section *in;
    int rc = covering(c, pc, &f, &in);
    return rc == 0 ? row_of(in, &f, pc, row) : rc;
}

int sonde_cfi_range_at(const sonde_cfi *c, uint64_t pc, uint64_t *start, uint64_t *end)
{
    fde f;
    const sonde_cfi_section *in;
    int rc = covering(c, pc, &f, &in);
    if (rc == 0) {
        *start = f.start;
        *end = f.end;
    }
    return rc;
}
