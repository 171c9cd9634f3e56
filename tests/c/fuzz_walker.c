/* fuzz_walker.c - the sampler's decoders of remote memory on mutated snapshots of real processes.
 *
 *   fuzz_walker ITERATIONS PYTHON...
 *
 * For each interpreter: starts it on a program whose threads park at
 * known stacks (recursion, comprehensions, str names of every kind, a
 * stack deeper than the walker's cap, named threads), records what the
 * walker reads of it (snapshot.h), and checks that the walk replayed from
 * that snapshot gives what the live walk gave.  Then, ITERATIONS times,
 * it mutates the snapshot (bits, fields, pointers that loop back, holes)
 * and walks it again: thread list, frames, code objects, line tables,
 * strings, thread names through instance dicts, and on 3.13 the
 * _Py_DebugOffsets table itself.  Every walk must end within its bounds:
 * no crash (ASan and valgrind run it too), no hang (an alarm), at most
 * READS_MAX reads of the target per snapshot, depths and thread counts
 * within the caps, and every name valid UTF-8.  The seed is fixed, so a
 * failure can be reproduced. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fuzz.h"
#include "core/profile.h"
#include "sampler/walker.h"
#include "snapshot.h"

#define SEED 0x5a3b1e0fu
#define MAX_THREADS 64
#define SECONDS_PER_WALK 30   /* an alarm beyond this is a hang (valgrind is slow) */

/* Reads one snapshot may take, at most, whatever its bytes: per thread a
 * state, a chunk, a frame link, 2 * depth + 2 frames, depth code headers,
 * and per code object 8 reads for its strings and line table; then the
 * pthread words of <= 3.10 and the GIL. */
#define READS_PER_THREAD (3 + (2 * SONDE_WALK_MAX_DEPTH + 2) + SONDE_WALK_MAX_DEPTH * 9)
#define READS_MAX ((uint64_t)MAX_THREADS * READS_PER_THREAD + MAX_THREADS + 8)
/* One thread name looks at no more than 256 dict entries, each a key
 * pointer and a str of two reads, plus the objects on the way. */
#define NAME_READS_MAX (3 * 256 + 64)

/* Parks three named threads and the main thread at known stacks: a
 * recursion 30 deep under a comprehension, under functions whose names
 * need 1, 2 and 4 bytes per character, in a file whose name needs 4; a
 * fourth thread 1100 frames deep.  Prints "ready" once every thread is
 * parked, then blocks reading stdin. */
static const char program[] =
    "import sys, threading\n"
    "sys.setrecursionlimit(5000)\n"
    "src = '''\n"
    "def caf\\u00e9(n, park):\n"
    "    if n:\n"
    "        return caf\\u00e9(n - 1, park)\n"
    "    park()\n"
    "def \\u03a9mega(park):\n"
    "    return [caf\\u00e9(30, park) for _ in range(1)]\n"
    "def \\U00020000(park):\n"
    "    \\u03a9mega(park)\n"
    "def deep(n, park):\n"
    "    return deep(n - 1, park) if n else park()\n"
    "'''\n"
    "g = {}\n"
    "exec(compile(src, 'fuzz_\\U00020000.py', 'exec'), g)\n"
    "cond = threading.Condition()\n"
    "parked = [0]\n"
    "def park():\n"
    "    with cond:\n"
    "        parked[0] += 1\n"
    "        cond.notify_all()\n"
    "        cond.wait_for(lambda: False)\n"
    "for i in range(3):\n"
    "    threading.Thread(target=g['\\U00020000'], args=(park,), name='worker-\\u00e9-%d' % i,\n"
    "                     daemon=True).start()\n"
    "threading.Thread(target=g['deep'], args=(1100, park), name='deep', daemon=True).start()\n"
    "with cond:\n"
    "    cond.wait_for(lambda: parked[0] == 4)\n"
    "print('ready', flush=True)\n"
    "sys.stdin.read()\n";

static long walks, failures;
static const char *current = "";   /* what is being walked, for the alarm */

static void fail(const char *fmt, const char *a, long b)
{
    fprintf(stderr, "fuzz_walker: %s: ", current);
    fprintf(stderr, fmt, a, b);
    fputc('\n', stderr);
    failures++;
}

static void on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "fuzz_walker: a walk did not end (a hang)\n";
    if (write(2, msg, sizeof msg - 1) < 0)
        _exit(3);
    _exit(3);
}

/* 1 when s is valid UTF-8 (what every name sonde writes must be): no
 * stray or overlong sequences, no surrogates, nothing above U+10FFFF. */
static int utf8_ok(const char *s)
{
    static const uint32_t least[] = { 0, 0x80, 0x800, 0x10000 };
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        int n = *p < 0x80 ? 0 : (*p & 0xe0) == 0xc0 ? 1 : (*p & 0xf0) == 0xe0 ? 2
                : (*p & 0xf8) == 0xf0 ? 3 : -1;
        if (n < 0)
            return 0;
        uint32_t c = n ? *p & (0x3fu >> n) : *p;
        p++;
        for (int k = 0; k < n; k++, p++) {
            if ((*p & 0xc0) != 0x80)
                return 0;
            c = c << 6 | (*p & 0x3fu);
        }
        if (c < least[n] || c > 0x10ffff || (c >= 0xd800 && c < 0xe000))
            return 0;
    }
    return 1;
}

/* Starts python on the program; its pid with *out reading its stdout
 * and *in writing its stdin, or -1. */
static pid_t spawn(const char *python, int *out, int *in)
{
    int o[2], i[2];
    if (pipe2(o, O_CLOEXEC) < 0 || pipe2(i, O_CLOEXEC) < 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        dup2(o[1], 1);
        dup2(i[0], 0);
        execl(python, python, "-c", program, (char *)NULL);
        _exit(127);
    }
    close(o[1]);
    close(i[0]);
    *out = o[0];
    *in = i[1];
    return pid;
}

/* 1 when "ready" arrives on fd within a minute. */
static int wait_ready(int fd)
{
    char buf[16];
    size_t n = 0;
    struct pollfd pfd = { fd, POLLIN, 0 };
    while (n < sizeof buf - 1 && poll(&pfd, 1, 60000) == 1 && read(fd, buf + n, 1) == 1)
        if (buf[n++] == '\n')
            break;
    buf[n] = '\0';
    return strcmp(buf, "ready\n") == 0;
}

typedef struct walk {
    sonde_thread_sample *threads;
    uint32_t n;
    char names[MAX_THREADS][128];
} walk;

/* One snapshot through w into *out, thread names too.  The walker's
 * return code. */
static int walk_once(sonde_walker *w, walk *out)
{
    int rc = sonde_walker_sample(w, &(uint64_t){ 0 }, out->threads, MAX_THREADS, &out->n);
    for (uint32_t i = 0; i < out->n; i++)
        if (sonde_walker_thread_name(w, &out->threads[i], out->names[i], sizeof out->names[i]) < 0)
            out->names[i][0] = '\0';
    return rc;
}

/* The stack of thread i as text: "name;func:line;func:line...". */
static void stack_text(const sonde_walker *w, const walk *k, uint32_t i, char *out, size_t len)
{
    const sonde_thread_sample *s = &k->threads[i];
    size_t at = (size_t)snprintf(out, len, "%s%s%s", k->names[i], s->torn ? " torn" : "",
                                 s->truncated ? " truncated" : "");
    for (uint32_t f = 0; f < s->depth && at < len; f++) {
        const sonde_func *fn = &w->profile->funcs[s->frames[f].func];
        at += (size_t)snprintf(out + at, len - at, ";%s:%d",
                               sonde_profile_str(w->profile, fn->qualname), s->frames[f].line);
    }
}

/* The live stacks of the parked program hold what it was built to show. */
static void check_live(const sonde_walker *w, const walk *k)
{
    int workers = 0, deep = 0, main = 0;
    for (uint32_t i = 0; i < k->n; i++) {
        const sonde_thread_sample *s = &k->threads[i];
        if (s->torn || s->depth == 0)
            continue;
        const char *inner = sonde_profile_str(w->profile,
                                              w->profile->funcs[s->frames[0].func].name);
        const sonde_func *outer = &w->profile->funcs[s->frames[s->depth - 1].func];
        if (strncmp(k->names[i], "worker-\xc3\xa9-", 9) == 0 && strcmp(inner, "wait") == 0) {
            int cafe = 0, omega = 0, cjk = 0;
            for (uint32_t f = 0; f < s->depth; f++) {
                const sonde_func *fn = &w->profile->funcs[s->frames[f].func];
                const char *name = sonde_profile_str(w->profile, fn->name);
                cafe += strcmp(name, "caf\xc3\xa9") == 0;
                omega += strcmp(name, "\xce\xa9mega") == 0;
                cjk += strcmp(name, "\xf0\xa0\x80\x80") == 0 &&
                       strcmp(sonde_profile_str(w->profile, fn->file),
                              "fuzz_\xf0\xa0\x80\x80.py") == 0;
            }
            workers += cafe == 31 && omega == 1 && cjk == 1;
        }
        /* Truncated: its outermost frame, and with it its name, is unknown. */
        deep += s->truncated && s->depth == SONDE_WALK_MAX_DEPTH && strcmp(inner, "wait") == 0;
        main += strcmp(k->names[i], "MainThread") == 0 &&
                strcmp(sonde_profile_str(w->profile, outer->name), "<module>") == 0;
    }
    if (workers != 3 || deep != 1 || main != 1) {
        char text[4096];
        for (uint32_t i = 0; i < k->n; i++) {
            stack_text(w, k, i, text, sizeof text);
            fprintf(stderr, "  thread %u: %.300s\n", i, text);
        }
        fail("the live walk shows %s (%ld)", "not what the program parked", (long)k->n);
    }
}

/* The same threads, names and frames in both walks. */
static int same_walk(const sonde_walker *wa, const walk *a, const sonde_walker *wb, const walk *b)
{
    if (a->n != b->n)
        return 0;
    char x[8192], y[8192];
    for (uint32_t i = 0; i < a->n; i++) {
        stack_text(wa, a, i, x, sizeof x);
        stack_text(wb, b, i, y, sizeof y);
        if (strcmp(x, y) != 0)
            return 0;
    }
    return 1;
}

/* Checks one walk of garbage against every bound. */
static void check_bounds(const sonde_walker *w, const walk *k, int rc, uint64_t reads,
                         uint64_t name_reads, uint64_t *max_reads)
{
    walks++;
    if (rc > 0 || k->n > MAX_THREADS)
        fail("%s: %ld threads", "a walk out of bounds", (long)k->n);
    if (reads > READS_MAX)
        fail("%s: %ld reads", "a walk ran long", (long)reads);
    if (name_reads > (uint64_t)k->n * NAME_READS_MAX + 1)
        fail("%s: %ld reads", "thread names ran long", (long)name_reads);
    if (reads > *max_reads)
        *max_reads = reads;
    for (uint32_t i = 0; i < k->n; i++) {
        const sonde_thread_sample *s = &k->threads[i];
        if (s->depth > SONDE_WALK_MAX_DEPTH ||
            (!s->torn && s->truncated && s->depth != SONDE_WALK_MAX_DEPTH))
            fail("%s: depth %ld", "a stack out of bounds", (long)s->depth);
        for (uint32_t f = 0; f < s->depth; f++)
            if (s->frames[f].func >= w->profile->nfuncs)
                fail("%s: %ld", "a frame names no function", (long)s->frames[f].func);
        if (!utf8_ok(k->names[i]))
            fail("%s: thread %ld", "a thread name is not UTF-8", (long)i);
    }
}

/* Names of every function the walks interned are valid UTF-8. */
static void check_names(const sonde_profile *p)
{
    for (uint32_t f = 0; f < p->nfuncs; f++) {
        const sonde_func *fn = &p->funcs[f];
        if (!utf8_ok(sonde_profile_str(p, fn->file)) || !utf8_ok(sonde_profile_str(p, fn->name)) ||
            !utf8_ok(sonde_profile_str(p, fn->qualname)))
            fail("%s: function %ld", "a name is not UTF-8", (long)f);
    }
}

/* A replaying walker on snap: the recorded walker's runtime and layout
 * (3.13: the layout parsed again from the snapshot, which may be mutated).
 * 0, or -1 when the layout is refused. */
static int replayer(sonde_walker *w, sonde_profile *p, snapshot *snap, const sonde_walker *rec)
{
    if (sonde_walker_init(w, p) < 0) {
        fputs("fuzz_walker: out of memory\n", stderr);
        exit(1);
    }
    w->proc.pid = rec->proc.pid;
    snapshot_attach(snap, &w->proc);
    w->runtime = rec->runtime;
    w->layout = rec->layout;
    if (rec->runtime.minor < 13)
        return 0;
    uint8_t raw[SONDE_PY_DEBUG_OFFSETS_READ];
    char err[256];
    return sonde_proc_read(&w->proc, w->runtime.addr, raw, sizeof raw) == 0 &&
                   sonde_py_layout_from_debug_offsets(raw, sizeof raw, &w->layout, err,
                                                      sizeof err) == 0
               ? 0
               : -1;
}

/* Records python's parked stacks into snap through *rec; 0, or -1. */
static int capture(const char *python, snapshot *snap, sonde_walker *rec, sonde_profile *p,
                   walk *live)
{
    int out = -1, in = -1;
    pid_t pid = spawn(python, &out, &in);
    char err[512];
    int rc = -1;
    if (pid < 0 || !wait_ready(out)) {
        fail("%s did not start (%ld)", python, (long)pid);
    } else if (sonde_walker_open(rec, pid, p, err, sizeof err) < 0) {
        fail("%s: cannot attach (%ld)", err, (long)pid);
    } else {
        snapshot_init(snap, pid);
        snapshot_attach(snap, &rec->proc);
        uint8_t raw[SONDE_PY_DEBUG_OFFSETS_READ];
        if (rec->runtime.minor >= 13)
            sonde_proc_read(&rec->proc, rec->runtime.addr, raw, sizeof raw);
        rc = walk_once(rec, live) == 0 ? 0 : -1;
        check_live(rec, live);
    }
    if (in >= 0)
        close(in);
    if (out >= 0)
        close(out);
    if (pid > 0) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
    }
    return rc;
}

static void fuzz_python(const char *python, long iterations)
{
    current = python;
    sonde_profile p, q;
    sonde_walker rec, w;
    snapshot snap;
    walk live = { 0 }, k = { 0 };
    live.threads = malloc(MAX_THREADS * sizeof *live.threads);
    k.threads = malloc(MAX_THREADS * sizeof *k.threads);
    if (!live.threads || !k.threads || sonde_profile_init(&p) < 0) {
        fputs("fuzz_walker: out of memory\n", stderr);
        exit(1);
    }
    memset(&rec, 0, sizeof rec); /* closing an unopened walker does nothing */
    memset(&snap, 0, sizeof snap);
    if (capture(python, &snap, &rec, &p, &live) < 0 || snapshot_seal(&snap) < 0) {
        fail("%s: no snapshot (%ld)", python, 0);
        goto out;
    }
    /* The snapshot replayed gives what the live walk gave. */
    sonde_profile_init(&q);
    alarm(SECONDS_PER_WALK);
    if (replayer(&w, &q, &snap, &rec) < 0 || walk_once(&w, &k) != 0 ||
        !same_walk(&rec, &live, &w, &k))
        fail("%s: the replayed snapshot walks differently (%ld)", python, 0);
    sonde_walker_close(&w);
    sonde_profile_free(&q);

    uint64_t max_reads = 0;
    long refused = 0, torn = 0, frames = 0;
    int ready = 0;
    sonde_profile_init(&q);
    for (long i = 0; i < iterations; i++) {
        for (long m = 1 + (long)(fuzz_rng() % 12); m > 0; m--)
            snapshot_mutate(&snap, fuzz_rng);
        /* A new walker every 4 walks (its cache of code objects lives on
         * across mutations), and on 3.13 every walk: the layout comes from
         * the mutated snapshot. */
        if (i % 4 == 0 || rec.runtime.minor >= 13) {
            check_names(&q);
            if (ready)
                sonde_walker_close(&w);
            sonde_profile_free(&q);
            sonde_profile_init(&q);
            ready = 1;
            if (replayer(&w, &q, &snap, &rec) < 0) {
                refused++;
                snapshot_undo_all(&snap);
                continue;
            }
        }
    alarm(SECONDS_PER_WALK);
        uint64_t before = snap.reads;
        int rc = sonde_walker_sample(&w, &(uint64_t){ 0 }, k.threads, MAX_THREADS, &k.n);
        uint64_t walked = snap.reads - before;
        for (uint32_t t = 0; t < k.n; t++) {
            if (sonde_walker_thread_name(&w, &k.threads[t], k.names[t], sizeof k.names[t]) < 0)
                k.names[t][0] = '\0';
            torn += k.threads[t].torn;
            frames += k.threads[t].depth;
        }
        alarm(0);
        check_bounds(&w, &k, rc, walked, snap.reads - before - walked, &max_reads);
        snapshot_undo_all(&snap);
    }
    check_names(&q);
    if (ready)
        sonde_walker_close(&w);
    sonde_profile_free(&q);
    printf("fuzz_walker: %s (%d.%d): %u ranges, %llu bytes; %ld walks, %ld layouts refused, "
           "%ld torn stacks, %ld frames, at most %llu reads a walk\n",
           python, rec.runtime.major, rec.runtime.minor, snap.nranges,
           (unsigned long long)snap.bytes, iterations, refused, torn, frames,
           (unsigned long long)max_reads);
out:
    sonde_walker_close(&rec);
    snapshot_free(&snap);
    sonde_profile_free(&p);
    free(live.threads);
    free(k.threads);
}

int main(int argc, char **argv)
{
    fuzz_seed(SEED);
    long iterations = argc > 1 ? strtol(argv[1], NULL, 10) : -1;
    if (argc < 3 || iterations < 0) {
        fputs("usage: fuzz_walker ITERATIONS PYTHON...\n", stderr);
        return 2;
    }
    signal(SIGALRM, on_alarm);
    signal(SIGPIPE, SIG_IGN);
    for (int i = 2; i < argc; i++)
        fuzz_python(argv[i], iterations);
    printf("fuzz_walker: seed 0x%x, %ld walks of mutated snapshots, %ld failures\n", SEED, walks,
           failures);
    return failures ? 1 : 0;
}
