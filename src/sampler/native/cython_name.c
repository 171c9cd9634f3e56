/* cython_name.c - the Python name of a function Cython compiled; see cython_name.h. */
#include "cython_name.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What Cython puts before a function's mangled name. */
static const char *const function_prefixes[] = { "__pyx_pf_", "__pyx_pw_", "__pyx_gb_",
                                                 "__pyx_f_" };

/* sym past any "__pyx_fuse_N_" (the index of a fused function's
 * specialisation: "__pyx_fuse_1_0__pyx_pw_...") and a function prefix;
 * NULL when it has none. */
static const char *after_prefix(const char *sym)
{
    while (strncmp(sym, "__pyx_fuse_", 11) == 0) {
        const char *next = strstr(sym + 11, "__pyx_");
        if (!next || next == sym + 11 || strspn(sym + 11, "0123456789_") < (size_t)(next - sym - 11))
            return NULL;
        sym = next;
    }
    for (size_t i = 0; i < sizeof function_prefixes / sizeof function_prefixes[0]; i++) {
        size_t n = strlen(function_prefixes[i]);
        if (strncmp(sym, function_prefixes[i], n) == 0)
            return sym + n;
    }
    return NULL;
}

int sonde_cython_name(const char *sym, char *out, size_t outlen)
{
    const char *p = after_prefix(sym);
    if (!p || !isdigit((unsigned char)*p) || outlen == 0)
        return 0;
    char name[1024];
    size_t at = 0;
    int parts = 0;
    /* The length-prefixed parts ("7sklearn_"), each followed by '_' and
     * more; what is left is the function's own name, maybe behind a
     * number of its own (a def function's: "15maybe_convert_objects"). */
    size_t left = strlen(p);
    for (;;) {
        char *end;
        unsigned long len = strtoul(p, &end, 10);
        size_t digits = (size_t)(end - p), rest = left - digits;
        /* len characters, '_', and something after */
        if (!digits || len == 0 || rest < 2 || len > rest - 2 || end[len] != '_')
            break;
        if (at + len + 1 >= sizeof name)
            return 0;
        memcpy(name + at, end, len);
        at += len;
        name[at++] = '.';
        parts++;
        p = end + len + 1;
        left -= digits + len + 1;
    }
    while (isdigit((unsigned char)*p))
        p++;
    if (!parts || !*p || at + strlen(p) >= sizeof name)
        return 0;
    snprintf(name + at, sizeof name - at, "%s", p);
    snprintf(out, outlen, "%s", name);
    return 1;
}
