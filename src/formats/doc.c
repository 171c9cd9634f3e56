/* doc.c - the envelope of sonde's JSON documents; see doc.h. */
#include "doc.h"

void sonde_doc_open(sonde_buf *b, const char *mode)
{
    sonde_buf_puts(b, "{" DOC_KEY(DOC_SONDE) "1, " DOC_KEY(DOC_MODE));
    sonde_buf_json_str(b, mode);
}
