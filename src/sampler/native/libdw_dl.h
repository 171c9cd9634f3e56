/* libdw_dl.h - elfutils' libdw, loaded when first needed (dlopen of
 * libdw.so.1), for the DWARF line tables behind native frames' file:line
 * and the inline records behind the frames of inlined functions.
 *
 * sonde builds without libdw's headers (a machine with only a compiler and
 * Python's headers builds and runs every command): the few types and
 * functions symbols.c uses are declared here as libdw.so.1's ABI has them
 * (elfutils' libdw.h: Dwarf_Die and Dwarf_Attribute are filled in by the
 * library, the rest is opaque; DWARF's tag and attribute numbers are the
 * standard's).  Where libdw.so.1 is absent, native frames keep their
 * function names, from the symbol tables sonde reads itself, and lose only
 * file:line. */
#ifndef SONDE_LIBDW_DL_H
#define SONDE_LIBDW_DL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct sonde_dw sonde_dw;             /* libdw's Dwarf */
typedef struct sonde_dw_line sonde_dw_line;   /* libdw's Dwarf_Line */
typedef struct sonde_dw_files sonde_dw_files; /* libdw's Dwarf_Files */

/* libdw's Dwarf_Die: a DIE's place, written by libdw, read by nobody else. */
typedef struct sonde_dw_die {
    void *addr;
    void *cu;
    void *abbrev;
    long padding;
} sonde_dw_die;

/* libdw's Dwarf_Attribute. */
typedef struct sonde_dw_attr {
    unsigned int code;
    unsigned int form;
    unsigned char *valp;
    void *cu;
} sonde_dw_attr;

/* DWARF's numbers (DWARF 5, section 7.5) and libdw's read-only mode. */
enum {
    SONDE_DW_AT_name = 0x03,
    SONDE_DW_AT_linkage_name = 0x6e,
    SONDE_DW_AT_MIPS_linkage_name = 0x2007, /* GCC's before DWARF 4 */
    SONDE_DW_TAG_lexical_block = 0x0b,
    SONDE_DW_TAG_inlined_subroutine = 0x1d,
    SONDE_DW_TAG_subprogram = 0x2e,
    SONDE_DW_TAG_namespace = 0x39,
    SONDE_DW_AT_call_file = 0x58,
    SONDE_DW_AT_call_line = 0x59,
    SONDE_DWARF_C_READ = 0,
};

/* The functions of libdw.so.1 that sonde calls, under libdw's own names
 * less the dwarf_ prefix. */
typedef struct sonde_libdw {
    sonde_dw *(*begin)(int fd, int cmd);
    int (*end)(sonde_dw *dw);
    sonde_dw_die *(*addrdie)(sonde_dw *dw, uint64_t addr, sonde_dw_die *result);
    int (*child)(sonde_dw_die *die, sonde_dw_die *result);
    int (*siblingof)(sonde_dw_die *die, sonde_dw_die *result);
    int (*tag)(sonde_dw_die *die);
    int (*haspc)(sonde_dw_die *die, uint64_t pc);
    sonde_dw_attr *(*attr)(sonde_dw_die *die, unsigned int name, sonde_dw_attr *result);
    int (*formudata)(sonde_dw_attr *attr, uint64_t *value);
    int (*getsrcfiles)(sonde_dw_die *cu, sonde_dw_files **files, size_t *n);
    const char *(*filesrc)(sonde_dw_files *files, size_t i, uint64_t *mtime, uint64_t *length);
    sonde_dw_line *(*getsrc_die)(sonde_dw_die *cu, uint64_t addr);
    const char *(*linesrc)(sonde_dw_line *line, uint64_t *mtime, uint64_t *length);
    int (*lineno)(sonde_dw_line *line, int *lineno);
    /* attr, or where die has none, its abstract origin's or specification's */
    sonde_dw_attr *(*attr_integrate)(sonde_dw_die *die, unsigned int name, sonde_dw_attr *result);
    const char *(*formstring)(sonde_dw_attr *attr);
} sonde_libdw;

/* libdw's functions, loaded on the first call (thread-safe); NULL when
 * libdw.so.1 or one of its functions cannot be loaded. */
const sonde_libdw *sonde_libdw_get(void);

/* Where libdw cannot be loaded, says so to f in one line (why native
 * frames have no file:line, and the package that brings it), once in the
 * life of the process; else nothing. */
void sonde_libdw_say_missing(FILE *f);

#endif
