/* sampler_tests.h - entry points of the external sampler's test files. */
#ifndef SONDE_SAMPLER_TESTS_H
#define SONDE_SAMPLER_TESTS_H

/* Process memory, maps, ELF and _PyRuntime lookup (test_sampler_proc.c). */
void test_sampler_proc(void);
/* Layouts, line tables, strings of every supported CPython (test_sampler_python.c). */
void test_sampler_python(void);
/* The stack walker on garbage memory and on stacks built by hand (test_walker.c). */
void test_walker(void);
/* Native stacks against gdb's, the never-stopped guarantee, corrupt CFI (test_native.c). */
void test_native(void);
/* The merge of native and Python frames, on stacks built by hand (test_native_merge.c). */
void test_native_merge(void);
/* The bounded C++ demangler, a demangling bomb (test_native_demangle.c). */
void test_native_demangle(void);
/* When the object cache reads the maps again; dlopen after it (test_native_objects.c). */
void test_native_objects(void);

#endif
