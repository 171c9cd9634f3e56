/* symbols.h - names and source lines of native addresses.
 *
 * An object's function symbols come from its .symtab and .dynsym, and
 * from the .symtab of its separate debug file when there is one (found by
 * build id under /usr/lib/debug/.build-id/xx/yyyy.debug, as the
 * distribution's -dbg packages install them): all kept in one table
 * sorted by address, loaded on the object's first lookup.  An address
 * takes a symbol's name only when it lies within the symbol's size: an
 * address no symbol covers (a static function of a stripped library) is
 * named "object+0xADDR", ADDR the link-time start of the unwind entry
 * (FDE) covering it, else its own link-time address; never after the
 * symbol before it.  C++ names are demangled with libstdc++'s
 * __cxa_demangle (the demangler g++ itself uses; its output is the
 * reference users compare with), bounded in time and memory (demangle.h:
 * a name past the bounds keeps its mangled form); a Cython function is
 * given its Python name (cython_name.h).  File and line come from the
 * DWARF line table (.debug_line) of the object or its debug file, read
 * by elfutils' libdw, which handles DWARF 2-5 and compressed sections;
 * it is opened on the first address that asks for a line.  Code inlined
 * into a function is listed as gdb lists it: the function holding the
 * code at the line of the outermost inlined call, then each inlined
 * function (named from DWARF's inline records, through their abstract
 * origin) at the line of the call inside it, the innermost at the line
 * table's line.
 *
 * Lookups are not cached here: each costs a binary search plus, for
 * lines, libdw's own per-unit cache; callers that see one address many
 * times keep their own table keyed by address. */
#ifndef SONDE_NATIVE_SYMBOLS_H
#define SONDE_NATIVE_SYMBOLS_H

#include <stdint.h>

#include "objects.h"

#define SONDE_NATIVE_MAX_SYMBOLS (8u << 20)   /* function symbols kept per object */
#define SONDE_NATIVE_MAX_INLINED 8            /* inlined calls listed per address */

/* A function inlined where an address is: its name and where it was at. */
typedef struct sonde_native_inlined {
    char name[512];       /* demangled */
    char file[512];       /* "" when not known */
    int line;             /* 0 when unknown */
} sonde_native_inlined;

typedef struct sonde_native_symbol {
    char name[1024];      /* demangled; without a symbol "object+0x1234": the link-time
                             start of the unwind entry (FDE) covering the address, else
                             the address */
    int has_symbol;       /* 1 when name is a symbol's */
    uint64_t offset;      /* from the start name gives */
    char file[1024];      /* "" when there is no line table for it */
    int line;             /* 0 when unknown; in inlined code, the outermost call's */
    /* With the line: the functions inlined at the address, outermost
     * first (the code is inlined[ninlined - 1]'s); the innermost are left
     * out past SONDE_NATIVE_MAX_INLINED. */
    int ninlined;
    sonde_native_inlined inlined[SONDE_NATIVE_MAX_INLINED];
} sonde_native_symbol;

/* Names the process address pc of object ob.  return_address: pc is a
 * caller's return address (every frame but the innermost and those
 * interrupted by a signal), so the call instruction before it is what is
 * named and given a line.  with_line: look its line up too (the costly
 * part: the first lookup in an object reads its line tables).  Fills out
 * and returns 0, or -ENOMEM, or -EIO when the object's file shrank under
 * sonde (guard.h: the object is given up, out is empty). */
int sonde_native_symbolize(sonde_native_object *ob, int pid, uint64_t pc, int return_address,
                           int with_line, sonde_native_symbol *out);

/* Frees what an object's lookups loaded (NULL is fine). */
void sonde_native_symbols_free(sonde_native_symbols *s);

#endif
