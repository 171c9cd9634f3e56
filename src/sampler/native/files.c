/* files.c - ELF files shared by the processes of a recording; see files.h. */
#include "files.h"

#include <errno.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>

#include "guard.h"
#include "symbols.h"

#define VDSO_MAX (1u << 20)   /* the kernel's is two to four pages */
#define MAX_FILES 65536u      /* in the registry, held or idle */

sonde_native_files_counts sonde_native_files_count;

static sonde_native_file **registry;   /* shared files, held or idle */
static uint32_t nregistry, registry_cap, nidle;
static uint64_t releases;

/* The vdso mapped at [start, end) of process pid, copied out of it: the
 * kernel's own small ELF image (clock_gettime, gettimeofday ...), with
 * symbols and CFI like any library's but no file behind it. */
static int open_vdso(sonde_elf *e, int pid, uint64_t start, uint64_t end)
{
    size_t size = (size_t)(end - start);
    if (end <= start || size > VDSO_MAX)
        return -ENOEXEC;
    void *image = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (image == MAP_FAILED)
        return -ENOMEM;
    struct iovec local = { image, size }, remote = { (void *)(uintptr_t)start, size };
    if (process_vm_readv(pid, &local, 1, &remote, 1, 0) != (ssize_t)size) {
        munmap(image, size);
        return -EIO;
    }
    return sonde_elf_adopt(e, image, size);
}

static void close_file(sonde_native_file *f)
{
    sonde_native_symbols_free(f->symbols);
    sonde_cfi_free(&f->cfi);
    sonde_elf_close(&f->elf);
    free(f->file);
    free(f);
}

/* Opens f's image and CFI (guarded: the file may shrink while read). */
static void open_file(sonde_native_file *f, int vdso, int pid, uint64_t start, uint64_t end)
{
    sonde_native_guard g;
    if (sigsetjmp(g.jump, 1)) {   /* the file shrank while its headers were read */
        sonde_native_guard_end(&g);
        f->usable = 0;
        f->shrunk = 1;
        return;
    }
    sonde_native_guard_begin(&g);
    int opened = vdso ? open_vdso(&f->elf, pid, start, end)
                 : f->file[0] ? sonde_elf_open(&f->elf, f->file) : -ENAMETOOLONG;
    f->usable = opened == 0 && sonde_elf_load_base(&f->elf, &f->link) == 0 &&
                sonde_cfi_init(&f->cfi, &f->elf) == 0;
    sonde_native_guard_end(&g);
    sonde_native_files_count.opened += !vdso;
}

/* Closes the idle file released longest ago. */
static void evict_one(void)
{
    uint32_t oldest = nregistry;
    for (uint32_t i = 0; i < nregistry; i++)
        if (registry[i]->refs == 0 &&
            (oldest == nregistry || registry[i]->released < registry[oldest]->released))
            oldest = i;
    if (oldest == nregistry)
        return;
    close_file(registry[oldest]);
    registry[oldest] = registry[--nregistry];
    nidle--;
}

/* file's name without its /proc/PID/root prefix where that names the same
 * file (st): a name that outlives the process, for the line tables opened
 * by name later, maybe after every process that maps the file has ended. */
static const char *durable_name(const char *file, const struct stat *st)
{
    struct stat plain;
    const char *root = strncmp(file, "/proc/", 6) == 0 ? strstr(file + 6, "/root/") : NULL;
    if (root && stat(root + 5, &plain) == 0 && plain.st_dev == st->st_dev &&
        plain.st_ino == st->st_ino)
        return root + 5;
    return file;
}

sonde_native_file *sonde_native_files_get(const char *file, int vdso, int pid, uint64_t start,
                                          uint64_t end)
{
    struct stat st;
    int keyed = !vdso && file && file[0] && stat(file, &st) == 0 && S_ISREG(st.st_mode);
    if (keyed)
        file = durable_name(file, &st);
    if (keyed) {
        uint64_t mtime = (uint64_t)st.st_mtim.tv_sec * 1000000000u + (uint64_t)st.st_mtim.tv_nsec;
        for (uint32_t i = 0; i < nregistry; i++) {
            sonde_native_file *f = registry[i];
            if (f->ino == (uint64_t)st.st_ino && f->dev == (uint64_t)st.st_dev &&
                f->size == (uint64_t)st.st_size && f->mtime_ns == mtime && !f->shrunk) {
                /* Named as the newest holder reaches it: the line tables are
                 * opened by name later, maybe after the first holder ended
                 * (its /proc/PID/root is gone then). */
                char *newer = strcmp(f->file, file) ? strdup(file) : NULL;
                if (newer) {
                    free(f->file);
                    f->file = newer;
                }
                if (f->refs++ == 0)
                    nidle--;
                sonde_native_files_count.shared++;
                return f;
            }
        }
    }
    sonde_native_file *f = calloc(1, sizeof *f);
    if (!f || !(f->file = strdup(vdso || !file ? "" : file))) {
        free(f);
        return NULL;
    }
    f->refs = 1;
    open_file(f, vdso, pid, start, end);
    if (!keyed)
        return f;
    if (nregistry == registry_cap && registry_cap < MAX_FILES) {
        uint32_t cap = registry_cap ? registry_cap * 2 : 64;
        sonde_native_file **v = realloc(registry, cap * sizeof *v);
        if (v) {
            registry = v;
            registry_cap = cap;
        }
    }
    if (nregistry < registry_cap) {   /* else it stays its object's own */
        f->shared = 1;
        f->dev = (uint64_t)st.st_dev;
        f->ino = (uint64_t)st.st_ino;
        f->size = (uint64_t)st.st_size;
        f->mtime_ns = (uint64_t)st.st_mtim.tv_sec * 1000000000u + (uint64_t)st.st_mtim.tv_nsec;
        registry[nregistry++] = f;
    }
    return f;
}

void sonde_native_files_put(sonde_native_file *f)
{
    if (!f || --f->refs > 0)
        return;
    if (!f->shared) {
        close_file(f);
        return;
    }
    f->released = ++releases;
    nidle++;
    while (nidle > SONDE_NATIVE_FILES_IDLE)
        evict_one();
}
