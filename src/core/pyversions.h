/* pyversions.h - the CPython versions sonde supports, 3.FIRST to 3.LAST: the one place they are
 * named.  The C code includes it; the Makefile and the tests read its two #define lines. */
#ifndef SONDE_PYVERSIONS_H
#define SONDE_PYVERSIONS_H

#define SONDE_PY_FIRST_MINOR 8
#define SONDE_PY_LAST_MINOR 15

#define SONDE_PY_STR_(x) #x
#define SONDE_PY_STR(x) SONDE_PY_STR_(x)
/* "3.8 to 3.15", for messages */
#define SONDE_PY_RANGE                                                                           \
    "3." SONDE_PY_STR(SONDE_PY_FIRST_MINOR) " to 3." SONDE_PY_STR(SONDE_PY_LAST_MINOR)

#endif
