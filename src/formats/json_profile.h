/* json_profile.h - reads sonde's own JSON profile (json.c writes it) back
 * into the profile model, calling-context tree included. */
#ifndef SONDE_JSON_PROFILE_H
#define SONDE_JSON_PROFILE_H

#include <stddef.h>

#include "../core/profile.h"
#include "json_read.h"

/* 1 when t is a sonde run/record JSON profile ("mode": "run"). */
int sonde_json_profile_is(const sonde_jtree *t);

/* Fills p (initialised, empty) from t.  The file is untrusted: every index
 * is checked.  0, or -1 with a message. */
int sonde_json_profile_read(const sonde_jtree *t, sonde_profile *p, char *err, size_t errlen);

#endif
