/* doc.c - the envelope of sonde's JSON documents; see doc.h. */
#include "doc.h"

#include <string.h>

void sonde_doc_open(sonde_buf *b, const char *mode)
{
    sonde_buf_puts(b, "{" DOC_KEY(DOC_SONDE) "1, " DOC_KEY(DOC_MODE));
    sonde_buf_json_str(b, mode);
}

size_t sonde_doc_envelope_len(const char *text, size_t len)
{
    static const char head[] = "{" DOC_KEY(DOC_SONDE) "1, " DOC_KEY(DOC_MODE) "\"";
    size_t n = sizeof head - 1;
    if (len < n || memcmp(text, head, n) != 0)
        return 0;
    /* the mode: a name of letters */
    while (n < len && text[n] >= 'a' && text[n] <= 'z')
        n++;
    return n < len && text[n] == '"' ? n + 1 : 0;
}
