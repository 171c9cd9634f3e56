/* mem_doc.c - the mem document from its figures; see mem_doc.h. */
#include "mem_doc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doc.h"

/* A float as Python writes one (repr): the fewest significant digits that
 * read back as v, in fixed notation from 1e-4 to 1e16 (with ".0" when it
 * looks like an integer, so JSON readers see a float), else with an
 * exponent. */
static void put_float(sonde_buf *b, double v)
{
    char text[64];
    int digits = 1;
    for (; digits < 17; digits++) {
        snprintf(text, sizeof text, "%.*e", digits - 1, v);
        if (strtod(text, NULL) == v)
            break;
    }
    snprintf(text, sizeof text, "%.*e", digits - 1, v);
    const char *e = strchr(text, 'e');
    int exponent = e ? atoi(e + 1) : 0;
    if (exponent >= -4 && exponent < 16) {
        int decimals = digits - 1 - exponent;
        snprintf(text, sizeof text, "%.*f", decimals > 0 ? decimals : 0, v);
        if (!strchr(text, '.'))
            strcat(text, ".0");
    }
    sonde_buf_puts(b, text);
}

static void put_line(sonde_buf *b, const sonde_mem_doc_line *l, int line_events)
{
    sonde_buf_printf(b, "{" DOC_KEY(DOC_LINE) "%d, " DOC_KEY(DOC_HITS), l->line);
    if (line_events)
        sonde_buf_printf(b, "%llu", (unsigned long long)l->hits);
    else
        sonde_buf_puts(b, "null");
    sonde_buf_printf(b, ", " DOC_KEY(DOC_ALLOC_BYTES) "%llu, " DOC_KEY(DOC_FREED_BYTES) "%llu, "
                     DOC_KEY(DOC_NET_BYTES) "%llu, " DOC_KEY(DOC_RESERVED_BYTES) "%llu, "
                     DOC_KEY(DOC_PEAK_HEAP_BYTES) "%llu, " DOC_KEY(DOC_RSS_BYTES) "%llu, "
                     DOC_KEY(DOC_RSS_INCREMENT_BYTES) "%lld, " DOC_KEY(DOC_SOURCE),
                     (unsigned long long)l->alloc, (unsigned long long)l->freed,
                     (unsigned long long)l->net, (unsigned long long)l->reserved,
                     (unsigned long long)l->peak_heap, (unsigned long long)l->rss,
                     (long long)l->rss_increment);
    sonde_buf_json_str(b, l->source);
    sonde_buf_putc(b, '}');
}

static void put_functions(sonde_buf *b, const sonde_mem_doc *d)
{
    sonde_buf_puts(b, DOC_KEY(DOC_FUNCTIONS) "[");
    for (uint32_t i = 0; i < d->nfunctions; i++) {
        const sonde_mem_doc_function *f = &d->functions[i];
        sonde_buf_puts(b, i ? ",\n {" DOC_KEY(DOC_FILE) : "\n {" DOC_KEY(DOC_FILE));
        sonde_buf_json_str(b, f->file);
        sonde_buf_puts(b, ", " DOC_KEY(DOC_NAME));
        sonde_buf_json_str(b, f->name);
        sonde_buf_printf(b, ", " DOC_KEY(DOC_FIRST_LINE) "%d, " DOC_KEY(DOC_LINES) "[",
                         f->first_line);
        for (uint32_t k = 0; k < f->nlines; k++) {
            sonde_buf_puts(b, k ? ",\n  " : "\n  ");
            put_line(b, &f->lines[k], d->line_events);
        }
        sonde_buf_puts(b, "]}");
    }
    sonde_buf_puts(b, "],\n");
}

static void put_frame(sonde_buf *b, const sonde_mem_doc_frame *f)
{
    sonde_buf_puts(b, "{" DOC_KEY(DOC_FILE));
    sonde_buf_json_str(b, f->file);
    sonde_buf_puts(b, ", " DOC_KEY(DOC_NAME));
    sonde_buf_json_str(b, f->name);
    sonde_buf_printf(b, ", " DOC_KEY(DOC_LINE) "%d, " DOC_KEY(DOC_SOURCE), f->line);
    sonde_buf_json_str(b, f->source);
    sonde_buf_putc(b, '}');
}

static void put_leaks(sonde_buf *b, const sonde_mem_doc *d)
{
    uint32_t n = d->nleaks < SONDE_MEM_DOC_LEAKS ? d->nleaks : SONDE_MEM_DOC_LEAKS;
    sonde_buf_puts(b, DOC_KEY(DOC_LEAKS) "[");
    for (uint32_t i = 0; i < n; i++) {
        const sonde_mem_doc_leak *l = &d->leaks[i];
        sonde_buf_printf(b, "%s{" DOC_KEY(DOC_BYTES) "%llu, " DOC_KEY(DOC_NATIVE_BYTES) "%llu, "
                         DOC_KEY(DOC_RESERVED_BYTES) "%llu, " DOC_KEY(DOC_STACK) "[",
                         i ? ",\n " : "\n ", (unsigned long long)l->bytes,
                         (unsigned long long)l->native, (unsigned long long)l->reserved);
        for (uint32_t k = 0; k < l->depth; k++) {
            sonde_buf_puts(b, k ? ",\n  " : "\n  ");
            put_frame(b, &l->stack[k]);
        }
        sonde_buf_puts(b, "]}");
    }
    sonde_buf_puts(b, "],\n");
}

enum series { T_NS, RSS, HEAP, RESERVED };

static uint64_t value(const sonde_mem_doc_point *p, enum series s)
{
    return s == T_NS ? p->t_ns : s == RSS ? p->rss : s == HEAP ? p->heap : p->reserved;
}

/* One of the timeline's arrays. */
static void put_series(sonde_buf *b, const char *key, const sonde_mem_doc *d, enum series s)
{
    sonde_buf_printf(b, "\"%s\": [", key);
    for (uint32_t i = 0; i < d->npoints; i++)
        sonde_buf_printf(b, i ? ", %llu" : "%llu", (unsigned long long)value(&d->points[i], s));
    sonde_buf_puts(b, "],\n");
}

static void put_timeline(sonde_buf *b, const sonde_mem_doc *d)
{
    sonde_buf_puts(b, DOC_KEY(DOC_TIMELINE) "{\n");
    put_series(b, DOC_T_NS, d, T_NS);
    put_series(b, DOC_RSS_BYTES, d, RSS);
    put_series(b, DOC_HEAP_BYTES, d, HEAP);
    put_series(b, DOC_RESERVED_BYTES, d, RESERVED);
    sonde_buf_puts(b, DOC_KEY(DOC_SPANS) "[");
    for (uint32_t i = 0; i < d->nspans; i++) {
        const sonde_mem_doc_span *sp = &d->spans[i];
        sonde_buf_puts(b, i ? ",\n {" DOC_KEY(DOC_NAME) : "\n {" DOC_KEY(DOC_NAME));
        sonde_buf_json_str(b, sp->name);
        sonde_buf_printf(b, ", " DOC_KEY(DOC_START_NS) "%llu, " DOC_KEY(DOC_END_NS) "%llu}",
                         (unsigned long long)sp->start_ns, (unsigned long long)sp->end_ns);
    }
    sonde_buf_puts(b, "]}");
}

int sonde_mem_doc_write(sonde_buf *b, const sonde_mem_doc *d)
{
    sonde_doc_open(b, DOC_MODE_MEM);
    sonde_buf_printf(b, ",\n" DOC_KEY(DOC_SAMPLE_BYTES) "%llu, " DOC_KEY(DOC_NATIVE) "%s, "
                     DOC_KEY(DOC_LINE_EVENTS) "%s, " DOC_KEY(DOC_INTERVAL_MS),
                     (unsigned long long)d->sample_bytes, d->native ? "true" : "false",
                     d->line_events ? "true" : "false");
    put_float(b, d->interval_ms);
    sonde_buf_printf(b, ",\n" DOC_KEY(DOC_HEAP_PEAK_BYTES) "%llu, " DOC_KEY(DOC_RESERVED_BYTES)
                     "%llu, " DOC_KEY(DOC_RSS_HIGH_WATER_BYTES) "%llu, "
                     DOC_KEY(DOC_UNTRACKED_BYTES) "%llu,\n",
                     (unsigned long long)d->heap_peak, (unsigned long long)d->reserved,
                     (unsigned long long)d->rss_high_water, (unsigned long long)d->untracked);
    put_functions(b, d);
    put_leaks(b, d);
    put_timeline(b, d);
    sonde_buf_puts(b, "}\n");
    return sonde_buf_ok(b) ? 0 : -1;
}
