/* testlib.c - a C library with known functions for the native unwinding tests.
 *
 * Built -O2 without frame pointers and with -g (the Makefile), once whole
 * and once stripped to .dynsym.  tl_outer writes "ready\n" to ready_fd,
 * then blocks in read(fd) three calls deep, the innermost a static
 * function (no .dynsym entry: the stripped copy names it lib+0xOFF).
 * noipa keeps every call a real call: no inlining, cloning or tail call. */
#include <unistd.h>

#define KEEP __attribute__((noipa))

KEEP static int tl_leaf_static(int fd, int n)
{
    char c = 0;
    ssize_t got = read(fd, &c, 1);   /* blocks here */
    return (int)got + c + n * 3;
}

KEEP int tl_middle(int fd, int n)
{
    int v = tl_leaf_static(fd, n + 1);
    return v * 7 + n;
}

KEEP int tl_outer(int ready_fd, int fd, int n)
{
    if (write(ready_fd, "ready\n", 6) != 6)
        return -1;
    int v = tl_middle(fd, n);
    return v + 1;
}

/* tl_inlining does the same as tl_outer through two functions always
 * inlined into it, tl_inline_read inside tl_inline_wait: their frames come
 * only from DWARF's inline records. */
static inline __attribute__((always_inline)) int tl_inline_read(int fd, int n)
{
    char c = 0;
    ssize_t got = read(fd, &c, 1);   /* blocks here */
    return (int)got + c + n * 5;
}

static inline __attribute__((always_inline)) int tl_inline_wait(int fd, int n)
{
    int v = tl_inline_read(fd, n + 2);
    return v * 11 + n;
}

KEEP int tl_inlining(int ready_fd, int fd, int n)
{
    if (write(ready_fd, "ready\n", 6) != 6)
        return -1;
    int v = tl_inline_wait(fd, n);
    return v + 3;
}
