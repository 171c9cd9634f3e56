/* json_about.h - a run's "about" (core/about.h) in sonde's JSON
 * documents: written by every writer of them (json.c; sonde run, lines
 * and mem into the document their launcher left), read back by the
 * loader (json_profile.c) and the page. */
#ifndef SONDE_JSON_ABOUT_H
#define SONDE_JSON_ABOUT_H

#include <stddef.h>

#include "../core/about.h"
#include "../core/buf.h"
#include "json_read.h"

/* Appends the object of the member "about": its known fields, and pid
 * when not 0. */
void sonde_json_about_write(sonde_buf *b, const sonde_about *a, int pid);

/* The "about" member of the document object root (absent: nothing known)
 * into a (initialised, empty) and *pid (when given).  0, or -1 with a
 * message naming the member that is not what it should be. */
int sonde_json_about_read(const sonde_jtree *t, const sonde_jval *root, sonde_about *a, int *pid,
                          char *err, size_t errlen);

/* Appends the document text[0..len) (written by sonde, with doc.h's
 * envelope) with `"about": {...}` inserted after its envelope; a text
 * without an envelope is appended as it is. */
void sonde_json_about_insert(sonde_buf *b, const char *text, size_t len, const sonde_about *a,
                             int pid);

#endif
