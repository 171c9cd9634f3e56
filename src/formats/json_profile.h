/* json_profile.h - reads sonde's own JSON profile (json.c writes it) back
 * into the profile model, calling-context tree included. */
#ifndef SONDE_JSON_PROFILE_H
#define SONDE_JSON_PROFILE_H

#include <stddef.h>

#include "../core/profile.h"
#include "../core/stats.h"
#include "json_read.h"

/* The keys under which a profile's node figures are written (json.c) and
 * read, by enum sonde_node_figure; constant. */
extern const char *const sonde_json_figure_keys[SONDE_NFIGURES];

/* The key of the torch nodes' parts of each training step (step_parts.h):
 * a list of [node, step number (-1: in no step), calls, total, self]. */
#define SONDE_JSON_STEP_PARTS "torch_step_nodes"

/* 1 when t is a sonde run/record JSON profile ("mode": "run"). */
int sonde_json_profile_is(const sonde_jtree *t);

/* Fills p (initialised, empty) from t.  The file is untrusted: every index
 * is checked.  0, or -1 with a message. */
int sonde_json_profile_read(const sonde_jtree *t, sonde_profile *p, char *err, size_t errlen);

/* The "stats" of t into s (sized for p's functions), for a document with
 * no tree (one converted from a .prof file).  0, or -1 with a message. */
int sonde_json_stats_read(const sonde_jtree *t, const sonde_profile *p, sonde_stats *s,
                          char *err, size_t errlen);

#endif
