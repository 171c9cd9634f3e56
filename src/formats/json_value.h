/* json_value.h - a value of a decoded JSON document (json_read.h) written
 * out again as JSON: what passes through unchanged (a lines or mem
 * document into sonde view's page, each input's part into a merged
 * document). */
#ifndef SONDE_JSON_VALUE_H
#define SONDE_JSON_VALUE_H

#include "../core/buf.h"
#include "json_read.h"

/* Appends v (a value of t) to b: strings through sonde_buf_json_str (so
 * '<', '>' and '&' are escaped), whole numbers up to 2^53 exactly, others
 * with 17 significant digits.  The reader capped t's nesting, which bounds
 * the recursion. */
void sonde_json_value_write(sonde_buf *b, const sonde_jtree *t, const sonde_jval *v);

#endif
