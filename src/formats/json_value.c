/* json_value.c - a decoded JSON value written out again; see json_value.h. */
#include "json_value.h"

#include <math.h>

static void put_number(sonde_buf *b, double v)
{
    if (!isfinite(v))
        v = 0;
    if (v == floor(v) && fabs(v) <= 9007199254740992.0)
        sonde_buf_printf(b, "%.0f", v);
    else
        sonde_buf_printf(b, "%.17g", v);
}

void sonde_json_value_write(sonde_buf *b, const sonde_jtree *t, const sonde_jval *v)
{
    switch (v->type) {
    case SONDE_J_NULL: sonde_buf_puts(b, "null"); break;
    case SONDE_J_BOOL: sonde_buf_puts(b, v->num ? "true" : "false"); break;
    case SONDE_J_NUM: put_number(b, v->num); break;
    case SONDE_J_STR: sonde_buf_json_str(b, sonde_json_str(t, v)); break;
    case SONDE_J_ARR:
        sonde_buf_putc(b, '[');
        for (uint32_t i = 0; i < v->len; i++) {
            if (i)
                sonde_buf_putc(b, ',');
            sonde_json_value_write(b, t, sonde_json_item(t, v, i));
        }
        sonde_buf_putc(b, ']');
        break;
    case SONDE_J_OBJ:
        sonde_buf_putc(b, '{');
        for (uint32_t i = 0; i < v->len; i++) {
            if (i)
                sonde_buf_putc(b, ',');
            sonde_json_value_write(b, t, &t->vals[t->items.at[v->off + 2 * i]]);
            sonde_buf_putc(b, ':');
            sonde_json_value_write(b, t, &t->vals[t->items.at[v->off + 2 * i + 1]]);
        }
        sonde_buf_putc(b, '}');
        break;
    }
}
