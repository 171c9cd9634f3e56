/* strtab.h - interned strings.
 *
 * Every name, file name and label in a profile is stored once and named by
 * a 32-bit id.  The table owns the bytes; ids stay valid until
 * sonde_strtab_free(), which releases all strings in one go. */
#ifndef SONDE_STRTAB_H
#define SONDE_STRTAB_H

#include <stddef.h>
#include <stdint.h>

typedef struct sonde_strtab {
    char *bytes;          /* every string, NUL-terminated, back to back */
    size_t len, cap;
    uint32_t *offsets;    /* id -> offset in bytes */
    uint32_t count;
    size_t offsets_cap;
    uint32_t *slots;      /* open-addressing hash: id + 1, 0 = empty */
    uint32_t nslots;
} sonde_strtab;

void sonde_strtab_init(sonde_strtab *t);
void sonde_strtab_free(sonde_strtab *t);
/* The id of s[0..len), adding it when new.  Returns -1 on out of memory
 * or when the table would pass 4 GiB. */
int64_t sonde_strtab_intern(sonde_strtab *t, const char *s, size_t len);
int64_t sonde_strtab_intern_cstr(sonde_strtab *t, const char *s);
/* The string of an id from this table (never NULL for a valid id). */
const char *sonde_strtab_get(const sonde_strtab *t, uint32_t id);

#endif
