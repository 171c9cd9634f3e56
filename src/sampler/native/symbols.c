/* symbols.c - symbol tables, demangling and DWARF lines of one object; see symbols.h. */
#include "symbols.h"

#include "cython_lines.h"
#include "cython_name.h"
#include "demangle.h"
#include "guard.h"
#include "libdw_dl.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct symbol {
    uint64_t start, size;
    const char *name;   /* inside the object's or the debug file's mapping */
    uint8_t rank;       /* binding: global 2, weak 1, local 0 (aliases: highest wins) */
} symbol;

struct sonde_native_symbols {
    symbol *v;
    uint32_t n;
    int has_debug;      /* debug is open */
    sonde_elf debug;    /* the separate debug file, when found */
    char debug_path[512];
    int dwarf_tried;
    int dwarf_fd;
    sonde_dw *dwarf;    /* libdw over the file with .debug_line, or NULL */
    sonde_cython_lines pyx;   /* the Cython lines of the C file last asked of */
};

/* Appends a symbol.  0, or -ENOMEM. */
static int add_symbol(sonde_native_symbols *s, uint32_t *cap, symbol sym)
{
    if (s->n == *cap) {
        *cap = *cap ? *cap * 2 : 1024;
        symbol *v = realloc(s->v, *cap * sizeof *v);
        if (!v)
            return -ENOMEM;
        s->v = v;
    }
    s->v[s->n++] = sym;
    return 0;
}

/* Adds the function symbols of symbol table section index i of e. */
static int add_table(sonde_native_symbols *s, uint32_t *cap, const sonde_elf *e,
                     const sonde_elf_sect *tab)
{
    sonde_elf_sect str;
    if (!tab->data || tab->entsize != sizeof(Elf64_Sym) ||
        sonde_elf_section_at(e, tab->link, &str) < 0 || !str.data)
        return 0;
    uint64_t count = tab->size / sizeof(Elf64_Sym);
    for (uint64_t i = 0; i < count && s->n < SONDE_NATIVE_MAX_SYMBOLS; i++) {
        Elf64_Sym sym;
        memcpy(&sym, tab->data + i * sizeof sym, sizeof sym);
        int type = ELF64_ST_TYPE(sym.st_info), bind = ELF64_ST_BIND(sym.st_info);
        if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF ||
            sym.st_size == 0 || sym.st_name >= str.size ||
            !memchr(str.data + sym.st_name, '\0', str.size - sym.st_name))
            continue;
        symbol y = { sym.st_value, sym.st_size, (const char *)str.data + sym.st_name,
                     (uint8_t)(bind == STB_GLOBAL ? 2 : bind == STB_WEAK) };
        if (add_symbol(s, cap, y) < 0)
            return -ENOMEM;
    }
    return 0;
}

static int add_tables(sonde_native_symbols *s, uint32_t *cap, const sonde_elf *e)
{
    for (uint64_t i = 1; i < e->shnum; i++) {
        sonde_elf_sect sec;
        if (sonde_elf_section_at(e, i, &sec) == 0 &&
            (sec.type == SHT_SYMTAB || sec.type == SHT_DYNSYM) && add_table(s, cap, e, &sec) < 0)
            return -ENOMEM;
    }
    return 0;
}

static size_t underscores(const char *s)
{
    size_t n = 0;
    while (s[n] == '_')
        n++;
    return n;
}

/* Same start: the widest symbol first; among aliases the name users
 * know (libc's read before __read and __GI___libc_read): fewest leading
 * underscores, then the strongest binding, then by name. */
static int by_start(const void *a, const void *b)
{
    const symbol *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    if (x->size != y->size)
        return x->size > y->size ? -1 : 1;
    size_t ux = underscores(x->name), uy = underscores(y->name);
    if (ux != uy)
        return ux < uy ? -1 : 1;
    if (x->rank != y->rank)
        return (int)y->rank - (int)x->rank;
    return strcmp(x->name, y->name);
}

/* Opens the debug file named by ob's build id, if installed. */
static void open_debug(sonde_native_symbols *s, const sonde_native_object *ob, int pid)
{
    unsigned char id[64];
    size_t n = sonde_elf_build_id(&ob->f->elf, id, sizeof id);
    if (n < 2)
        return;
    char hex[2 * sizeof id + 1];
    for (size_t i = 0; i < n; i++)
        snprintf(hex + 2 * i, 3, "%02x", id[i]);
    char path[512];
    /* The process's own root first (a container's), then sonde's. */
    snprintf(path, sizeof path, "/proc/%d/root/usr/lib/debug/.build-id/%.2s/%s.debug", pid, hex,
             hex + 2);
    const char *tries[2] = { path, strstr(path, "/usr/lib/debug") };
    for (int t = 0; t < 2 && !s->has_debug; t++) {
        if (sonde_elf_open(&s->debug, tries[t]) < 0)
            continue;
        unsigned char again[64];
        /* A debug file of another build would name wrong functions. */
        if (sonde_elf_build_id(&s->debug, again, sizeof again) == n && memcmp(again, id, n) == 0) {
            s->has_debug = 1;
            /* Its lines are opened by name later, maybe after this process
             * has ended (the symbols are shared): the host's name when it
             * is the same file. */
            struct stat mine, host;
            int same = t == 0 && stat(tries[0], &mine) == 0 && stat(tries[1], &host) == 0 &&
                       mine.st_dev == host.st_dev && mine.st_ino == host.st_ino;
            snprintf(s->debug_path, sizeof s->debug_path, "%s", same ? tries[1] : tries[t]);
        } else {
            sonde_elf_close(&s->debug);
        }
    }
}

/* The evaluation loop's parts that a compiler split off it.  GCC moves the
 * code it expects to run rarely (and, with profile-guided builds, much of
 * the loop) to a part of its own, "_PyEval_EvalFrameDefault.cold", known
 * only to .symtab: Debian strips that, so an eval frame there has no name
 * and sonde could not merge Python frames with native ones (every merge
 * "ambiguous").  The parts are found from the exported function itself:
 * its direct jumps (jcc rel32, jmp rel32) to the very start of an unwind
 * entry outside it that no symbol covers.  A byte run that only looks like
 * such a jump would have to land exactly on such a start, too. */
#define EVAL "_PyEval_EvalFrameDefault"
#define MAX_SPLIT_PARTS 8

static int add_split_parts(sonde_native_symbols *s, uint32_t *cap, const sonde_native_object *ob)
{
    uint64_t fn, size;
    if (sonde_elf_symbol(&ob->f->elf, EVAL, &fn, &size) < 0 || size < 6 || size > (1u << 24))
        return 0;
    const unsigned char *code = NULL;
    sonde_elf_sect sec;
    for (uint64_t i = 1; i < ob->f->elf.shnum && !code; i++)
        if (sonde_elf_section_at(&ob->f->elf, i, &sec) == 0 && sec.data && fn >= sec.addr &&
            fn - sec.addr <= sec.size && size <= sec.size - (fn - sec.addr))
            code = sec.data + (fn - sec.addr);
    uint64_t found[MAX_SPLIT_PARTS];
    uint32_t nfound = 0;
    for (uint64_t at = 0; code && at + 6 <= size && nfound < MAX_SPLIT_PARTS; at++) {
        uint64_t next;
        int32_t rel;
        if (code[at] == 0x0f && (code[at + 1] & 0xf0) == 0x80) {
            memcpy(&rel, code + at + 2, 4);
            next = at + 6;
        } else if (code[at] == 0xe9) {
            memcpy(&rel, code + at + 1, 4);
            next = at + 5;
        } else {
            continue;
        }
        uint64_t target = fn + next + (uint64_t)(int64_t)rel, start, end;
        if (target - fn < size || sonde_cfi_range_at(&ob->f->cfi, target, &start, &end) != 0 ||
            start != target)
            continue;
        int known = 0;
        for (uint32_t k = 0; k < s->n && !known; k++)
            known = target - s->v[k].start < s->v[k].size;
        for (uint32_t k = 0; k < nfound && !known; k++)
            known = found[k] == target;
        if (known)
            continue;
        found[nfound++] = target;
        if (add_symbol(s, cap, (symbol){ target, end - target, EVAL ".cold", 0 }) < 0)
            return -ENOMEM;
    }
    return 0;
}

/* ob's symbols, read into ob->f->symbols: set before anything is read, so a
 * read that faults (guard.h) leaves them ob's to free.  0, or -ENOMEM. */
static int load(sonde_native_object *ob, int pid)
{
    sonde_native_symbols *s = calloc(1, sizeof *s);
    if (!s)
        return -ENOMEM;
    s->dwarf_fd = -1;
    ob->f->symbols = s;
    sonde_native_files_count.symbols++;
    open_debug(s, ob, pid);
    uint32_t cap = 0;
    if (add_tables(s, &cap, &ob->f->elf) < 0 || (s->has_debug && add_tables(s, &cap, &s->debug) < 0) ||
        add_split_parts(s, &cap, ob) < 0) {
        sonde_native_symbols_free(s);
        ob->f->symbols = NULL;
        return -ENOMEM;
    }
    if (s->n)
        qsort(s->v, s->n, sizeof *s->v, by_start);
    return 0;
}

/* The symbol covering addr (link-time), or NULL.  Symbols may nest (a
 * local label inside a function): the innermost that covers addr wins,
 * looking back only over symbols that could still reach it. */
static const symbol *covering(const sonde_native_symbols *s, uint64_t addr)
{
    uint32_t lo = 0, hi = s->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (s->v[mid].start <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (uint32_t i = lo, looked = 0; i-- > 0 && looked < 64; looked++) {
        const symbol *y = &s->v[i];
        if (addr - y->start < y->size) {
            /* The first entry of this start is the one to take. */
            while (i > 0 && s->v[i - 1].start == y->start && addr - s->v[i - 1].start <
                                                                 s->v[i - 1].size)
                y = &s->v[--i];
            return y;
        }
    }
    return NULL;
}

/* libdw over whichever of the object and its debug file has a line table. */
static sonde_dw *dwarf_of(const sonde_libdw *dw, sonde_native_symbols *s,
                          const sonde_native_object *ob)
{
    if (s->dwarf_tried)
        return s->dwarf;
    s->dwarf_tried = 1;
    sonde_elf_sect sec;
    char path[4200];
    if (sonde_elf_section_find(&ob->f->elf, ".debug_line", &sec) == 0)
        snprintf(path, sizeof path, "%s", ob->f->file);
    else if (s->has_debug && sonde_elf_section_find(&s->debug, ".debug_line", &sec) == 0)
        snprintf(path, sizeof path, "%s", s->debug_path);
    else
        return NULL;
    s->dwarf_fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (s->dwarf_fd >= 0)
        s->dwarf = dw->begin(s->dwarf_fd, SONDE_DWARF_C_READ);
    return s->dwarf;
}

/* The inlined calls that cover addr below die, outermost first, into
 * out[0 .. max): through namespaces, the function that covers addr, its
 * blocks, and each inlined call's own body.  How many.  (dwarf_getscopes
 * would not do: past the innermost inlined scope it follows the abstract
 * definition, not the function the code sits in.) */
static int inline_chain(const sonde_libdw *dw, sonde_dw_die *die, uint64_t addr,
                        sonde_dw_die *out, int max, int depth)
{
    sonde_dw_die child;
    if (max <= 0 || depth > 32 || dw->child(die, &child) != 0)
        return 0;
    int looked = 0;
    do {
        int tag = dw->tag(&child);
        if (tag == SONDE_DW_TAG_inlined_subroutine && depth > 0 &&
            dw->haspc(&child, addr) == 1) {
            out[0] = child;
            return 1 + inline_chain(dw, &out[0], addr, out + 1, max - 1, depth + 1);
        }
        int into = tag == SONDE_DW_TAG_namespace ||
                   ((tag == SONDE_DW_TAG_subprogram || tag == SONDE_DW_TAG_lexical_block) &&
                    dw->haspc(&child, addr) == 1);
        int n = into ? inline_chain(dw, &child, addr, out, max,
                                    depth + (tag != SONDE_DW_TAG_namespace))
                     : 0;
        if (n > 0)
            return n;
    } while (++looked < 1000000 && dw->siblingof(&child, &child) == 0);
    return 0;
}

/* Where the inlined call `in` was made: file and line into file/line
 * (size bytes; "" and 0 when its record does not say). */
static void call_site(const sonde_libdw *dw, sonde_dw_die *in, sonde_dw_files *files,
                      size_t nfiles, char *file, size_t size, int *line)
{
    sonde_dw_attr a;
    uint64_t f, l;
    const char *name = NULL;
    if (files && dw->formudata(dw->attr(in, SONDE_DW_AT_call_file, &a), &f) == 0 && f < nfiles)
        name = dw->filesrc(files, f, NULL, NULL);
    snprintf(file, size, "%s", name ? name : "");
    *line = dw->formudata(dw->attr(in, SONDE_DW_AT_call_line, &a), &l) == 0 ? (int)l : 0;
}

/* Into out (size bytes): name demangled (demangle.h), within its bounds,
 * or a Cython function's Python name (cython_name.h): 1 for Cython's,
 * else 0.
 * name lies in a mapping that may shrink under sonde: it is copied
 * first, under the guard, so that a fault never comes while the
 * demangler's helper is being asked. */
static int set_name(char *out, size_t size, const char *name)
{
    char mangled[SONDE_DEMANGLE_MAX_MANGLED + 2];
    snprintf(mangled, sizeof mangled, "%s", name);
    return !sonde_native_demangle(mangled, out, size) && sonde_cython_name(mangled, out, size);
}

/* An inlined function's name: its linkage name demangled, else its name,
 * from its own record or its abstract origin's. */
static void inlined_name(const sonde_libdw *dw, sonde_dw_die *in, char *out, size_t size)
{
    static const unsigned int names[] = { SONDE_DW_AT_linkage_name, SONDE_DW_AT_MIPS_linkage_name,
                                          SONDE_DW_AT_name };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        sonde_dw_attr a;
        const char *name = dw->formstring(dw->attr_integrate(in, names[i], &a));
        if (name) {
            set_name(out, size, name);
            return;
        }
    }
    snprintf(out, size, "[inlined]");
}

/* The source line of addr in the function that holds its code (the line
 * table's, or in inlined code the outermost inlined call's), and the
 * functions inlined there, each at the line of the call inside it (the
 * innermost at the line table's), as a debugger lists their frames. */
static void line_of(sonde_native_symbols *s, const sonde_native_object *ob,
                    uint64_t addr, sonde_native_symbol *out)
{
    const sonde_libdw *dw = sonde_libdw_get();
    sonde_dw *dwarf = dw ? dwarf_of(dw, s, ob) : NULL;
    sonde_dw_die cu;
    if (!dwarf || !dw->addrdie(dwarf, addr, &cu))
        return;
    sonde_dw_die chain[SONDE_NATIVE_MAX_INLINED];
    int n = inline_chain(dw, &cu, addr, chain, SONDE_NATIVE_MAX_INLINED, 0);
    sonde_dw_files *files = NULL;
    size_t nfiles = 0;
    if (n > 0 && dw->getsrcfiles(&cu, &files, &nfiles) != 0)
        files = NULL;
    for (int i = 0; i < n; i++) {
        sonde_native_inlined *in = &out->inlined[i];
        inlined_name(dw, &chain[i], in->name, sizeof in->name);
        /* Its call is where the level outside it is at. */
        if (i == 0)
            call_site(dw, &chain[i], files, nfiles, out->file, sizeof out->file, &out->line);
        else
            call_site(dw, &chain[i], files, nfiles, out->inlined[i - 1].file,
                      sizeof out->inlined[i - 1].file, &out->inlined[i - 1].line);
    }
    out->ninlined = n;
    sonde_dw_line *line = dw->getsrc_die(&cu, addr);
    const char *file = line ? dw->linesrc(line, NULL, NULL) : NULL;
    int lineno = 0;
    if (!file || dw->lineno(line, &lineno) != 0)
        return;
    if (n > 0) {
        snprintf(out->inlined[n - 1].file, sizeof out->inlined[n - 1].file, "%s", file);
        out->inlined[n - 1].line = lineno;
    } else {
        snprintf(out->file, sizeof out->file, "%s", file);
        out->line = lineno;
    }
}


/* A Cython function's line in the C file Cython generated becomes the
 * line of the .pyx it came from, where that C file can be read (a build
 * in place; wheels ship no C files), as the process sees its files. */
static void cython_line(sonde_native_symbols *s, int pid, char *c_file, size_t size,
                        int *c_line)
{
    if (c_file[0] != '/')
        return;
    if (!s->pyx.c_path || strcmp(s->pyx.c_path, c_file) != 0) {
        char path[sizeof ((sonde_native_symbol *)0)->file + 32];
        snprintf(path, sizeof path, "/proc/%d/root%s", pid, c_file);
        sonde_cython_lines_load(&s->pyx, c_file, path);
    }
    const char *file;
    int line;
    if (*c_line > 0 && sonde_cython_lines_find(&s->pyx, (uint32_t)*c_line, &file, &line)) {
        snprintf(c_file, size, "%s", file);
        *c_line = line;
    }
}

/* A Cython function's implementation inlined into its Python wrapper
 * (__pyx_pf_4kern_spin in __pyx_pw_4kern_1spin: both are kern.spin to
 * Python) is one frame, at the implementation's line.  (C functions of
 * one name, a static one inlined into another's copy, stay apart, as gdb
 * lists them.) */
static void merge_same_names(sonde_native_symbol *out)
{
    int n = 0;
    for (int i = 0; i < out->ninlined; i++) {
        sonde_native_inlined *in = &out->inlined[i];
        const char *outer = n ? out->inlined[n - 1].name : out->name;
        if (strcmp(in->name, outer) == 0) {
            /* in->file is NUL-terminated within its size, which fits both */
            if (n) {
                out->inlined[n - 1].line = in->line;
                memcpy(out->inlined[n - 1].file, in->file, sizeof in->file);
            } else {
                out->line = in->line;
                memcpy(out->file, in->file, sizeof in->file);
            }
        } else if (n++ != i) {
            out->inlined[n - 1] = *in;
        }
    }
    out->ninlined = n;
}

/* sonde_native_symbolize's work, guarded by it. */
static int symbolize(sonde_native_object *ob, int pid, uint64_t pc, int return_address,
                     int with_line, sonde_native_symbol *out)
{
    if (!ob->f->symbols && load(ob, pid) < 0)
        return -ENOMEM;
    sonde_native_symbols *s = ob->f->symbols;
    uint64_t addr = pc - ob->bias, at = return_address ? addr - 1 : addr;
    const symbol *sym = covering(s, at);
    int cython = 0;
    if (sym) {
        cython = set_name(out->name, sizeof out->name, sym->name);
        out->has_symbol = 1;
        out->offset = addr - sym->start;
    } else {
        /* No symbol: the code's start as its unwind entry gives it names the
         * function, so its samples stay together; else the address itself. */
        uint64_t start = addr, end;
        if (sonde_cfi_range_at(&ob->f->cfi, at, &start, &end) != 0)
            start = addr;
        snprintf(out->name, sizeof out->name, "%s+0x%llx", ob->name, (unsigned long long)start);
        out->offset = addr - start;
    }
    if (with_line)
        line_of(s, ob, at, out);
    if (cython) {
        cython_line(s, pid, out->file, sizeof out->file, &out->line);
        for (int i = 0; i < out->ninlined; i++) /* those in the same C file (not headers') */
            if (s->pyx.c_path && strcmp(out->inlined[i].file, s->pyx.c_path) == 0)
                cython_line(s, pid, out->inlined[i].file, sizeof out->inlined[i].file,
                            &out->inlined[i].line);
        merge_same_names(out);
    }
    return 0;
}

int sonde_native_symbolize(sonde_native_object *ob, int pid, uint64_t pc, int return_address,
                           int with_line, sonde_native_symbol *out)
{
    memset(out, 0, sizeof *out);
    if (ob->f->shrunk)
        return -EIO;
    sonde_native_guard g;
    if (sigsetjmp(g.jump, 1)) {
        /* The object's file (or its debug file) shrank under sonde: it is
         * given up, and libdw's state over it, caught mid-read, is left
         * alone for good (never ended). */
        sonde_native_guard_end(&g);
        ob->f->usable = 0;
        ob->f->shrunk = 1;
        if (ob->f->symbols)
            ob->f->symbols->dwarf = NULL;
        memset(out, 0, sizeof *out);
        return -EIO;
    }
    sonde_native_guard_begin(&g);
    int rc = symbolize(ob, pid, pc, return_address, with_line, out);
    sonde_native_guard_end(&g);
    return rc;
}

void sonde_native_symbols_free(sonde_native_symbols *s)
{
    if (!s)
        return;
    if (s->dwarf)
        sonde_libdw_get()->end(s->dwarf); /* opened through it, so it loaded */
    if (s->dwarf_fd >= 0)
        close(s->dwarf_fd);
    if (s->has_debug)
        sonde_elf_close(&s->debug);
    sonde_cython_lines_free(&s->pyx);
    free(s->v);
    free(s);
}
