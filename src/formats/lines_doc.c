/* lines_doc.c - the lines document from its figures; see lines_doc.h. */
#include "lines_doc.h"

#include "doc.h"

static void put_line(sonde_buf *b, const sonde_lines_doc_line *l)
{
    sonde_buf_printf(b, "{" DOC_KEY(DOC_LINE) "%d, " DOC_KEY(DOC_HITS) "%llu, "
                     DOC_KEY(DOC_ITERATIONS) "%llu, " DOC_KEY(DOC_TIME_NS) "%llu, "
                     DOC_KEY(DOC_SOURCE), l->line, (unsigned long long)l->hits,
                     (unsigned long long)l->iterations, (unsigned long long)l->time_ns);
    sonde_buf_json_str(b, l->source);
    sonde_buf_putc(b, '}');
}

static void put_instr(sonde_buf *b, const sonde_lines_doc_instr *in)
{
    sonde_buf_printf(b, "{" DOC_KEY(DOC_OFFSET) "%d, " DOC_KEY(DOC_OPNAME), in->offset);
    sonde_buf_json_str(b, in->opname);
    sonde_buf_puts(b, ", " DOC_KEY(DOC_ARG));
    sonde_buf_json_str(b, in->arg);
    sonde_buf_printf(b, ", " DOC_KEY(DOC_LINE) "%d, " DOC_KEY(DOC_HITS) "%llu, "
                     DOC_KEY(DOC_TIME_NS) "%llu}", in->line, (unsigned long long)in->hits,
                     (unsigned long long)in->time_ns);
}

static void put_function(sonde_buf *b, const sonde_lines_doc_function *f)
{
    uint64_t total = 0;
    for (uint32_t i = 0; i < f->nlines; i++)
        total += f->lines[i].time_ns;
    sonde_buf_puts(b, "{" DOC_KEY(DOC_FILE));
    sonde_buf_json_str(b, f->file);
    sonde_buf_puts(b, ", " DOC_KEY(DOC_NAME));
    sonde_buf_json_str(b, f->name);
    sonde_buf_printf(b, ", " DOC_KEY(DOC_FIRST_LINE) "%d, " DOC_KEY(DOC_TOTAL_NS) "%llu, "
                     DOC_KEY(DOC_LINES) "[", f->first_line, (unsigned long long)total);
    for (uint32_t i = 0; i < f->nlines; i++) {
        sonde_buf_puts(b, i ? ",\n  " : "\n  ");
        put_line(b, &f->lines[i]);
    }
    sonde_buf_putc(b, ']');
    if (f->has_instrs) {
        sonde_buf_puts(b, ",\n " DOC_KEY(DOC_INSTRUCTIONS) "[");
        for (uint32_t i = 0; i < f->ninstrs; i++) {
            sonde_buf_puts(b, i ? ",\n  " : "\n  ");
            put_instr(b, &f->instrs[i]);
        }
        sonde_buf_putc(b, ']');
    }
    sonde_buf_putc(b, '}');
}

int sonde_lines_doc_write(sonde_buf *b, const sonde_lines_doc_function *fns, uint32_t n)
{
    sonde_doc_open(b, DOC_MODE_LINES);
    sonde_buf_puts(b, ",\n" DOC_KEY(DOC_FUNCTIONS) "[");
    for (uint32_t i = 0; i < n; i++) {
        sonde_buf_puts(b, i ? ",\n " : "\n ");
        put_function(b, &fns[i]);
    }
    sonde_buf_puts(b, "]}\n");
    return sonde_buf_ok(b) ? 0 : -1;
}
