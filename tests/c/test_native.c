/* test_native.c - native stacks of stopped processes against gdb's view of them.
 *
 * Each case starts a program that blocks at a known point (a test library
 * function reading one byte from stdin, three calls deep, built -O2
 * without frame pointers), captures its main thread with a ptrace stop,
 * unwinds the copy by CFI and names every frame; then gdb attaches to
 * the same stopped process and prints its own frames (tests/native/
 * gdb_frames.py).  Every frame gdb shows must be ours at the same depth:
 * the same pc, the same ELF symbol (gdb's `info symbol`), the same file
 * and line where gdb has them.  Programs: a C program over the library,
 * its stripped copy (.dynsym only: the static function is lib+0xOFF) and
 * a C++ library (a demangled template in an anonymous namespace), and
 * pyenv's Pythons (shared libpython with debug info) and
 * Debian's /usr/bin/python3 (static, stripped) calling the library
 * through ctypes, whose stacks are also merged with the walker's Python
 * frames.  Also: a capturing process killed mid-stop leaves its target
 * running, and CFI read from corrupted copies of a library never reads
 * out of bounds. */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <pthread.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/profile.h"
#include "harness.h"
#include "sampler/native/merge.h"
#include "sampler/native/objects.h"
#include "sampler/native/perf.h"
#include "sampler/native/ptrace.h"
#include "sampler/native/symbols.h"
#include "sampler/native/unwind.h"
#include "sampler/walker.h"

#define DIR SONDE_TEST_NATIVE_DIR
#define MAX_FRAMES 128

typedef struct target {
    pid_t pid;
    int in, out;   /* its stdin (we write), its stdout (we read) */
} target;

/* Starts argv with stdin and stdout on pipes; waits for its "ready" line
 * (the library prints it as it blocks).  0, or -1. */
static int start(char *const argv[], target *t)
{
    int in[2], out[2];
    if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0)
        return -1;
    t->pid = fork();
    if (t->pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        dup2(in[0], 0);
        dup2(out[1], 1);
        execv(argv[0], argv);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    t->in = in[1];
    t->out = out[0];
    char line[16] = "";
    size_t n = 0;
    struct pollfd pfd = { t->out, POLLIN, 0 };
    while (n + 1 < sizeof line && poll(&pfd, 1, 20000) == 1 && read(t->out, line + n, 1) == 1 &&
           line[n] != '\n')
        n++;
    line[n] = '\0';
    if (strcmp(line, "ready") != 0)
        return -1;
    /* "ready" comes just before the read: wait until the thread is in it
     * (system call 0 in /proc/PID/syscall), for at most 20 seconds. */
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/syscall", t->pid);
    for (int tries = 0; tries < 2000; tries++) {
        char call[32] = "";
        FILE *f = fopen(path, "r");
        int got = f && fgets(call, sizeof call, f) != NULL;
        if (f)
            fclose(f);
        if (got && strncmp(call, "0 ", 2) == 0)
            return 0;
        nanosleep(&(struct timespec){ 0, 10 * 1000 * 1000 }, NULL);
    }
    return -1;
}

/* Lets the target return (one byte on its stdin) and reaps it. */
static void finish(target *t)
{
    if (write(t->in, "x", 1) != 1)
        kill(t->pid, SIGKILL);
    close(t->in);
    close(t->out);
    int status;
    waitpid(t->pid, &status, 0);
}

typedef struct frame_view {   /* one frame as ours or gdb's */
    unsigned long long pc;
    char symbol[1024];        /* "" when no symbol covers it */
    char label[1024];         /* ours: the name we give it ("lib+0xOFF" without a symbol) */
    char file[1024];          /* "" when unknown */
    int line;
    int kind;                 /* ours: enum sonde_merge_kind */
} frame_view;

static const char *base(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* Our frames of the stopped thread tid: captured, unwound, named. */
static uint32_t ours(int pid, frame_view *v, int *complete)
{
    sonde_native_objects o;
    static uint8_t copy[SONDE_NATIVE_STACK_MAX];
    sonde_native_stack st = { .data = copy, .cap = sizeof copy };
    sonde_native_frame frames[MAX_FRAMES];
    sonde_native_counts counts = { 0 };
    uint32_t n = 0;
    if (sonde_native_objects_init(&o, pid) < 0)
        return 0;
    int rc = sonde_native_ptrace_capture(pid, pid, &st, NULL, NULL, NULL);
    check(rc == 0, "capture of %d: %s", pid, strerror(-rc));
    int end = rc == 0 ? sonde_native_unwind(&o, &st, frames, MAX_FRAMES, &n, &counts) : -1;
    *complete = end == SONDE_NATIVE_COMPLETE;
    for (uint32_t i = 0; i < n; i++) {
        sonde_native_object *ob = sonde_native_objects_find(&o, frames[i].pc - (i > 0));
        sonde_native_symbol s;
        memset(&v[i], 0, sizeof v[i]);
        v[i].pc = frames[i].pc;
        if (ob && sonde_native_symbolize(ob, pid, frames[i].pc, i > 0, 1, &s) == 0) {
            snprintf(v[i].symbol, sizeof v[i].symbol, "%s", s.has_symbol ? s.name : "");
            snprintf(v[i].file, sizeof v[i].file, "%s", s.file);
            snprintf(v[i].label, sizeof v[i].label, "%s", s.name);
            v[i].line = s.line;
        }
        int interp = ob && (strncmp(ob->name, "libpython", 9) == 0 ||
                            strncmp(ob->name, "python", 6) == 0);
        v[i].kind = sonde_merge_kind_of(v[i].symbol[0] ? v[i].symbol : NULL, interp);
    }
    sonde_native_objects_free(&o);
    return n;
}

/* gdb's frames of the stopped process, inline frames left out. */
static uint32_t gdbs(int pid, frame_view *v)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd,
             "gdb -nx -batch -iex 'set auto-load python-scripts off' -p %d "
             "-x " SONDE_TEST_NATIVE_SRC "/gdb_frames.py 2>/dev/null",
             pid);
    FILE *f = popen(cmd, "r");
    uint32_t n = 0;
    char line[2048];
    while (f && fgets(line, sizeof line, f) && n < MAX_FRAMES) {
        frame_view *g = &v[n];
        memset(g, 0, sizeof *g);
        if (strstr(line, "\tinlined") ||
            sscanf(line, "FRAME %llx %d %1023[^\t]\t%1023[^\t]\t", &g->pc, &g->line, g->file,
                   g->symbol) != 4)
            continue;
        if (strcmp(g->symbol, "?") == 0)
            g->symbol[0] = '\0';
        if (strcmp(g->file, "?") == 0)
            g->file[0] = '\0';
        n++;
    }
    if (f)
        pclose(f);
    return n;
}

/* gdb prints a clone's name without its number ("f.constprop" for
 * "f.constprop.0"); anything else must be the same. */
static int same_symbol(const char *ours_, const char *gdbs_)
{
    size_t n = strlen(gdbs_);
    if (strncmp(ours_, gdbs_, n) != 0)
        return 0;
    if (ours_[n] == '\0')
        return 1;
    if (ours_[n] != '.' || !ours_[n + 1])
        return 0;
    for (const char *p = ours_ + n + 1; *p; p++)
        if (*p < '0' || *p > '9')
            return 0;
    return 1;
}

/* Every frame gdb shows is ours at the same depth; returns how many of
 * ours there are. */
static uint32_t compare_with_gdb(int pid, const char *what, frame_view *v, int *complete)
{
    static frame_view g[MAX_FRAMES];
    uint32_t n = ours(pid, v, complete), ng = gdbs(pid, g);
    check(ng >= 4, "%s: gdb printed %u frames", what, ng);
    check(n >= ng, "%s: %u frames, gdb has %u", what, n, ng);
    for (uint32_t i = 0; i < ng && i < n; i++) {
        check(v[i].pc == g[i].pc, "%s frame %u: pc %llx, gdb's %llx", what, i, v[i].pc, g[i].pc);
        if (g[i].symbol[0])
            check(same_symbol(v[i].symbol, g[i].symbol), "%s frame %u: '%s', gdb's '%s'", what,
                  i, v[i].symbol, g[i].symbol);
        else
            check(v[i].symbol[0] == '\0', "%s frame %u: '%s', gdb has no symbol", what, i,
                  v[i].symbol);
        if (g[i].line > 0 && v[i].symbol[0])
            check(v[i].line == g[i].line && strcmp(base(v[i].file), base(g[i].file)) == 0,
                  "%s frame %u (%s): %s:%d, gdb's %s:%d", what, i, v[i].symbol, v[i].file,
                  v[i].line, g[i].file, g[i].line);
    }
    return n;
}

static int have_gdb(void)
{
    return access("/usr/bin/gdb", X_OK) == 0;
}

/* The frames our test library contributes, innermost first. */
static void check_library_frames(const char *what, const frame_view *v, uint32_t n, int stripped)
{
    check(n >= 4, "%s: %u frames", what, n);
    if (n < 4)
        return;
    check(strcmp(v[0].symbol, "read") == 0, "%s: innermost '%s'", what, v[0].symbol);
    if (stripped)
        check(v[1].symbol[0] == '\0' && strncmp(v[1].label, "libtl_stripped.so+0x", 20) == 0,
              "%s: the static function is '%s'", what, v[1].label);
    else
        check(strcmp(v[1].symbol, "tl_leaf_static") == 0 &&
                  strcmp(v[1].file, "tests/native/testlib.c") == 0 && v[1].line == 15,
              "%s: frame 1 is %s %s:%d", what, v[1].symbol, v[1].file, v[1].line);
    check(strcmp(v[2].symbol, "tl_middle") == 0, "%s: frame 2 is '%s'", what, v[2].symbol);
    check(strcmp(v[3].symbol, "tl_outer") == 0, "%s: frame 3 is '%s'", what, v[3].symbol);
    if (!stripped)
        check(v[2].line == 21 && v[3].line == 29, "%s: lines %d %d", what, v[2].line,
              v[3].line);
}

static void test_c_program(const char *lib, const char *fn, int stripped)
{
    char libpath[512];
    snprintf(libpath, sizeof libpath, "%s/%s", DIR, lib);
    char *argv[] = { DIR "/testprog", libpath, (char *)fn, NULL };
    target t;
    static frame_view v[MAX_FRAMES];
    int complete;
    if (start(argv, &t) < 0) {
        check(0, "testprog %s did not get ready", lib);
        finish(&t);
        return;
    }
    uint32_t n = compare_with_gdb(t.pid, lib, v, &complete);
    check(complete, "%s: the unwind did not reach _start", lib);
    check(n > 0 && strcmp(v[n - 1].symbol, "_start") == 0, "%s: outermost '%s'", lib,
          n ? v[n - 1].symbol : "");
    if (strcmp(fn, "tl_outer") == 0)
        check_library_frames(lib, v, n, stripped);
    else
        check(n >= 3 && strcmp(v[1].symbol, "(anonymous namespace)::Kernel<3>::run(int, int)") == 0 &&
                  strcmp(v[1].file, "tests/native/testlib_cxx.cpp") == 0 && v[1].line == 11 &&
                  strcmp(v[2].symbol, "tlx_outer") == 0,
              "C++ frames: '%s' %s:%d, '%s'", v[1].symbol, v[1].file, v[1].line, v[2].symbol);
    finish(&t);
}

/* The interpreter's minor version from its path's "3.X", or 11 for
 * Debian's python3 (3.11). */
static int minor_of(const char *python)
{
    const char *s = strstr(python, "/3.");
    return s ? atoi(s + 3) : 11;
}

/* The ctypes program's stack merged with the walker's Python frames. */
static void check_merge(const char *python, int pid, const frame_view *v, uint32_t n,
                        int complete)
{
    sonde_profile p;
    sonde_walker *w = calloc(1, sizeof *w);
    sonde_thread_sample *threads = malloc(4 * sizeof *threads);
    char err[512];
    uint32_t nt = 0;
    if (!w || !threads || sonde_profile_init(&p) < 0) {
        check(0, "out of memory");
        free(w);
        free(threads);
        return;
    }
    int rc = sonde_walker_open(w, pid, &p, err, sizeof err);
    check(rc == 0, "%s: walker: %s", python, err);
    if (rc == 0)
        rc = sonde_walker_sample(w, &(uint64_t){ 0 }, threads, 4, &nt);
    check(rc == 0 && nt == 1 && threads[0].depth == 3, "%s: Python stack: rc %d, %u threads",
          python, rc, nt);
    if (rc == 0 && nt == 1 && threads[0].depth == 3) {
        /* Up to 3.10 each Python call is its own eval call: each frame
         * starts a run.  From 3.11 the three frames run in one eval
         * call: the outermost starts it (is_entry; 3.12+ a shim under it).
         * The walker's marks (entry[]) must say so. */
        uint8_t kinds[MAX_FRAMES], want_entry[3] = { 1, 1, 1 };
        if (minor_of(python) >= 11)
            want_entry[0] = want_entry[1] = 0;
        const uint8_t *entry = threads[0].entry;
        check(memcmp(entry, want_entry, 3) == 0, "%s: entry marks %d %d %d", python, entry[0],
              entry[1], entry[2]);
        for (uint32_t i = 0; i < n; i++)
            kinds[i] = (uint8_t)v[i].kind;
        sonde_merge_out out[MAX_FRAMES];
        uint32_t nm;
        int result = sonde_merge(kinds, n, entry, 3, complete, 0, out, MAX_FRAMES, &nm);
        check(result == SONDE_MERGE_EXACT, "%s: merge result %d", python, result);
        /* Innermost first: the library, libffi, ctypes, then the three
         * Python functions, then libc's start (the interpreter's main
         * and _start are its own frames: dropped). */
        char got[2048] = "";
        for (uint32_t i = 0; i < nm; i++) {
            const char *name;
            if (out[i].python)
                name = sonde_profile_str(&p, p.funcs[threads[0].frames[out[i].index].func].name);
            else
                name = v[out[i].index].label[0] ? v[out[i].index].label : "?";
            snprintf(got + strlen(got), sizeof got - strlen(got), "%s%s", i ? " " : "", name);
        }
        const char *want = strstr(got, " ffi_call ");
        const char *py = want ? strstr(want, " inner outer <module> ") : NULL;
        check(strncmp(got, "read tl_leaf_static tl_middle tl_outer ", 39) == 0 && want && py &&
                  strcmp(py, " inner outer <module> __libc_start_call_main __libc_start_main") == 0,
              "%s: merged stack is %s", python, got);
    }
    sonde_walker_close(w);
    sonde_profile_free(&p);
    free(w);
    free(threads);
}

static void test_python(const char *python)
{
    char *argv[] = { (char *)python, SONDE_TEST_NATIVE_SRC "/block.py", DIR "/libtl.so",
                     "tl_outer", NULL };
    target t;
    static frame_view v[MAX_FRAMES];
    int complete;
    if (start(argv, &t) < 0) {
        check(0, "%s block.py did not get ready", python);
        finish(&t);
        return;
    }
    uint32_t n = compare_with_gdb(t.pid, python, v, &complete);
    check(complete, "%s: the unwind did not reach _start", python);
    check_library_frames(python, v, n, 0);
    uint32_t evals = 0;
    for (uint32_t i = 0; i < n; i++)
        evals += v[i].kind == SONDE_MERGE_EVAL;
    check(evals == (minor_of(python) >= 11 ? 1u : 3u), "%s: %u eval frames", python, evals);
    check_merge(python, t.pid, v, n, complete);
    finish(&t);
}

/* A process that stops the target as ptrace.c does (SEIZE, INTERRUPT) and
 * dies by SIGKILL while it is stopped: the kernel must let it run. */
static void test_never_left_stopped(void)
{
    char *argv[] = { DIR "/testprog", DIR "/libtl.so", "tl_outer", NULL };
    target t;
    if (start(argv, &t) < 0) {
        check(0, "testprog did not get ready");
        finish(&t);
        return;
    }
    int report[2];
    check(pipe(report) == 0, "pipe");
    pid_t tracer = fork();
    if (tracer == 0) {
        int status;
        if (ptrace(PTRACE_SEIZE, t.pid, 0, 0) == 0 && ptrace(PTRACE_INTERRUPT, t.pid, 0, 0) == 0 &&
            waitpid(t.pid, &status, __WALL) == t.pid && write(report[1], "s", 1) == 1)
            pause();
        _exit(1);
    }
    close(report[1]);
    char c = 0;
    struct pollfd pfd = { report[0], POLLIN, 0 };
    check(poll(&pfd, 1, 20000) == 1 && read(report[0], &c, 1) == 1, "the tracer did not stop it");
    char path[64], stat[512] = "";
    snprintf(path, sizeof path, "/proc/%d/stat", t.pid);
    FILE *f = fopen(path, "r");
    char state = f && fgets(stat, sizeof stat, f) && strrchr(stat, ')') ? strrchr(stat, ')')[2] : '?';
    if (f)
        fclose(f);
    check(state == 't', "stopped by the tracer: state %c", state);
    kill(tracer, SIGKILL);
    waitpid(tracer, NULL, 0);
    /* The tracer's exit detached it before the tracer could be reaped. */
    f = fopen(path, "r");
    state = f && fgets(stat, sizeof stat, f) && strrchr(stat, ')') ? strrchr(stat, ')')[2] : '?';
    if (f)
        fclose(f);
    check(state != 't' && state != 'T', "after the tracer died: state %c", state);
    close(report[0]);
    finish(&t);   /* and it still answers */
}

static uint64_t rng_state = 0x853c49e6748fea9bu;

static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* Copies of libtl.so with bytes of .eh_frame and .eh_frame_hdr changed:
 * every lookup ends (ASan and valgrind watch the reads). */
static void test_corrupt_cfi(void)
{
    sonde_elf e;
    if (sonde_elf_open(&e, DIR "/libtl.so") < 0) {
        check(0, "cannot open libtl.so");
        return;
    }
    sonde_elf_sect eh, hdr, text;
    int ok = sonde_elf_section_find(&e, ".eh_frame", &eh) == 0 &&
             sonde_elf_section_find(&e, ".eh_frame_hdr", &hdr) == 0 &&
             sonde_elf_section_find(&e, ".text", &text) == 0;
    check(ok, "libtl.so has .eh_frame, .eh_frame_hdr, .text");
    size_t size = e.size, eh_off = (size_t)(eh.data - e.data), hdr_off = (size_t)(hdr.data - e.data);
    unsigned char *copy = malloc(size);
    char path[] = "/tmp/sonde-test-cfi-XXXXXX";
    int fd = mkstemp(path);
    uint32_t found = 0;
    for (int round = 0; ok && copy && fd >= 0 && round < 300; round++) {
        memcpy(copy, e.data, size);
        for (int k = 0; k < 1 + round % 8; k++) {
            int in_hdr = rng() % 4 == 0;
            size_t off = in_hdr ? hdr_off + rng() % hdr.size : eh_off + rng() % eh.size;
            copy[off] = round % 3 ? (unsigned char)rng() : copy[off] ^ (unsigned char)(1u << rng() % 8);
        }
        if (pwrite(fd, copy, size, 0) != (ssize_t)size)
            break;
        sonde_elf m;
        sonde_cfi c;
        if (sonde_elf_open(&m, path) < 0)
            continue;
        if (sonde_cfi_init(&c, &m) == 0) {
            for (uint64_t pc = text.addr; pc < text.addr + text.size; pc += 3) {
                sonde_cfi_row row;
                found += sonde_cfi_row_at(&c, pc, &row) == 0;
            }
            sonde_cfi_free(&c);
        }
        sonde_elf_close(&m);
    }
    check(found > 0, "no lookup succeeded on any corrupted copy");
    if (fd >= 0) {
        close(fd);
        unlink(path);
    }
    free(copy);
    sonde_elf_close(&e);
}

/* Every address of each of libtl.so's functions lies in an FDE that starts
 * where the symbol table says the function starts: the start a stripped
 * copy's unnamed frames are named by. */
static void test_cfi_function_ranges(void)
{
    static const char *const functions[] = { "tl_leaf_static", "tl_middle", "tl_outer" };
    sonde_elf e;
    sonde_cfi c;
    if (sonde_elf_open(&e, DIR "/libtl.so") < 0) {
        check(0, "cannot open libtl.so");
        return;
    }
    check(sonde_cfi_init(&c, &e) == 0, "libtl.so's CFI");
    for (size_t i = 0; i < sizeof functions / sizeof *functions; i++) {
        uint64_t value = 0, size = 0, wrong = 0;
        check(sonde_elf_symbol(&e, functions[i], &value, &size) == 0 && size > 0,
              "symbol %s", functions[i]);
        for (uint64_t pc = value; pc < value + size; pc++) {
            uint64_t start = 0, end = 0;
            wrong += sonde_cfi_range_at(&c, pc, &start, &end) != 0 || start != value ||
                     end < value + size;
        }
        check(wrong == 0, "%s: %llu of %llu addresses in no FDE starting at 0x%llx",
              functions[i], (unsigned long long)wrong, (unsigned long long)size,
              (unsigned long long)value);
    }
    uint64_t start, end;
    check(sonde_cfi_range_at(&c, 0, &start, &end) == -ENOENT, "address 0 is in no FDE");
    sonde_cfi_free(&c);
    sonde_elf_close(&e);
}

static volatile int spinning;   /* set by test_perf; the spinning thread reads it */

__attribute__((noipa)) static unsigned long test_native_spin(unsigned long x)
{
    while (spinning)
        x = x * 6364136223846793005ul + 1;
    return x;
}

static void *spin_thread(void *tid)
{
    *(volatile int *)tid = (int)gettid();
    return (void *)test_native_spin(1);
}

/* The held callback of test_dies_while_held: kills the held thread's
 * process and returns once the thread is dead (a zombie, or gone). */
typedef struct held_kill {
    int pid, tid;
    int dead;
} held_kill;

static char task_state(int pid, int tid)
{
    char path[64], stat[512] = "";
    snprintf(path, sizeof path, "/proc/%d/task/%d/stat", pid, tid);
    FILE *f = fopen(path, "r");
    char state = f && fgets(stat, sizeof stat, f) && strrchr(stat, ')') ? strrchr(stat, ')')[2]
                                                                        : 'X';
    if (f)
        fclose(f);
    return state;
}

static void kill_while_held(void *ctx)
{
    held_kill *k = ctx;
    kill(k->pid, SIGKILL);
    for (int waits = 0; waits < 4000 && !k->dead; waits++) {   /* 20 s at most */
        char state = task_state(k->pid, k->tid);
        k->dead = state == 'Z' || state == 'X';
        if (!k->dead)
            nanosleep(&(struct timespec){ 0, 5 * 1000 * 1000 }, NULL);
    }
}

/* A thread that dies while sonde holds it stopped (another thread exits
 * the process, a SIGKILL comes) can no longer be detached, and stays a
 * zombie only its tracer sees until the tracer waits for it: the process's
 * real parent, waiting for it, would wait for ever.  Here the target is
 * the child of a parent of its own that waits for it, and is killed while
 * one of its threads is held: the parent must be done at once. */
static void test_dies_while_held(void)
{
    int ready[2];
    check(pipe(ready) == 0, "pipe");
    pid_t parent = fork();
    if (parent == 0) {
        pid_t child = fork();
        if (child == 0) {
            volatile int tid = 0;
            pthread_t t;
            spinning = 1;
            if (pthread_create(&t, NULL, spin_thread, (void *)&tid) == 0) {
                while (!tid)
                    ;
                int ids[2] = { (int)getpid(), tid };
                if (write(ready[1], ids, sizeof ids) == (ssize_t)sizeof ids)
                    pause();
            }
            _exit(1);
        }
        waitpid(child, NULL, 0);   /* the real parent's wait */
        _exit(0);
    }
    close(ready[1]);
    int ids[2] = { 0, 0 };
    struct pollfd pfd = { ready[0], POLLIN, 0 };
    check(poll(&pfd, 1, 20000) == 1 && read(ready[0], ids, sizeof ids) == (ssize_t)sizeof ids,
          "the target did not start its thread");
    close(ready[0]);
    if (ids[1]) {
        static uint8_t copy[16384];
        sonde_native_stack st = { .data = copy, .cap = sizeof copy };
        held_kill k = { ids[0], ids[1], 0 };
        int rc = sonde_native_ptrace_capture(ids[0], ids[1], &st, kill_while_held, &k, NULL);
        check(rc == 0 && k.dead, "captured (%d) and died while held (%d)", rc, k.dead);
    }
    int status = 0, done = 0;
    for (int waits = 0; waits < 1000 && !done; waits++) {   /* 5 s at most */
        done = waitpid(parent, &status, WNOHANG) == parent;
        if (!done)
            nanosleep(&(struct timespec){ 0, 5 * 1000 * 1000 }, NULL);
    }
    check(done && WIFEXITED(status) && WEXITSTATUS(status) == 0,
          "the target's parent finished its wait (%d, status %d)", done, status);
    if (!done) {
        kill(parent, SIGKILL);
        waitpid(parent, NULL, 0);
    }
}

/* A copy of the test library mapped into this process as a loader maps
 * one (executable, from offset 0), in DIR: *addr its tl_outer, *fd the
 * open copy, path its name.  0, or -1. */
static int map_copy(char *path, size_t pathlen, int *fd, void **map, size_t *size,
                    uint64_t *addr)
{
    snprintf(path, pathlen, "%s/shrunk-XXXXXX", DIR);
    *fd = mkstemp(path);
    int in = open(DIR "/libtl.so", O_RDONLY | O_CLOEXEC);
    char buf[65536];
    ssize_t r;
    while (*fd >= 0 && in >= 0 && (r = read(in, buf, sizeof buf)) > 0)
        if (write(*fd, buf, (size_t)r) != r)
            break;
    if (in >= 0)
        close(in);
    struct stat st;
    sonde_elf e;
    uint64_t value = 0, symsize;
    if (*fd < 0 || fstat(*fd, &st) < 0 || sonde_elf_open(&e, path) < 0)
        return -1;
    int found = sonde_elf_symbol(&e, "tl_outer", &value, &symsize);
    sonde_elf_close(&e);
    *size = (size_t)st.st_size;
    *map = mmap(NULL, *size, PROT_READ | PROT_EXEC, MAP_PRIVATE, *fd, 0);
    if (found < 0 || *map == MAP_FAILED)
        return -1;
    *addr = (uint64_t)(uintptr_t)*map + value;
    return 0;
}

/* A mapped object's file that shrinks under sonde (a library replaced by
 * `cp` over it, or a hostile target): sonde's reads past its new end
 * fault, and unwinding and naming give the object up (guard.h) instead of
 * dying of SIGBUS.  Each copy is cut to its first page once sonde has
 * mapped it: its CFI and symbol tables lie past it. */
static void test_shrunk_file(void)
{
    char unwound[512], named[512];
    int fds[2] = { -1, -1 };
    void *maps[2] = { MAP_FAILED, MAP_FAILED };
    size_t sizes[2] = { 0, 0 };
    uint64_t pcs[2] = { 0, 0 };
    int ok = map_copy(unwound, sizeof unwound, &fds[0], &maps[0], &sizes[0], &pcs[0]) == 0 &&
             map_copy(named, sizeof named, &fds[1], &maps[1], &sizes[1], &pcs[1]) == 0;
    check(ok, "two copies of libtl.so mapped");
    sonde_native_objects o;
    if (ok && sonde_native_objects_init(&o, getpid()) == 0) {
        sonde_native_object *obs[2] = { sonde_native_objects_find(&o, pcs[0]),
                                        sonde_native_objects_find(&o, pcs[1]) };
        check(obs[0] && obs[1], "both copies are objects");
        check(ftruncate(fds[0], 4096) == 0 && ftruncate(fds[1], 4096) == 0, "cut to a page");
        static uint8_t copy[4096];
        sonde_native_stack st = { .data = copy, .cap = sizeof copy, .len = sizeof copy };
        st.regs[SONDE_CFI_RIP] = pcs[0];
        st.regs[SONDE_CFI_RSP] = (uint64_t)(uintptr_t)copy;
        sonde_native_frame frames[8];
        uint32_t n = 0;
        sonde_native_counts c = { 0 };
        int end = sonde_native_unwind(&o, &st, frames, 8, &n, &c);
        check(end == SONDE_NATIVE_NO_UNWIND_INFO, "unwinding in the cut copy ends: %d", end);
        check(obs[0] && !obs[0]->f->usable && obs[0]->f->shrunk && !sonde_native_objects_find(&o, pcs[0]),
              "the copy whose CFI faulted is given up");
        sonde_native_symbol sym;
        check(obs[1] && sonde_native_symbolize(obs[1], getpid(), pcs[1], 0, 1, &sym) == -EIO,
              "naming in the cut copy fails");
        check(obs[1] && !obs[1]->f->usable && obs[1]->f->shrunk,
              "the copy whose symbols faulted is given up");
        sonde_native_objects_free(&o);
    }
    for (int i = 0; i < 2; i++) {
        if (maps[i] != MAP_FAILED)
            munmap(maps[i], sizes[i]);
        if (fds[i] >= 0)
            close(fds[i]);
    }
    unlink(unwound);
    unlink(named);
}

/* perf samples of a thread of this process spinning in test_native_spin:
 * each unwinds, through the function, to clone3, the outermost frame. */
static void test_perf(void)
{
    const char *preload = getenv("LD_PRELOAD");
    if (preload && strstr(preload, "vgpreload")) {
        /* Under valgrind the thread runs valgrind's translation of the
         * code: its registers point at no file, nothing to unwind. */
        fprintf(stderr, "note: under valgrind: perf capture not tested\n");
        return;
    }
    volatile int tid = 0;
    pthread_t t;
    spinning = 1;
    if (pthread_create(&t, NULL, spin_thread, (void *)&tid) != 0) {
        check(0, "pthread_create");
        return;
    }
    while (!tid)
        ;
    sonde_native_perf perf;
    int rc = sonde_native_perf_open(&perf, tid, 1000000, 16384, 64);   /* every 1 ms of CPU */
    if (rc < 0) {
        fprintf(stderr, "note: perf_event_open refused (%s): perf capture not tested\n",
                strerror(-rc));
    } else {
        static uint8_t copy[16384];
        sonde_native_stack st = { .data = copy, .cap = sizeof copy };
        sonde_native_objects o;
        int got = 0, named = 0, complete = 0;
        check(sonde_native_objects_init(&o, getpid()) == 0, "objects of this process");
        for (int waits = 0; got < 5 && waits < 2000; waits++) {
            uint64_t time;
            if (sonde_native_perf_next(&perf, &st, &time) != 1) {
                nanosleep(&(struct timespec){ 0, 5 * 1000 * 1000 }, NULL);
                continue;
            }
            got++;
            check(st.tid == tid, "sample of thread %d, want %d", st.tid, tid);
            sonde_native_frame frames[MAX_FRAMES];
            uint32_t n;
            sonde_native_counts c = { 0 };
            complete += sonde_native_unwind(&o, &st, frames, MAX_FRAMES, &n, &c) ==
                        SONDE_NATIVE_COMPLETE;
            sonde_native_object *ob = n ? sonde_native_objects_find(&o, frames[0].pc) : NULL;
            sonde_native_symbol s;
            named += ob && sonde_native_symbolize(ob, getpid(), frames[0].pc, 0, 1, &s) == 0 &&
                     strcmp(s.name, "test_native_spin") == 0;
        }
        check(got == 5, "%d perf samples", got);
        check(named == got && complete == got, "%d of %d samples in test_native_spin, %d complete",
              named, got, complete);
        sonde_native_objects_free(&o);
        sonde_native_perf_close(&perf);
    }
    spinning = 0;
    pthread_join(t, NULL);
}

void test_native(void)
{
    test_perf();
    test_dies_while_held();
    test_shrunk_file();
    test_corrupt_cfi();
    test_cfi_function_ranges();
    if (!have_gdb()) {
        fprintf(stderr, "note: gdb is not installed: the native stacks are not compared\n");
        return;
    }
    test_c_program("libtl.so", "tl_outer", 0);
    test_c_program("libtl_stripped.so", "tl_outer", 1);
    test_c_program("libtlx.so", "tlx_outer", 0);
    test_never_left_stopped();
    glob_t g;
    char pattern[512];
    snprintf(pattern, sizeof pattern, "%s/.pyenv/versions/3.*/bin/python3",
             getenv("HOME") ? getenv("HOME") : "/root");
    if (glob(pattern, 0, NULL, &g) == 0) {
        for (size_t i = 0; i < g.gl_pathc; i++) {
            int minor = minor_of(g.gl_pathv[i]);
            if (minor >= 8 && minor <= 13)
                test_python(g.gl_pathv[i]);
        }
        globfree(&g);
    }
    if (access("/usr/bin/python3", X_OK) == 0)
        test_python("/usr/bin/python3");
}
