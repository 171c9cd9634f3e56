/* elf.h - symbols, sections and load base of an ELF64 little-endian file.
 *
 * The file is untrusted (it comes from another process's view of the
 * disk): every offset and size in it is checked against the file's size
 * before use, and garbage gives an error, never a crash.  The file is
 * mapped read-only, not read in full.  (The system's <elf.h> has the same
 * name; include this one as "elf.h" from this folder.) */
#ifndef SONDE_ELF_H
#define SONDE_ELF_H

#include <stddef.h>
#include <stdint.h>

#define SONDE_ELF_MAX_SIZE (4ull << 30)   /* larger files are refused */

typedef struct sonde_elf {
    const unsigned char *data;   /* the whole file, mapped read-only */
    size_t size;
    uint64_t shoff, phoff;       /* section and program header tables */
    uint16_t shnum, phnum, shstrndx;
} sonde_elf;

/* Opens and checks path: an ELF64 LSB file whose header tables lie within
 * it.  0, or a negative errno: -ENOEXEC when it is not such a file (or is
 * not a regular file, or is over SONDE_ELF_MAX_SIZE), others from open. */
int sonde_elf_open(sonde_elf *e, const char *path);
/* The same for an image copied out of a process (its vdso): `image` is a
 * private mapping of size bytes, which e owns from then on, also when
 * the check fails (it is unmapped then). */
int sonde_elf_adopt(sonde_elf *e, void *image, size_t size);
void sonde_elf_close(sonde_elf *e);

/* The defined symbol name from .dynsym, else .symtab: its value (an
 * address before relocation) and size.  0, or -ENOENT. */
int sonde_elf_symbol(const sonde_elf *e, const char *name, uint64_t *value, uint64_t *size);

/* The section called name (e.g. ".PyRuntime"): its address and size.
 * 0, or -ENOENT. */
int sonde_elf_section(const sonde_elf *e, const char *name, uint64_t *addr, uint64_t *size);

/* The address the file's first byte is linked at: p_vaddr rounded down to
 * p_align of the PT_LOAD with p_offset 0.  Where the file's offset-0
 * mapping starts in a process, less this, is the process's load bias.
 * 0, or -ENOENT (no such segment), -ENOEXEC (a p_align not a power of 2). */
int sonde_elf_load_base(const sonde_elf *e, uint64_t *base);

/* One section: its header's fields and, when its bytes lie within the
 * file (not SHT_NOBITS), a pointer to them (else data is NULL). */
typedef struct sonde_elf_sect {
    const unsigned char *data;
    uint64_t addr, size, flags, entsize;
    uint32_t type, link;
} sonde_elf_sect;

/* Section index i (0 < i < shnum).  0, or -ENOENT. */
int sonde_elf_section_at(const sonde_elf *e, uint64_t i, sonde_elf_sect *out);

/* The first section called name, as sonde_elf_section_at gives it.  0, or
 * -ENOENT. */
int sonde_elf_section_find(const sonde_elf *e, const char *name, sonde_elf_sect *out);

/* The GNU build id (the NT_GNU_BUILD_ID note's bytes, at most 64) into
 * out; its length, or 0 when the file has none. */
size_t sonde_elf_build_id(const sonde_elf *e, unsigned char *out, size_t outsize);

#endif
