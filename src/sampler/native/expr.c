/* expr.c - a bounded DWARF expression stack machine; see expr.h. */
#include "expr.h"

#include <string.h>

typedef struct machine {
    uint64_t stack[SONDE_EXPR_MAX_STACK];
    unsigned n;
    int bad;
} machine;

static void push(machine *m, uint64_t v)
{
    if (m->n == SONDE_EXPR_MAX_STACK)
        m->bad = 1;
    else
        m->stack[m->n++] = v;
}

static uint64_t pop(machine *m)
{
    if (m->n == 0) {
        m->bad = 1;
        return 0;
    }
    return m->stack[--m->n];
}

/* Reads an n-byte operand at *p (before end). */
static uint64_t operand(const uint8_t **p, const uint8_t *end, unsigned n, machine *m)
{
    uint64_t v = 0;
    if ((size_t)(end - *p) < n) {
        m->bad = 1;
        return 0;
    }
    memcpy(&v, *p, n);
    *p += n;
    return v;
}

static uint64_t leb(const uint8_t **p, const uint8_t *end, int is_signed, machine *m)
{
    uint64_t v = 0;
    unsigned shift = 0;
    uint8_t b = 0x80;
    while (b & 0x80) {
        if (*p == end || shift > 63) {
            m->bad = 1;
            return 0;
        }
        b = *(*p)++;
        v |= (uint64_t)(b & 0x7f) << shift;
        shift += 7;
    }
    if (is_signed && shift < 64 && (b & 0x40))
        v |= ~0ull << shift;
    return v;
}

static uint64_t sext(uint64_t v, unsigned bytes)
{
    unsigned shift = 64 - 8 * bytes;
    return (uint64_t)((int64_t)(v << shift) >> shift);
}

/* The binary operations 0x1a-0x2e (and, div, ..., ne) on a and b. */
static uint64_t binary(uint8_t op, uint64_t a, uint64_t b, machine *m)
{
    int64_t sa = (int64_t)a, sb = (int64_t)b;
    switch (op) {
    case 0x1a: return a & b;
    case 0x1b: if (b == 0 || (sa == INT64_MIN && sb == -1)) { m->bad = 1; return 0; }
        return (uint64_t)(sa / sb);
    case 0x1c: return a - b;
    case 0x1d: if (b == 0) { m->bad = 1; return 0; } return a % b;
    case 0x1e: return a * b;
    case 0x21: return a | b;
    case 0x22: return a + b;
    case 0x24: return b >= 64 ? 0 : a << b;
    case 0x25: return b >= 64 ? 0 : a >> b;
    case 0x26: return (uint64_t)(sa >> (b >= 64 ? 63 : b));
    case 0x27: return a ^ b;
    case 0x29: return sa == sb;
    case 0x2a: return sa >= sb;
    case 0x2b: return sa > sb;
    case 0x2c: return sa <= sb;
    case 0x2d: return sa < sb;
    case 0x2e: return sa != sb;
    }
    m->bad = 1;
    return 0;
}

static int is_binary(uint8_t op)
{
    return (op >= 0x1a && op <= 0x1e) || op == 0x21 || op == 0x22 ||
           (op >= 0x24 && op <= 0x27) || (op >= 0x29 && op <= 0x2e);
}

int sonde_expr_eval(const uint8_t *expr, uint32_t len, const uint64_t *regs,
                    const uint8_t *valid, unsigned nregs, int push_first, uint64_t initial,
                    sonde_expr_read read, void *ctx, uint64_t *out)
{
    machine m = { .n = 0, .bad = 0 };
    if (push_first)
        push(&m, initial);
    const uint8_t *p = expr, *end = expr + len;
    for (unsigned ops = 0; p < end && !m.bad; ops++) {
        if (ops == SONDE_EXPR_MAX_OPS)
            return -1;
        uint8_t op = *p++;
        if (op >= 0x30 && op <= 0x4f) {            /* lit0-31 */
            push(&m, op - 0x30u);
        } else if ((op >= 0x70 && op <= 0x8f) || op == 0x92) {   /* breg0-31, bregx */
            uint64_t r = op == 0x92 ? leb(&p, end, 0, &m) : op - 0x70u;
            int64_t off = (int64_t)leb(&p, end, 1, &m);
            if (r >= nregs || !valid[r])
                return -1;
            push(&m, regs[r] + (uint64_t)off);
        } else if (is_binary(op)) {
            uint64_t b = pop(&m), a = pop(&m);
            push(&m, binary(op, a, b, &m));
        } else {
            uint64_t v, w;
            switch (op) {
            case 0x06:                              /* deref */
                if (read(ctx, pop(&m), &v) < 0)
                    return -1;
                push(&m, v);
                break;
            case 0x08: push(&m, operand(&p, end, 1, &m)); break;
            case 0x09: push(&m, sext(operand(&p, end, 1, &m), 1)); break;
            case 0x0a: push(&m, operand(&p, end, 2, &m)); break;
            case 0x0b: push(&m, sext(operand(&p, end, 2, &m), 2)); break;
            case 0x0c: push(&m, operand(&p, end, 4, &m)); break;
            case 0x0d: push(&m, sext(operand(&p, end, 4, &m), 4)); break;
            case 0x0e: case 0x0f: push(&m, operand(&p, end, 8, &m)); break;
            case 0x10: push(&m, leb(&p, end, 0, &m)); break;
            case 0x11: push(&m, leb(&p, end, 1, &m)); break;
            case 0x12: v = pop(&m); push(&m, v); push(&m, v); break;   /* dup */
            case 0x13: pop(&m); break;                                  /* drop */
            case 0x14:                                                  /* over */
                if (m.n < 2)
                    return -1;
                push(&m, m.stack[m.n - 2]);
                break;
            case 0x15:                                                  /* pick */
                v = operand(&p, end, 1, &m);
                if (v >= m.n)
                    return -1;
                push(&m, m.stack[m.n - 1 - v]);
                break;
            case 0x16: v = pop(&m); w = pop(&m); push(&m, v); push(&m, w); break;
            case 0x17:                                                  /* rot */
                if (m.n < 3)
                    return -1;
                v = m.stack[m.n - 1];
                m.stack[m.n - 1] = m.stack[m.n - 2];
                m.stack[m.n - 2] = m.stack[m.n - 3];
                m.stack[m.n - 3] = v;
                break;
            case 0x19: v = pop(&m); push(&m, (int64_t)v < 0 ? -v : v); break;
            case 0x1f: push(&m, -pop(&m)); break;
            case 0x20: push(&m, ~pop(&m)); break;
            case 0x23: v = pop(&m); push(&m, v + leb(&p, end, 0, &m)); break;
            case 0x28: case 0x2f: {                                     /* bra, skip */
                int16_t skip = (int16_t)operand(&p, end, 2, &m);
                if (op == 0x28 && pop(&m) == 0)
                    break;
                if (skip < 0 ? (size_t)(-skip) > (size_t)(p - expr) : skip > end - p)
                    return -1;
                p += skip;
                break;
            }
            case 0x96: break;                                           /* nop */
            default: return -1;
            }
        }
    }
    if (m.bad || m.n == 0)
        return -1;
    *out = m.stack[m.n - 1];
    return 0;
}
