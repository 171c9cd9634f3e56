/* test_sampler_proc.c - maps parsing, remote reads, the ELF reader on good
 * and hostile files, and finding _PyRuntime in live interpreters. */
#include <elf.h>   /* the system's, to build test files */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "harness.h"
#include "sampler/proc/elf.h"
#include "sampler/proc/maps.h"
#include "sampler/proc/mem.h"
#include "sampler/proc/runtime.h"

static char tmpdir[] = "/tmp/sonde-test-proc-XXXXXX";

/* ---- helpers ---- */

static void write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    check(f != NULL, "cannot create %s", path);
    if (!f)
        return;
    check(fwrite(data, 1, len, f) == len, "cannot write %s", path);
    fclose(f);
}

/* The whole of a (small) file, malloc'd; NULL when it cannot be read. */
static unsigned char *read_whole(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    struct stat st;
    unsigned char *data = NULL;
    if (fstat(fileno(f), &st) == 0 && st.st_size > 0) {
        data = malloc((size_t)st.st_size);
        if (data && fread(data, 1, (size_t)st.st_size, f) != (size_t)st.st_size) {
            free(data);
            data = NULL;
        }
        *len = (size_t)st.st_size;
    }
    fclose(f);
    return data;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static uint64_t rng(void)   /* xorshift64: the same bytes on every run */
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static int exists(const char *path) { return access(path, X_OK) == 0; }

/* Starts argv with its stdout on a pipe, and with LD_LIBRARY_PATH=libs
 * unless libs is NULL; the child dies with us. */
static pid_t spawn(char *const argv[], const char *libs, int *out)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) < 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        dup2(fds[1], 1);
        if (libs)
            setenv("LD_LIBRARY_PATH", libs, 1);
        execv(argv[0], argv);
        _exit(127);
    }
    close(fds[1]);
    *out = fds[0];
    return pid;
}

static void stop(pid_t pid, int fd)
{
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    close(fd);
}

/* One line from fd within 10 seconds; "" on timeout or end. */
static void read_line(int fd, char *buf, size_t len)
{
    size_t n = 0;
    struct pollfd pfd = {fd, POLLIN, 0};
    while (n + 1 < len && poll(&pfd, 1, 10000) == 1) {
        if (read(fd, buf + n, 1) != 1 || buf[n] == '\n')
            break;
        n++;
    }
    buf[n] = '\0';
}

/* Waits up to 10 seconds until pid's memory map names a file whose base
 * name contains needle; 1 when it does. */
static int wait_for_mapping(pid_t pid, const char *needle)
{
    for (int tries = 0; tries < 1000; tries++) {
        sonde_maps m;
        int found = 0;
        if (sonde_maps_read(pid, &m) == 0) {
            for (size_t i = 0; i < m.count && !found; i++) {
                const char *slash = strrchr(m.v[i].path, '/');
                found = slash && strstr(slash + 1, needle);
            }
            sonde_maps_free(&m);
        }
        if (found)
            return 1;
        nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
    }
    return 0;
}

/* ---- /proc/PID/maps ---- */

/* sonde_maps_bases against a walk back from each mapping to its path's
 * offset-0 mapping (else sonde_maps_find_base: the first), on 3,000
 * mappings of 97 paths in a scrambled order, a third at offset 0. */
static void test_maps_bases_many(void)
{
    enum { N = 3000 };
    char *text = malloc(N * 96);
    size_t len = 0;
    for (unsigned i = 0; text && i < N; i++) {
        unsigned k = (i * 7919u) % 97u, off = (i * 31u) % 3u;
        len += (size_t)sprintf(text + len, "%x000-%x000 r-xp %x000 08:01 %u /lib/l%u.so\n",
                               0x10000 + 2 * i, 0x10001 + 2 * i, off, k + 1, k);
    }
    sonde_maps m;
    uint32_t *base = malloc(N * sizeof *base);
    if (!text || !base || sonde_maps_parse(&m, text, len) < 0) {
        check(0, "building 3000 mappings");
        free(text);
        free(base);
        return;
    }
    check_u64(m.count, N);
    check_u64(sonde_maps_bases(&m, base), 0);
    unsigned wrong = 0, found = 0;
    for (size_t i = 0; i < m.count; i++) {
        const sonde_map *b = NULL;
        for (size_t j = i + 1; j-- > 0 && !b;)
            if (m.v[j].offset == 0 && strcmp(m.v[j].path, m.v[i].path) == 0)
                b = &m.v[j];
        if (!b)
            b = sonde_maps_find_base(&m, m.v[i].path);
        wrong += b ? base[i] != (uint32_t)(b - m.v) : base[i] != SONDE_MAPS_NO_BASE;
        found += b != NULL;
    }
    check_u64(wrong, 0);
    check_u64(found, N);
    sonde_maps_free(&m);
    free(text);
    free(base);
}

static void test_maps_parse(void)
{
    static const char text[] =
        "00400000-00401000 r--p 00000000 08:01 123        /usr/bin/python3.11\n"
        "7f0000000000-7f0000001000 rw-p 00000000 00:00 0 \n"
        "7f0000001000-7f0000002000 r-xp 00001000 fd:00 42     /tmp/with space/lib.so (deleted)\n"
        "7f0000002000-7f0000003000 r--p 00000000 fd:00 42     /tmp/with space/lib.so (deleted)\n"
        "7f0000003000-7f0000004000 r--p 00000000 08:01 7 /tmp/new\\012line\n"
        "7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0                          [stack]";
    sonde_maps m;
    check_u64(sonde_maps_parse(&m, text, sizeof text - 1), 0);
    check_u64(m.count, 6);
    if (m.count != 6)
        return;
    check_u64(m.v[0].start, 0x400000);
    check_u64(m.v[0].end, 0x401000);
    check_str(m.v[0].perms, "r--p");
    check_str(m.v[0].path, "/usr/bin/python3.11");
    check_str(m.v[1].path, "");
    check_u64(m.v[2].offset, 0x1000);
    check_str(m.v[2].path, "/tmp/with space/lib.so");
    check(m.v[2].deleted && !m.v[0].deleted, "deleted flags");
    check_str(m.v[4].path, "/tmp/new\nline");
    check_str(m.v[5].path, "[stack]");
    check_u64(m.v[5].start, 0x7ffd00000000);
    check_u64(m.v[0].dev, makedev(8, 1));
    check_u64(m.v[0].inode, 123);
    check_u64(m.v[2].dev, makedev(0xfd, 0));
    check_u64(m.v[2].inode, 42);
    check(sonde_maps_find_base(&m, "/tmp/with space/lib.so") == &m.v[3], "offset-0 mapping");
    check(sonde_maps_find_base(&m, "/nope") == NULL, "no mapping for /nope");
    uint32_t base[6];
    check_u64(sonde_maps_bases(&m, base), 0);
    check_u64(base[0], 0);
    check_u64(base[1], SONDE_MAPS_NO_BASE);   /* anonymous */
    check_u64(base[2], 3);                    /* its offset-0 mapping lies after it */
    check_u64(base[3], 3);
    check_u64(base[4], 4);
    check_u64(base[5], 5);                    /* [stack], at offset 0 */
    sonde_maps_free(&m);
    test_maps_bases_many();

    check_u64(sonde_maps_parse(&m, "", 0), 0);
    check_u64(m.count, 0);
    sonde_maps_free(&m);

    static const char *const bad[] = {
        "garbage\n",
        "00400000-00401000 r--p\n",
        "00401000-00400000 r--p 00000000 08:01 1 /x\n",           /* end before start */
        "00400000-00401000 r--p 00000000 08:01 1x /x\n",
        "00400000-00401000 r--p 00000000 08:01 1 /x\n\n",         /* empty line */
        "10000000000000000-10000000000000001 r--p 0 0:0 0\n",     /* 17 hex digits */
        "00400000-00401000 r- 00000000 08:01 1 /x\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = sonde_maps_parse(&m, bad[i], strlen(bad[i]));
        check(rc == -EINVAL, "bad line %zu gives %d", i, rc);
        sonde_maps_free(&m);
    }
    check(sonde_maps_parse(&m, "", SONDE_MAPS_MAX_TEXT + 1) == -E2BIG, "text over the bound");

    /* Our own map names our executable at offset 0. */
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    self[n > 0 ? n : 0] = '\0';
    check_u64(sonde_maps_read(getpid(), &m), 0);
    const sonde_map *exe = sonde_maps_find_base(&m, self);
    check(exe != NULL, "own executable %s is mapped", self);
    /* The file behind it: through our root (both name it; that one first), the device and
     * inode stat gives; a mapping of another inode still gets a path; a deleted file's is
     * map_files'. */
    char file[4200], want[4200];
    struct stat st;
    if (exe) {
        snprintf(want, sizeof want, "/proc/%d/root%s", (int)getpid(), self);
        check(sonde_maps_file(getpid(), exe, file, sizeof file) == 0, "a path for %s", self);
        check_str(file, want);
        check(stat(self, &st) == 0 && (uint64_t)st.st_ino == exe->inode &&
              (uint64_t)st.st_dev == exe->dev, "the mapping's device and inode are the file's");
        sonde_map other = *exe;
        other.inode = exe->inode + 1;
        check(sonde_maps_file(getpid(), &other, file, sizeof file) == 0, "another inode");
        check_str(file, want);
        other.deleted = 1;
        check(sonde_maps_file(getpid(), &other, file, sizeof file) == 0, "a deleted file");
        snprintf(want, sizeof want, "/proc/%d/map_files/%llx-%llx", (int)getpid(),
                 (unsigned long long)exe->start, (unsigned long long)exe->end);
        check_str(file, want);
        check(sonde_maps_file(getpid(), exe, file, 8) == -ENAMETOOLONG, "a short buffer");
    }
    sonde_maps_free(&m);
    check(sonde_maps_read(999999, &m) == -ENOENT || access("/proc/999999", F_OK) == 0,
          "no maps for a missing process");
}

/* ---- process_vm_readv ---- */

static void test_mem(void)
{
    char err[512] = "";
    sonde_proc self;
    check_u64(sonde_proc_open(&self, getpid(), err, sizeof err), 0);
    static const char secret[] = "sonde reads this";
    char got[sizeof secret] = "";
    check_u64(sonde_proc_read(&self, (uint64_t)(uintptr_t)secret, got, sizeof got), 0);
    check_str(got, secret);
    check(sonde_proc_read(&self, 0, got, 8) == -EFAULT, "address 0 is unmapped");
    check(sonde_proc_read(&self, UINT64_MAX - 3, got, 8) == -EFAULT, "range wraps");
    /* A read that runs off the end of a mapping into a hole. */
    long page = sysconf(_SC_PAGESIZE);
    char *two = mmap(NULL, 2 * (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                     -1, 0);
    if (two != MAP_FAILED) {
        munmap(two + page, (size_t)page);
        uint64_t edge = (uint64_t)(uintptr_t)(two + page - 4);
        check(sonde_proc_read(&self, edge, got, 4) == 0, "the last bytes before the hole");
        check(sonde_proc_read(&self, edge, got, 8) == -EFAULT, "a partial read is an error");
        /* Ranges of any sizes in one read: counted whole up to the first hole. */
        char a[5] = "", b[4] = "", c[8] = "";
        sonde_proc_range r[] = { { (uint64_t)(uintptr_t)secret, a, 5 },
                                 { (uint64_t)(uintptr_t)(secret + 6), b, 4 },
                                 { edge, c, 8 },
                                 { (uint64_t)(uintptr_t)secret, c, 8 } };
        check(sonde_proc_read_ranges(&self, r, 2) == 2 && memcmp(a, "sonde", 5) == 0 &&
                  memcmp(b, "read", 4) == 0,
              "two ranges read in one call");
        check(sonde_proc_read_ranges(&self, r, 4) == 2, "ranges after a hole are left unread");
        r[1].addr = UINT64_MAX - 1;
        check(sonde_proc_read_ranges(&self, r, 4) == 1, "a range that wraps ends the read");
        munmap(two, (size_t)page);
    }
    check(sonde_proc_read(&self, (uint64_t)(uintptr_t)secret, got, 0) == 0, "empty read");
    check(sonde_proc_read(&self, (uint64_t)(uintptr_t)secret, got, SONDE_PROC_READ_MAX + 1) ==
              -EINVAL,
          "a read over the bound is refused");

    if (access("/proc/999999", F_OK) != 0) {
        sonde_proc p;
        int rc = sonde_proc_open(&p, 999999, err, sizeof err);
        check(rc == -ESRCH, "pid 999999: %d", rc);
        check(strstr(err, "no process with pid 999999") != NULL, "message: %s", err);
    }
    sonde_proc p;
    pid_t zombie = fork();
    if (zombie == 0)
        _exit(0);
    for (int tries = 0; tries < 1000; tries++) {   /* until it has exited */
        siginfo_t si = {0};
        if (waitid(P_PID, (id_t)zombie, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid)
            break;
        nanosleep(&(struct timespec){0, 1000 * 1000}, NULL);
    }
    int rc = sonde_proc_open(&p, zombie, err, sizeof err);
    check(rc == -EFAULT && strstr(err, "no memory map"), "zombie: %d %s", rc, err);
    waitpid(zombie, NULL, 0);
    check(sonde_proc_open(&p, 0, err, sizeof err) == -EINVAL, "pid 0");
    check(sonde_proc_open(&p, -5, err, sizeof err) == -EINVAL, "pid -5");
    check(strstr(err, "-5") != NULL, "message: %s", err);
}

/* ---- ELF ---- */

/* A minimal ELF64 file: one PT_LOAD at 0x400000, sections .shstrtab,
 * .dynstr, .dynsym (_PyRuntime defined, Py_Version undefined), .PyRuntime. */
enum { T_SHSTR = 128, T_DYNSTR = 192, T_DYNSYM = 224, T_SHDRS = 304, T_SIZE = T_SHDRS + 5 * 64 };
static const char t_shstr[] = "\0.shstrtab\0.dynstr\0.dynsym\0.PyRuntime";
static const char t_dynstr[] = "\0_PyRuntime\0Py_Version";

static void tiny_elf(unsigned char *f)
{
    memset(f, 0, T_SIZE);
    Elf64_Ehdr eh = {.e_type = ET_DYN, .e_machine = EM_X86_64, .e_version = EV_CURRENT,
                     .e_phoff = 64, .e_shoff = T_SHDRS, .e_ehsize = sizeof eh,
                     .e_phentsize = sizeof(Elf64_Phdr), .e_phnum = 1,
                     .e_shentsize = sizeof(Elf64_Shdr), .e_shnum = 5, .e_shstrndx = 1};
    memcpy(eh.e_ident, ELFMAG, SELFMAG);
    eh.e_ident[EI_CLASS] = ELFCLASS64;
    eh.e_ident[EI_DATA] = ELFDATA2LSB;
    eh.e_ident[EI_VERSION] = EV_CURRENT;
    memcpy(f, &eh, sizeof eh);
    Elf64_Phdr ph = {.p_type = PT_LOAD, .p_offset = 0, .p_vaddr = 0x400000,
                     .p_filesz = T_SIZE, .p_memsz = T_SIZE, .p_align = 0x1000};
    memcpy(f + 64, &ph, sizeof ph);
    memcpy(f + T_SHSTR, t_shstr, sizeof t_shstr);
    memcpy(f + T_DYNSTR, t_dynstr, sizeof t_dynstr);
    Elf64_Sym syms[3] = {{0},
                         {.st_name = 1, .st_shndx = 4, .st_value = 0x405000, .st_size = 0x100},
                         {.st_name = 12, .st_shndx = SHN_UNDEF}};
    memcpy(f + T_DYNSYM, syms, sizeof syms);
    Elf64_Shdr sh[5] = {
        {0},
        {.sh_name = 1, .sh_type = SHT_STRTAB, .sh_offset = T_SHSTR, .sh_size = sizeof t_shstr},
        {.sh_name = 11, .sh_type = SHT_STRTAB, .sh_offset = T_DYNSTR, .sh_size = sizeof t_dynstr},
        {.sh_name = 19, .sh_type = SHT_DYNSYM, .sh_offset = T_DYNSYM, .sh_size = sizeof syms,
         .sh_entsize = sizeof(Elf64_Sym), .sh_link = 2},
        {.sh_name = 27, .sh_type = SHT_PROGBITS, .sh_addr = 0x405000, .sh_size = 0x100},
    };
    memcpy(f + T_SHDRS, sh, sizeof sh);
}

/* Calls everything on path; returns sonde_elf_open's code. */
static int poke(const char *path)
{
    sonde_elf e;
    int rc = sonde_elf_open(&e, path);
    if (rc < 0)
        return rc;
    uint64_t a, b;
    sonde_elf_symbol(&e, "_PyRuntime", &a, &b);
    sonde_elf_symbol(&e, "main", &a, &b);
    sonde_elf_section(&e, ".PyRuntime", &a, &b);
    sonde_elf_section(&e, ".text", &a, &b);
    sonde_elf_load_base(&e, &a);
    sonde_elf_close(&e);
    return 0;
}

static void test_elf_tiny(void)
{
    char path[64];
    snprintf(path, sizeof path, "%s/tiny", tmpdir);
    unsigned char f[T_SIZE];
    tiny_elf(f);
    write_file(path, f, sizeof f);

    sonde_elf e;
    uint64_t v = 0, s = 0;
    check_u64(sonde_elf_open(&e, path), 0);
    check_u64(sonde_elf_symbol(&e, "_PyRuntime", &v, &s), 0);
    check_u64(v, 0x405000);
    check_u64(s, 0x100);
    check(sonde_elf_symbol(&e, "Py_Version", &v, &s) == -ENOENT, "undefined symbols are skipped");
    check(sonde_elf_symbol(&e, "_PyRuntim", &v, &s) == -ENOENT, "no prefix match");
    check_u64(sonde_elf_section(&e, ".PyRuntime", &v, &s), 0);
    check_u64(v, 0x405000);
    check(sonde_elf_section(&e, ".text", &v, &s) == -ENOENT, "no .text");
    check_u64(sonde_elf_load_base(&e, &v), 0);
    check_u64(v, 0x400000);
    sonde_elf_close(&e);

    /* One corruption at a time: which call fails, and how. */
    struct {
        size_t at;        /* offset of the field */
        uint64_t value;
        int size;         /* bytes */
        int open_rc;      /* what open gives */
        int sym_rc, sec_rc, base_rc;   /* then, if it opened */
    } cases[] = {
        {EI_CLASS, ELFCLASS32, 1, -ENOEXEC, 0, 0, 0},
        {EI_DATA, ELFDATA2MSB, 1, -ENOEXEC, 0, 0, 0},
        {offsetof(Elf64_Ehdr, e_shoff), T_SIZE - 10, 8, -ENOEXEC, 0, 0, 0},
        {offsetof(Elf64_Ehdr, e_shoff), UINT64_MAX - 5, 8, -ENOEXEC, 0, 0, 0},
        {offsetof(Elf64_Ehdr, e_phoff), UINT64_MAX, 8, -ENOEXEC, 0, 0, 0},
        {offsetof(Elf64_Ehdr, e_phentsize), 0, 2, -ENOEXEC, 0, 0, 0},
        {offsetof(Elf64_Ehdr, e_shentsize), 40, 2, -ENOEXEC, 0, 0, 0},
        {offsetof(Elf64_Ehdr, e_shnum), 0xffff, 2, -ENOEXEC, 0, 0, 0},
        {offsetof(Elf64_Ehdr, e_shstrndx), 9, 2, -ENOEXEC, 0, 0, 0},
        {offsetof(Elf64_Ehdr, e_shnum), 0, 2, 0, -ENOENT, -ENOENT, 0},
        {offsetof(Elf64_Ehdr, e_phnum), 0, 2, 0, 0, 0, -ENOENT},
        /* .dynsym: offset, size, entry size, link */
        {T_SHDRS + 3 * 64 + offsetof(Elf64_Shdr, sh_offset), UINT64_MAX - 8, 8, 0, -ENOENT, 0, 0},
        {T_SHDRS + 3 * 64 + offsetof(Elf64_Shdr, sh_size), UINT64_MAX, 8, 0, -ENOENT, 0, 0},
        {T_SHDRS + 3 * 64 + offsetof(Elf64_Shdr, sh_entsize), 0, 8, 0, -ENOENT, 0, 0},
        {T_SHDRS + 3 * 64 + offsetof(Elf64_Shdr, sh_link), 99, 4, 0, -ENOENT, 0, 0},
        /* .dynstr cut before the NUL ending "_PyRuntime"; a type of NOBITS */
        {T_SHDRS + 2 * 64 + offsetof(Elf64_Shdr, sh_size), 5, 8, 0, -ENOENT, 0, 0},
        {T_SHDRS + 2 * 64 + offsetof(Elf64_Shdr, sh_type), SHT_NOBITS, 4, 0, -ENOENT, 0, 0},
        /* the symbol's name past the string table */
        {T_DYNSYM + 24 + offsetof(Elf64_Sym, st_name), 0xffffffff, 4, 0, -ENOENT, 0, 0},
        /* section names past their table, and the table past the file */
        {T_SHDRS + 4 * 64 + offsetof(Elf64_Shdr, sh_name), 0x7fffffff, 4, 0, 0, -ENOENT, 0},
        {T_SHDRS + 1 * 64 + offsetof(Elf64_Shdr, sh_offset), T_SIZE, 8, 0, 0, -ENOENT, 0},
        /* the load segment: not at offset 0, a bad alignment */
        {64 + offsetof(Elf64_Phdr, p_offset), 0x1000, 8, 0, 0, 0, -ENOENT},
        {64 + offsetof(Elf64_Phdr, p_align), 0x1001, 8, 0, 0, 0, -ENOEXEC},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tiny_elf(f);
        memcpy(f + cases[i].at, &cases[i].value, (size_t)cases[i].size);
        write_file(path, f, sizeof f);
        int rc = sonde_elf_open(&e, path);
        check(rc == cases[i].open_rc, "case %zu: open gives %d", i, rc);
        if (rc < 0)
            continue;
        rc = sonde_elf_symbol(&e, "_PyRuntime", &v, &s);
        check(rc == cases[i].sym_rc, "case %zu: symbol gives %d", i, rc);
        rc = sonde_elf_section(&e, ".PyRuntime", &v, &s);
        check(rc == cases[i].sec_rc, "case %zu: section gives %d", i, rc);
        rc = sonde_elf_load_base(&e, &v);
        check(rc == cases[i].base_rc, "case %zu: load base gives %d", i, rc);
        sonde_elf_close(&e);
    }

    /* Random damage to the tiny file: any answer, no crash. */
    int opened = 0;
    for (int i = 0; i < 3000; i++) {
        tiny_elf(f);
        for (int k = 1 + (int)(rng() % 8); k > 0; k--)
            f[rng() % sizeof f] = (unsigned char)rng();
        write_file(path, f, sizeof f);
        opened += poke(path) == 0;
    }
    check(opened > 0, "some damaged files still open (%d)", opened);
}

static void test_elf_garbage(void)
{
    char path[64];
    snprintf(path, sizeof path, "%s/garbage", tmpdir);
    static unsigned char buf[16384];
    int refused = 0;
    for (int i = 0; i < 200; i++) {
        size_t len = (size_t)(rng() % sizeof buf);
        for (size_t k = 0; k < len; k++)
            buf[k] = (unsigned char)rng();
        if (i % 2) {   /* half of them with a believable identification */
            static const unsigned char ident[] = {0x7f, 'E', 'L', 'F', 2, 1, 1};
            memcpy(buf, ident, len < sizeof ident ? len : sizeof ident);
        }
        write_file(path, buf, len);
        int rc = poke(path);
        refused += rc < 0;
        if (i % 2 == 0)
            check(rc == -ENOEXEC, "random bytes %d open: %d", i, rc);
    }
    check(refused >= 100, "random files refused: %d", refused);

    sonde_elf e;
    check(sonde_elf_open(&e, "/nonexistent/file") == -ENOENT, "missing file");
    check(sonde_elf_open(&e, tmpdir) == -ENOEXEC, "a directory");
    char fifo[64];
    snprintf(fifo, sizeof fifo, "%s/fifo", tmpdir);
    if (mkfifo(fifo, 0600) == 0) {
        check(sonde_elf_open(&e, fifo) == -ENOEXEC, "a FIFO, without hanging");
        unlink(fifo);
    }
    write_file(path, "", 0);
    check(sonde_elf_open(&e, path) == -ENOEXEC, "an empty file");
    unlink(path);
}

/* A real libpython (or static python): _PyRuntime is the symbol and, from
 * 3.10, the start of .PyRuntime; cut short (when cut is set) it is
 * refused at open, as its section headers come last.  Python 3.6 and
 * older have no _PyRuntime. */
static void test_elf_libpython(const char *lib, int cut)
{
    sonde_elf e;
    uint64_t v, s, addr, size;
    check_u64(sonde_elf_open(&e, lib), 0);
    int has = sonde_elf_symbol(&e, "_PyRuntime", &v, &s) == 0;
    check(has || strstr(lib, "python3.6") || strstr(lib, "python2"), "%s: no _PyRuntime", lib);
    if (has && sonde_elf_section(&e, ".PyRuntime", &addr, &size) == 0)   /* 3.10+ */
        check(addr == v, "%s: .PyRuntime at 0x%" PRIx64 ", _PyRuntime at 0x%" PRIx64, lib,
              addr, v);
    sonde_elf_close(&e);
    if (!cut)
        return;

    size_t len = 0;
    unsigned char *data = read_whole(lib, &len);
    check(data != NULL, "cannot read %s", lib);
    if (!data)
        return;
    char path[64];
    snprintf(path, sizeof path, "%s/truncated", tmpdir);
    size_t cuts[] = {1, 63, 64, 4096, 1 << 20, len / 2, len - 64, len - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        if (cuts[i] >= len)
            continue;
        write_file(path, data, cuts[i]);
        int rc = poke(path);
        check(rc == -ENOEXEC, "%s cut to %zu bytes: %d", lib, cuts[i], rc);
    }
    unlink(path);
    free(data);
}

/* ---- _PyRuntime in live processes ---- */

/* Runs python (with LD_LIBRARY_PATH=libs unless NULL) and finds its
 * runtime; with doomed set, that file is deleted first and must be the
 * one _PyRuntime is found in. */
static void check_python(const char *python, const char *libs, const char *doomed)
{
    char *argv[] = {(char *)python, "-c",
                    "import sys, time; sys.stdout.write('%d\\n' % sys.hexversion); "
                    "sys.stdout.flush(); time.sleep(30)",
                    NULL};
    int out = -1;
    pid_t pid = spawn(argv, libs, &out);
    check(pid > 0, "cannot start %s", python);
    if (pid <= 0)
        return;
    char line[64];
    read_line(out, line, sizeof line);
    unsigned long hex = strtoul(line, NULL, 10);
    check(hex != 0, "%s did not start", python);
    check(wait_for_mapping(pid, "python"), "%s: no python mapping", python);
    if (doomed)
        check(unlink(doomed) == 0, "cannot delete %s", doomed);
    int major = (int)(hex >> 24), minor = (int)(hex >> 16 & 0xff);
    int supported = major == 3 && minor >= 8 && minor <= 13;

    char err[512] = "";
    sonde_proc p;
    sonde_runtime rt;
    check_u64(sonde_proc_open(&p, pid, err, sizeof err), 0);
    int rc = sonde_runtime_find(&p, &rt, err, sizeof err);
    if (!supported) {
        char want[32];
        snprintf(want, sizeof want, "Python %d.%d", major, minor);
        check(rc == -ENOTSUP, "%s: %d (%s)", python, rc, err);
        check(strstr(err, want) && strstr(err, SONDE_PY_RANGE), "%s: %s", python, err);
        printf("  %-44s %lx: %s\n", python, hex, err);
        stop(pid, out);
        return;
    }
    check(rc == 0, "%s: %s", python, err);
    if (doomed)
        check_str(rt.path, doomed);
    check(rt.major == major && rt.minor == minor, "%s is %d.%d, found %d.%d", python, major,
          minor, rt.major, rt.minor);
    check(rt.hexversion == 0 || rt.hexversion == hex, "%s: hexversion %x, want %lx", python,
          rt.hexversion, hex);
    check(minor < 11 || rt.hexversion == hex, "%s: 3.11+ must give the full version", python);
    unsigned char head[8];
    check_u64(sonde_proc_read(&p, rt.addr, head, sizeof head), 0);
    if (minor >= 13)
        check(memcmp(head, "xdebugpy", 8) == 0, "%s: no cookie", python);
    sonde_maps m;
    if (sonde_maps_read(pid, &m) == 0) {
        const sonde_map *base = sonde_maps_find_base(&m, rt.path);
        check(base != NULL, "%s: %s is not mapped", python, rt.path);
        /* _PyRuntime lies in a writable mapping of that file, or in 3.8 and
         * 3.9 (where it is in .bss) in the anonymous one after it. */
        int inside = 0;
        for (size_t i = 0; i < m.count; i++)
            inside |= rt.addr >= m.v[i].start && rt.addr < m.v[i].end &&
                      m.v[i].perms[1] == 'w' &&
                      (strcmp(m.v[i].path, rt.path) == 0 || m.v[i].path[0] == '\0');
        check(inside, "%s: 0x%" PRIx64 " is not in a writable mapping of %s", python, rt.addr,
              rt.path);
        sonde_maps_free(&m);
    }
    char micro[16] = "x";
    if (rt.micro >= 0)
        snprintf(micro, sizeof micro, "%d", rt.micro);
    printf("  %-44s %lx: %d.%d.%s from %s, %s %s, bias 0x%" PRIx64 ", _PyRuntime 0x%" PRIx64
           "\n",
           python, hex, rt.major, rt.minor, micro, rt.version_from,
           rt.in_libpython ? "libpython" : "executable", rt.path, rt.bias, rt.addr);

    stop(pid, out);
    check(sonde_proc_read(&p, rt.addr, head, sizeof head) == -ESRCH, "%s: read after exit",
          python);
    rc = sonde_runtime_find(&p, &rt, err, sizeof err);
    check(rc == -ESRCH && strstr(err, "no process"), "%s after exit: %d %s", python, rc, err);
}

static void test_pythons(void)
{
    int tested = 0;
    const char *home = getenv("HOME");
    if (home) {
        char pattern[4096];
        snprintf(pattern, sizeof pattern, "%s/.pyenv/versions/*/bin/python", home);
        glob_t g;
        if (glob(pattern, 0, NULL, &g) == 0) {
            for (size_t i = 0; i < g.gl_pathc; i++) {
                check_python(g.gl_pathv[i], NULL, NULL);
                tested++;
            }
            globfree(&g);
        }
    }
    if (exists("/usr/bin/python3")) {
        check_python("/usr/bin/python3", NULL, NULL);
        tested++;
    }
    check(tested > 0, "no Python interpreter to test");
}

/* Copies src to tmpdir/name; 0 on success. */
static int copy_file(const char *src, const char *name, char *dst, size_t dstlen)
{
    snprintf(dst, dstlen, "%s/%s", tmpdir, name);
    size_t len = 0;
    unsigned char *data = read_whole(src, &len);
    if (!data)
        return -1;
    write_file(dst, data, len);
    free(data);
    return chmod(dst, 0755);
}

/* The files behind a running Python deleted (as an upgrade does): the
 * executable is read through /proc/PID/exe, a libpython through
 * /proc/PID/map_files. */
static void test_deleted_files(void)
{
    char copy[128];
    if (exists("/usr/bin/python3") && copy_file("/usr/bin/python3", "python3.11", copy,
                                                 sizeof copy) == 0)
        check_python(copy, NULL, copy);
    const char *home = getenv("HOME");
    char python[4096], lib[4096];
    snprintf(python, sizeof python, "%s/.pyenv/versions/3.12.1/bin/python3", home ? home : "");
    snprintf(lib, sizeof lib, "%s/.pyenv/versions/3.12.1/lib/libpython3.12.so.1.0",
             home ? home : "");
    if (geteuid() == 0 && exists(python) &&
        copy_file(lib, "libpython3.12.so.1.0", copy, sizeof copy) == 0)
        check_python(python, tmpdir, copy);
}

static void test_not_python(void)
{
    if (!exists("/bin/sleep"))
        return;
    char *argv[] = {"/bin/sleep", "30", NULL};
    int out = -1;
    pid_t pid = spawn(argv, NULL, &out);
    check(pid > 0, "cannot start /bin/sleep");
    if (pid <= 0)
        return;
    check(wait_for_mapping(pid, "sleep"), "sleep never mapped");
    char err[512] = "";
    sonde_proc p;
    sonde_runtime rt;
    check_u64(sonde_proc_open(&p, pid, err, sizeof err), 0);
    int rc = sonde_runtime_find(&p, &rt, err, sizeof err);
    check(rc == -ENOEXEC, "sleep: %d", rc);
    check(strstr(err, "does not look like a CPython process"), "message: %s", err);

    /* Another user may not read it: the message says what to do. */
    if (geteuid() == 0) {
        int fds[2];
        check_u64(pipe(fds), 0);
        pid_t reader = fork();
        if (reader == 0) {
            close(fds[0]);
            int code = 1;
            if (setgid(65534) == 0 && setuid(65534) == 0) {
                sonde_proc q;
                int r = sonde_proc_open(&q, pid, err, sizeof err);
                code = r == -EPERM || r == -EACCES ? 0 : 2;
                if (write(fds[1], err, strlen(err)) < 0)
                    code = 3;
            }
            _exit(code);
        }
        close(fds[1]);
        char msg[512] = "";
        read_line(fds[0], msg, sizeof msg);
        close(fds[0]);
        int status = -1;
        waitpid(reader, &status, 0);
        check(WIFEXITED(status) && WEXITSTATUS(status) == 0, "as nobody: %d, %s", status, msg);
        check(strstr(msg, "permission denied") && strstr(msg, "CAP_SYS_PTRACE"), "message: %s",
              msg);
        printf("  as nobody: %s\n", msg);
    }
    stop(pid, out);
}

void test_sampler_proc(void)
{
    if (!mkdtemp(tmpdir)) {
        check(0, "mkdtemp: %s", strerror(errno));
        return;
    }
    test_maps_parse();
    test_mem();
    test_elf_tiny();
    test_elf_garbage();

    glob_t g;
    char pattern[4096];
    snprintf(pattern, sizeof pattern, "%s/.pyenv/versions/3.*/lib/libpython3.*.so.1.0",
             getenv("HOME") ? getenv("HOME") : "/root");
    if (glob(pattern, 0, NULL, &g) == 0) {
        for (size_t i = 0; i < g.gl_pathc; i++)
            test_elf_libpython(g.gl_pathv[i], i == 0);
        globfree(&g);
    }
    if (exists("/usr/bin/python3"))
        test_elf_libpython("/usr/bin/python3", 0);

    test_pythons();
    test_deleted_files();
    test_not_python();
    char path[64];
    snprintf(path, sizeof path, "%s/tiny", tmpdir);
    unlink(path);
    rmdir(tmpdir);
}
