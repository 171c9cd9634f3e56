/* memory.c - the memory profiler's life on the interpreter's side: made
 * with the interpreter as its host (frames.h) and a seed, given the code
 * objects to follow, freed.  See memory.h. */
#include "memory.h"

#include <stdlib.h>

#include "../../mem/account.h"
#include "../interp/code_name.h"
#include "frames.h"

/* SONDE_SEED as a seed (any text: its FNV-1a hash), or 0 when unset: a
 * run's random draws replayed. */
static uint64_t seed_from_environment(void)
{
    const char *text = getenv("SONDE_SEED");
    if (!text || !*text)
        return 0;
    uint64_t h = 0xcbf29ce484222325ull;
    for (const unsigned char *p = (const unsigned char *)text; *p; p++)
        h = (h ^ *p) * 0x100000001b3ull;
    return h ? h : 1;
}

mem_data *mem_new(uint64_t sample_bytes, uint64_t interval_ns, int line_events)
{
    mem_data *m = mem_data_new(sample_bytes, interval_ns, line_events, &mem_python_host,
                               seed_from_environment());
    if (!m)
        PyErr_NoMemory();
    return m;
}

void mem_free(mem_data *m) { mem_data_free(m); }

uint32_t mem_add_site(mem_data *m, PyCodeObject *code, PyObject *name, int first, int nlines,
                      const uint64_t *hits)
{
    mem_busy_begin(); /* what naming allocates is sonde's */
    PyObject *file = sonde_text_bytes(code->co_filename, "?");
    PyObject *shown = file ? sonde_text_bytes(name, "?") : NULL;
    uint32_t site = shown ? mem_site_add(m, code, PyBytes_AS_STRING(file),
                                         PyBytes_AS_STRING(shown), first, nlines, hits)
                          : MEM_NO_SITE;
    Py_XDECREF(shown);
    Py_XDECREF(file);
    mem_busy_end();
    if (site == MEM_NO_SITE && !PyErr_Occurred())
        PyErr_NoMemory();
    return site;
}

int mem_forked(mem_data *m)
{
    mem_busy_begin(); /* the books' own memory is sonde's */
    int rc = mem_account_forked(m);
    mem_busy_end();
    if (rc < 0)
        PyErr_SetFromErrnoWithFilename(PyExc_OSError, "/proc/self/statm");
    return rc;
}
