/* doc_merge.h - sonde lines and mem documents of several processes summed
 * into one (sonde merge, and report and view given several files).
 *
 * Functions are matched by (file, name, first line) and their lines by
 * number: hits, times and bytes are the inputs' sums (a mem line's peak
 * and RSS figures too: the processes' together).  Where each part came
 * from is kept: the document's "parts" lists each input's process label,
 * file and functions as the input had them, and a mem document's leaks
 * and allocating stacks start with a frame naming their process ("~",
 * "process PID (command)", line 0), as profiles' do (core/merge.h).  A
 * mem timeline becomes the sum of the processes' memory over time, each
 * placed by its start when every input says when it started.  Inputs are
 * untrusted: every member is checked for its type, absent ones count 0. */
#ifndef SONDE_DOC_MERGE_H
#define SONDE_DOC_MERGE_H

#include <stddef.h>
#include <stdint.h>

#include "../core/buf.h"
#include "../formats/json_read.h"

/* One input: its document (mode lines or mem, all alike), its process's
 * label (core/merge.h's sonde_merge_label) and its file's name. */
typedef struct sonde_doc_part {
    const sonde_jtree *doc;
    const char *label;
    const char *file;
} sonde_doc_part;

/* Why b cannot be summed with a (both lines or both mem documents), in
 * words that follow the two file names, or NULL. */
const char *sonde_doc_merge_clash(const sonde_jtree *a, const sonde_jtree *b, char *why,
                                  size_t whylen);

/* The pid and command line a document's "about" holds (pid 0 and argc 0
 * when it holds none) into *pid and *a (initialised; the caller clears it). */
struct sonde_about;
void sonde_doc_merge_about(const sonde_jtree *t, int *pid, struct sonde_about *a);

/* Writes the sum of the n parts' documents (mem when mem, else lines) to
 * b.  0, or -1 with a message (out of memory). */
int sonde_doc_merge_write(sonde_buf *b, int mem, const sonde_doc_part *parts, uint32_t n,
                          char *err, size_t errlen);

#endif
