/* dump_frames.c - a frame as sonde dump prints it; see dump_frames.h. */
#include "dump_frames.h"

#include <stdio.h>
#include <string.h>

/* Appends line `line` of file (as the process sees it: a relative name is
 * from its working directory), trimmed, if readable, at `indent` spaces. */
static void put_source(sonde_buf *b, int pid, const char *file, int line, int indent)
{
    char path[4200];
    if (file[0] == '<')
        return; /* <string>, <frozen ...>: no file */
    snprintf(path, sizeof path, file[0] == '/' ? "/proc/%d/root%s" : "/proc/%d/cwd/%s", pid, file);
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    char text[512];
    int at = 0;
    while (at < line && at < 1000000 && fgets(text, sizeof text, f)) {
        if (strchr(text, '\n'))
            at++;
    }
    fclose(f);
    if (at != line)
        return;
    char *s = text;
    while (*s == ' ' || *s == '\t')
        s++;
    s[strcspn(s, "\r\n")] = '\0';
    if (*s) {
        sonde_buf_printf(b, "%*s", indent, "");
        sonde_buf_text_str(b, s);
        sonde_buf_putc(b, '\n');
    }
}

void cli_dump_frame(sonde_buf *b, const sonde_profile *p, int pid, const sonde_frame_sample *f,
                    int indent)
{
    const sonde_func *fn = &p->funcs[f->func];
    const char *file = sonde_profile_str(p, fn->file);
    sonde_buf_printf(b, "%*s", indent, "");
    sonde_buf_text_str(b, sonde_profile_str(p, fn->qualname));
    sonde_buf_puts(b, " (");
    sonde_buf_text_str(b, file);
    sonde_buf_printf(b, ":%d)\n", f->line);
    if (fn->kind == SONDE_FUNC_PYTHON)
        put_source(b, pid, file, f->line, indent + 4);
}
