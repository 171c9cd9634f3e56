/* elf.c - a bounds-checked ELF64 reader over a read-only mapping; see elf.h. */
#include "elf.h"   /* this folder's */

#include <elf.h>   /* the system's: Elf64_Ehdr and friends */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* 1 when [off, off + len) lies within the file. */
static int in_file(const sonde_elf *e, uint64_t off, uint64_t len)
{
    return off <= e->size && len <= e->size - off;
}

/* Copies (never casts: offsets may be unaligned) section header i. */
static int section_header(const sonde_elf *e, uint64_t i, Elf64_Shdr *sh)
{
    if (i >= e->shnum)
        return -1;
    memcpy(sh, e->data + e->shoff + i * sizeof *sh, sizeof *sh);
    return 0;
}

/* The NUL-terminated string at off in string table section strtab, or
 * NULL when the section or the string runs past its bounds. */
static const char *string_at(const sonde_elf *e, const Elf64_Shdr *strtab, uint64_t off)
{
    if (strtab->sh_type == SHT_NOBITS || !in_file(e, strtab->sh_offset, strtab->sh_size) ||
        off >= strtab->sh_size)
        return NULL;
    const char *s = (const char *)e->data + strtab->sh_offset + off;
    return memchr(s, '\0', strtab->sh_size - off) ? s : NULL;
}

static int check_header(sonde_elf *e)
{
    Elf64_Ehdr h;
    memcpy(&h, e->data, sizeof h);
    if (memcmp(h.e_ident, ELFMAG, SELFMAG) != 0 || h.e_ident[EI_CLASS] != ELFCLASS64 ||
        h.e_ident[EI_DATA] != ELFDATA2LSB || h.e_ident[EI_VERSION] != EV_CURRENT)
        return -ENOEXEC;
    if (h.e_phnum && (h.e_phentsize != sizeof(Elf64_Phdr) ||
                      !in_file(e, h.e_phoff, (uint64_t)h.e_phnum * sizeof(Elf64_Phdr))))
        return -ENOEXEC;
    if (h.e_shnum && (h.e_shentsize != sizeof(Elf64_Shdr) || h.e_shstrndx >= h.e_shnum ||
                      !in_file(e, h.e_shoff, (uint64_t)h.e_shnum * sizeof(Elf64_Shdr))))
        return -ENOEXEC;
    e->phoff = h.e_phoff;
    e->phnum = h.e_phnum;
    e->shoff = h.e_shoff;
    e->shnum = h.e_shnum;   /* 0 also when numbering is extended: no sections */
    e->shstrndx = h.e_shstrndx;
    return 0;
}

int sonde_elf_open(sonde_elf *e, const char *path)
{
    memset(e, 0, sizeof *e);
    /* O_NONBLOCK: a FIFO must not hang us; it is refused below. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return -errno;
    struct stat st;
    int rc = fstat(fd, &st) < 0 ? -errno : 0;
    if (rc == 0 && (!S_ISREG(st.st_mode) || (uint64_t)st.st_size < sizeof(Elf64_Ehdr) ||
                    (uint64_t)st.st_size > SONDE_ELF_MAX_SIZE))
        rc = -ENOEXEC;
    void *data = MAP_FAILED;
    if (rc == 0) {
        data = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        rc = data == MAP_FAILED ? -errno : 0;
    }
    close(fd);
    if (rc < 0)
        return rc;
    e->data = data;
    e->size = (size_t)st.st_size;
    rc = check_header(e);
    if (rc < 0)
        sonde_elf_close(e);
    return rc;
}

int sonde_elf_adopt(sonde_elf *e, void *image, size_t size)
{
    memset(e, 0, sizeof *e);
    e->data = image;
    e->size = size;
    int rc = size < sizeof(Elf64_Ehdr) ? -ENOEXEC : check_header(e);
    if (rc < 0)
        sonde_elf_close(e);
    return rc;
}

void sonde_elf_close(sonde_elf *e)
{
    if (e->data)
        munmap((void *)e->data, e->size);
    memset(e, 0, sizeof *e);
}

/* Looks name up in the symbol table section symtab. */
static int find_in_table(const sonde_elf *e, const Elf64_Shdr *symtab, const char *name,
                         uint64_t *value, uint64_t *size)
{
    Elf64_Shdr strtab;
    if (symtab->sh_entsize != sizeof(Elf64_Sym) ||
        !in_file(e, symtab->sh_offset, symtab->sh_size) ||
        section_header(e, symtab->sh_link, &strtab) < 0)
        return -ENOENT;
    uint64_t count = symtab->sh_size / sizeof(Elf64_Sym);
    for (uint64_t i = 0; i < count; i++) {
        Elf64_Sym sym;
        memcpy(&sym, e->data + symtab->sh_offset + i * sizeof sym, sizeof sym);
        if (sym.st_shndx == SHN_UNDEF)
            continue;
        const char *s = string_at(e, &strtab, sym.st_name);
        if (s && strcmp(s, name) == 0) {
            *value = sym.st_value;
            *size = sym.st_size;
            return 0;
        }
    }
    return -ENOENT;
}

int sonde_elf_symbol(const sonde_elf *e, const char *name, uint64_t *value, uint64_t *size)
{
    static const uint32_t types[] = {SHT_DYNSYM, SHT_SYMTAB};
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        for (uint64_t i = 0; i < e->shnum; i++) {
            Elf64_Shdr sh;
            section_header(e, i, &sh);
            if (sh.sh_type == types[t] && find_in_table(e, &sh, name, value, size) == 0)
                return 0;
        }
    }
    return -ENOENT;
}

int sonde_elf_section(const sonde_elf *e, const char *name, uint64_t *addr, uint64_t *size)
{
    sonde_elf_sect s;
    if (sonde_elf_section_find(e, name, &s) < 0)
        return -ENOENT;
    *addr = s.addr;
    *size = s.size;
    return 0;
}

int sonde_elf_load_base(const sonde_elf *e, uint64_t *base)
{
    for (uint64_t i = 0; i < e->phnum; i++) {
        Elf64_Phdr ph;
        memcpy(&ph, e->data + e->phoff + i * sizeof ph, sizeof ph);
        if (ph.p_type != PT_LOAD || ph.p_offset != 0)
            continue;
        if (ph.p_align > 1 && (ph.p_align & (ph.p_align - 1)) != 0)
            return -ENOEXEC;
        *base = ph.p_align > 1 ? ph.p_vaddr & ~(ph.p_align - 1) : ph.p_vaddr;
        return 0;
    }
    return -ENOENT;
}

int sonde_elf_section_at(const sonde_elf *e, uint64_t i, sonde_elf_sect *out)
{
    Elf64_Shdr sh;
    if (i == 0 || section_header(e, i, &sh) < 0)
        return -ENOENT;
    *out = (sonde_elf_sect){
        .addr = sh.sh_addr, .size = sh.sh_size, .flags = sh.sh_flags,
        .entsize = sh.sh_entsize, .type = sh.sh_type, .link = sh.sh_link,
    };
    if (sh.sh_type != SHT_NOBITS && in_file(e, sh.sh_offset, sh.sh_size))
        out->data = e->data + sh.sh_offset;
    return 0;
}

int sonde_elf_section_find(const sonde_elf *e, const char *name, sonde_elf_sect *out)
{
    Elf64_Shdr names;
    if (section_header(e, e->shstrndx, &names) < 0)
        return -ENOENT;
    for (uint64_t i = 1; i < e->shnum; i++) {
        Elf64_Shdr sh;
        section_header(e, i, &sh);
        const char *s = string_at(e, &names, sh.sh_name);
        if (s && strcmp(s, name) == 0)
            return sonde_elf_section_at(e, i, out);
    }
    return -ENOENT;
}

/* The build id among the notes in [p, p + len), or 0. */
static size_t build_id_in(const unsigned char *p, uint64_t len, unsigned char *out,
                          size_t outsize)
{
    while (len >= sizeof(Elf64_Nhdr)) {
        Elf64_Nhdr nh;
        memcpy(&nh, p, sizeof nh);
        uint64_t name = ((uint64_t)nh.n_namesz + 3) & ~3ull;
        uint64_t desc = ((uint64_t)nh.n_descsz + 3) & ~3ull;
        if (name > len - sizeof nh || desc > len - sizeof nh - name)
            return 0;
        if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
            memcmp(p + sizeof nh, "GNU", 4) == 0 && nh.n_descsz <= outsize) {
            memcpy(out, p + sizeof nh + name, nh.n_descsz);
            return nh.n_descsz;
        }
        p += sizeof nh + name + desc;
        len -= sizeof nh + name + desc;
    }
    return 0;
}

size_t sonde_elf_build_id(const sonde_elf *e, unsigned char *out, size_t outsize)
{
    for (uint64_t i = 1; i < e->shnum; i++) {
        sonde_elf_sect s;
        if (sonde_elf_section_at(e, i, &s) == 0 && s.type == SHT_NOTE && s.data) {
            size_t n = build_id_in(s.data, s.size, out, outsize);
            if (n)
                return n;
        }
    }
    return 0;
}
