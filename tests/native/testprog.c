/* testprog.c - calls a test library's blocking function from main:
 *   testprog LIBRARY FUNCTION
 * loads LIBRARY with dlopen and calls FUNCTION(1, 0, 5): it prints
 * "ready" on stdout, then blocks reading one byte from stdin. */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: testprog LIBRARY FUNCTION\n");
        return 2;
    }
    void *lib = dlopen(argv[1], RTLD_NOW);
    int (*fn)(int, int, int) = lib ? (int (*)(int, int, int))dlsym(lib, argv[2]) : NULL;
    if (!fn) {
        fprintf(stderr, "testprog: %s\n", dlerror());
        return 2;
    }
    return fn(1, 0, 5) > 0 ? 0 : 1;
}
