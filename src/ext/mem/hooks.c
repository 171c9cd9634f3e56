/* hooks.c - where sonde mem hears of allocations: hooks wrapped
 * around the Python allocators of every domain (PyMem_SetAllocator), and
 * the sink of the preloaded C allocator shim (src/shim), found with
 * dlsym() when `sonde mem` preloaded it.
 *
 * A Python allocator may itself call the C allocator (large blocks, the
 * arenas of small ones): the hooks mark their thread busy around the call,
 * so each block is counted once, by the outermost hook that saw it. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <dlfcn.h>

#include "../../mem/account.h"
#include "../../shim/alloc_shim.h"
#include "frames.h"
#include "memory.h"

/* Constant. */
static const PyMemAllocatorDomain domains[3] = { PYMEM_DOMAIN_RAW, PYMEM_DOMAIN_MEM,
                                                 PYMEM_DOMAIN_OBJ };
/* The allocators sonde's hooks wrap: set by mem_start before the hooks go
 * in, read by them in any thread, never changed while they are in. */
static PyMemAllocatorEx original[3];
static int installed; /* sonde's hooks are in; protected by the GIL */
static int wrapped;   /* a hook installed after sonde's is still in place; GIL */

static void *hook_malloc(void *ctx, size_t size)
{
    PyMemAllocatorEx *o = ctx;
    mem_tls_busy++;
    void *p = o->malloc(o->ctx, size);
    mem_tls_busy--;
    mem_on_alloc(p, size, MEM_PYTHON);
    return p;
}

static void *hook_calloc(void *ctx, size_t n, size_t size)
{
    PyMemAllocatorEx *o = ctx;
    mem_tls_busy++;
    void *p = o->calloc(o->ctx, n, size);
    mem_tls_busy--;
    mem_on_alloc(p, n * size, MEM_PYTHON); /* the allocator refused an overflow */
    return p;
}

/* A release of the old block, then an allocation of the new one; when
 * the allocator refuses, the old block stays as it was. */
static void *hook_realloc(void *ctx, void *p, size_t size)
{
    PyMemAllocatorEx *o = ctx;
    mem_on_release_undoable(p);
    mem_tls_busy++;
    void *q = o->realloc(o->ctx, p, size);
    mem_tls_busy--;
    if (!q)
        mem_on_restore(p);
    mem_on_alloc(q, size, MEM_PYTHON);
    return q;
}

static void hook_free(void *ctx, void *p)
{
    PyMemAllocatorEx *o = ctx;
    mem_on_release(p);
    mem_tls_busy++;
    o->free(o->ctx, p);
    mem_tls_busy--;
}

static void native_alloc(void *p, size_t size) { mem_on_alloc(p, size, MEM_NATIVE); }
static void native_release(void *p) { mem_on_release_undoable(p); }
static void native_restore(void *p) { mem_on_restore(p); }
static void native_map(void *p, size_t len) { mem_on_map(p, len); }
/* Constant: the shim calls it from any thread. */
static const sonde_alloc_sink native_sink = { .alloc = native_alloc,
                                              .release = native_release,
                                              .restore = native_restore, .map = native_map,
                                              .thread_token = mem_thread_token };

#if PY_VERSION_HEX >= 0x030D0000
/* 3.13+: the interpreter tells a reference tracer of each object it makes;
 * one made from a free list (ints from 3.14, floats, tuples, lists,
 * dicts...) reuses a block without the allocator, and tracemalloc moves
 * that block's trace to where the object is made.  sonde moves a followed
 * block the same way.  The tracer installed before sonde's (tracemalloc's)
 * is called after it. */
static PyRefTracer prior_tracer; /* GIL */
static void *prior_data;         /* GIL */
static int tracing;              /* sonde's tracer is in; GIL */

/* Where an object's block starts: before the object, the GC header and
 * the managed dict and weak reference pointers, as tracemalloc finds it. */
static char *block_of(PyObject *op)
{
    PyTypeObject *tp = Py_TYPE(op);
    size_t before = 0;
#ifndef Py_GIL_DISABLED
    if (PyType_IS_GC(tp))
        before += 2 * sizeof(void *); /* PyGC_Head */
#endif
    if (PyType_HasFeature(tp, Py_TPFLAGS_MANAGED_DICT | Py_TPFLAGS_MANAGED_WEAKREF))
        before += 2 * sizeof(PyObject *);
    return (char *)op - before;
}

static int ref_tracer(PyObject *op, PyRefTracerEvent event, void *data)
{
    (void)data;
    if (event == PyRefTracer_CREATE)
        mem_on_reuse(block_of(op));
    return prior_tracer ? prior_tracer(op, event, prior_data) : 0;
}

static void tracer_start(void)
{
    prior_tracer = PyRefTracer_GetTracer(&prior_data);
    tracing = PyRefTracer_SetTracer(ref_tracer, NULL) == 0;
}

/* Put back the prior tracer unless another has replaced sonde's since
 * (tracemalloc started, or stopped: it leaves no tracer). */
static void tracer_stop(void)
{
    void *data;
    if (tracing && PyRefTracer_GetTracer(&data) == ref_tracer)
        (void)PyRefTracer_SetTracer(prior_tracer, prior_data);
    tracing = 0;
    prior_tracer = NULL;
    prior_data = NULL;
}
#else
static void tracer_start(void) {}
static void tracer_stop(void) {}
#endif

static sonde_alloc_attach_fn shim_attach(void)
{
    return (sonde_alloc_attach_fn)dlsym(RTLD_DEFAULT, SONDE_ALLOC_ATTACH);
}

void mem_set_floor(mem_data *m, PyObject *code)
{
    m->floor = code;
}

int mem_start(mem_data *m)
{
    if (installed || wrapped) {
        PyErr_SetString(PyExc_RuntimeError,
                        installed ? "another sonde memory profiler is running"
                                  : "an allocator hook installed after sonde's is still in place "
                                    "(tracemalloc?): stop it first");
        return -1;
    }
    mem_tls_busy++;
    int rc = mem_account_start(m);
    mem_tls_busy--;
    if (rc < 0) {
        PyErr_SetFromErrnoWithFilename(PyExc_OSError, "/proc/self/statm");
        return -1;
    }
    for (int d = 0; d < 3; d++) {
        PyMem_GetAllocator(domains[d], &original[d]);
        PyMemAllocatorEx hook = { .ctx = &original[d], .malloc = hook_malloc,
                                  .calloc = hook_calloc, .realloc = hook_realloc,
                                  .free = hook_free };
        PyMem_SetAllocator(domains[d], &hook);
    }
    installed = 1;
    mem_frames_start();
    tracer_start();
    sonde_alloc_attach_fn attach = shim_attach();
    m->native = attach != NULL;
    if (attach)
        attach(&native_sink);
    return 0;
}

void mem_stop(mem_data *m)
{
    if (!installed)
        return;
    sonde_alloc_attach_fn attach = shim_attach();
    if (attach)
        attach(NULL);
    tracer_stop();
    /* Hooks installed after these still call them; they pass through. */
    for (int d = 0; d < 3; d++) {
        PyMemAllocatorEx current;
        PyMem_GetAllocator(domains[d], &current);
        if (current.malloc == hook_malloc)
            PyMem_SetAllocator(domains[d], &original[d]);
        else
            wrapped = 1;
    }
    installed = 0;
    mem_tls_busy++;
    mem_account_stop(m);
    mem_tls_busy--;
}
