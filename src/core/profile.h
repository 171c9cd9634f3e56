/* profile.h - the one in-memory profile model every mode fills.
 *
 * A profile holds interned strings, a function table and a calling-context
 * tree: a node is one function reached along one call path, with how often
 * it was entered there and the time spent in it (total) and in it alone
 * (self).  Each thread has its own root node.  Everything else (pstats
 * aggregates, collapsed stacks, call graphs) is derived from the tree.
 *
 * Nodes and functions are named by 32-bit indexes so that the arrays can
 * grow; index 0 of nodes is never a real node (SONDE_NO_NODE).  The profile
 * owns everything it points to; sonde_profile_free() releases it all.
 *
 * A node's children are found by walking its sibling list while it has at
 * most SONDE_NARROW_CHILDREN of them; past that they are also kept in a
 * hash index (p->wide), so that one call site with many distinct callees
 * costs O(1) per call, not O(callees).  A tree is built either by key
 * (tracers: find_child / add_child, keys never NULL) or by function and
 * line (child_for, for everything else); the index follows the key when a
 * node has one. */
#ifndef SONDE_PROFILE_H
#define SONDE_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "about.h"
#include "strtab.h"
#include "u64map.h"

#define SONDE_NO_NODE 0u
#define SONDE_NO_FUNC UINT32_MAX

enum sonde_func_kind {
    SONDE_FUNC_PYTHON = 0,  /* Python code: file, first line, name */
    SONDE_FUNC_C = 1,       /* C function: file "~", line 0, cProfile's label */
    SONDE_FUNC_NATIVE = 2,  /* native code (record --native): its symbol (or "lib.so+0xOFF"),
                               its source file from DWARF (or its object's path), line 0 */
    SONDE_FUNC_TORCH = 3,   /* PyTorch operator or record_function region: file
                             * "~torch", line 0, its name ("aten::addmm") */
};

/* The file of every SONDE_FUNC_TORCH function: pstats keys read
 * ('~torch', 0, 'aten::addmm'). */
#define SONDE_TORCH_FILE "~torch"

/* A torch operator recorded with its input shapes (--torch-shapes) has
 * this line, and its name is the operator's, a space and the shapes as
 * torch writes them: "aten::addmm [[16, 10], [16, 64], [64, 10], [], []]". */
#define SONDE_TORCH_SHAPES_LINE 1
/* A GPU kernel (recorded when torch sees a CUDA device) has this line, and
 * its node lies beneath the operator that launched it: its calls are its
 * launches, its time on the CPU none, its time on the GPU a figure
 * (SONDE_DEVICE_NS). */
#define SONDE_TORCH_KERNEL_LINE 2

/* The kind a (file, line) label names: "~" at line 0 is a C function,
 * "~torch" at line 0, SONDE_TORCH_SHAPES_LINE or SONDE_TORCH_KERNEL_LINE a
 * torch operator, region or kernel, anything else Python code. */
enum sonde_func_kind sonde_func_kind_of(const char *file, int32_t line);
/* The kind's name in sonde's JSON ("python", "c", "native", "torch"), and back
 * (an unknown name is Python code). */
const char *sonde_func_kind_name(enum sonde_func_kind kind);
enum sonde_func_kind sonde_func_kind_named(const char *name);

typedef struct sonde_func {
    uint32_t file;       /* string ids */
    uint32_t name;       /* co_name, or the C function's label */
    uint32_t qualname;   /* co_qualname where the interpreter has one, else name */
    int32_t line;
    uint32_t kind;
    uint32_t mapping;    /* native: 1 + its object's index in mappings; 0 none */
    uint64_t address;    /* native: an address of its code in the process (the first sampled) */
    uint32_t region;     /* torch: 1 for a record_function region (what torch.profiler's
                          * traces call a user_annotation), 0 for an operator; kept by the
                          * engine for the traces it writes, not in files it reads */
} sonde_func;

/* An object file native code ran in (record --native): for pprof's Mapping. */
typedef struct sonde_mapping {
    uint32_t file;       /* its path, a string id */
    uint32_t build_id;   /* its GNU build id in hex, a string id ("" when it has none) */
    uint64_t start, limit;   /* its executable mapping in the process */
    uint64_t offset;     /* the file offset mapped at start */
} sonde_mapping;

/* The length of the operator's name in a torch function's name (without
 * the shapes a SONDE_TORCH_SHAPES_LINE function adds). */
size_t sonde_torch_name_len(const sonde_func *f, const char *name);

typedef struct sonde_node {
    const void *key;     /* the tracer's identity for the callee (may be NULL) */
    uint32_t func;       /* SONDE_NO_FUNC for a thread root */
    int32_t line;        /* the line a sampled frame was at; 0 = the function's */
    uint32_t parent;
    uint32_t first_child;
    uint32_t next_sibling;
    uint32_t nchildren;
    uint64_t calls;
    uint64_t total;      /* ticks, callees included */
    uint64_t self;       /* ticks, callees excluded */
} sonde_node;

typedef struct sonde_thread {
    uint64_t ident;      /* threading.get_ident() */
    uint64_t native_id;  /* the kernel's thread id, 0 when unknown */
    uint32_t name;       /* string id */
    uint32_t root;       /* node index */
} sonde_thread;

/* One sample in time order, for timelines: the thread and its innermost
 * node (which names the whole stack). */
typedef struct sonde_sample_event {
    uint64_t t_ns;       /* since the profile's start */
    uint32_t thread;
    uint32_t node;
    uint64_t weight;     /* the ticks it added to its stack's nodes where ticks are not
                          * samples (record's cpu mode: the thread's CPU nanoseconds since
                          * its previous sample); 0: not recorded (one sample) */
} sonde_sample_event;

/* One slice of a deterministic timeline (run --torch -f chrome): a call
 * or an operator of a thread, or a GPU kernel on its device's stream,
 * from start to end, nanoseconds since the timeline began
 * (core/timeline.h). */
typedef struct sonde_slice {
    uint64_t start_ns, end_ns;
    uint32_t thread;     /* a thread's index, or SONDE_SLICE_DEVICE | a device track's */
    uint32_t node;
} sonde_slice;

/* One training step (run --torch): from the end of the one before (or the
 * start of the recording) to the end of the program's optimizer.step() or
 * sonde.step() call that ended it, on the thread that made that call;
 * nanoseconds on the slices' clock.  `number` counts from 0, as
 * torch.profiler's ProfilerStep#N does. */
typedef struct sonde_step {
    uint64_t start_ns, end_ns;
    uint32_t thread;
    uint32_t number;
} sonde_step;

/* What one node of a torch profile did in one training step (run --torch,
 * core/step_parts.h): the calls of an operator or record_function region
 * that began in step `step`, their time and their self time as
 * torch.profiler counts it (less the operators and regions run directly
 * in them); ticks. */
typedef struct sonde_step_part {
    uint32_t node;
    uint32_t step;       /* the step's number (ProfilerStep#N), or SONDE_NO_STEP */
    uint64_t calls;
    uint64_t total;
    int64_t self;        /* summed as parts arrive: >= 0 once all have */
} sonde_step_part;

/* In sonde_step_part.step: the calls began outside every step (before the
 * first one recorded, or after the last). */
#define SONDE_NO_STEP UINT32_MAX

/* In sonde_slice.thread: the slice is a kernel on p->device_tracks[the rest]. */
#define SONDE_SLICE_DEVICE 0x80000000u

/* A GPU stream kernels ran on (a track of the timeline). */
typedef struct sonde_device_track {
    int64_t device;      /* the GPU's index */
    int64_t stream;      /* the stream's id there */
} sonde_device_track;

/* Timelines stop growing past this many events (24 bytes each). */
#define SONDE_MAX_SAMPLE_EVENTS (16u * 1024 * 1024)

/* What torch recorded of a node beyond its time (sonde run --torch), each
 * summed over the node's calls: */
enum sonde_node_figure {
    SONDE_CPU_MEM,    /* an operator's net CPU bytes allocated while it ran,
                       * callees included (torch's cpu_memory_usage; --torch-memory) */
    SONDE_DEVICE_MEM, /* the same of the GPU's allocator (device_memory_usage) */
    SONDE_DEVICE_NS,  /* a GPU kernel's nanoseconds on the device (a node
                       * SONDE_TORCH_KERNEL_LINE names, beneath the
                       * operator that launched it) */
    SONDE_NFIGURES
};

typedef struct sonde_profile {
    sonde_strtab strings;
    sonde_func *funcs;
    uint32_t nfuncs;
    size_t funcs_cap;
    sonde_u64map func_by_label;   /* hash of (file, line, name) -> chain head */
    uint32_t *func_next;          /* chain of functions sharing a label hash */
    size_t func_next_cap;
    sonde_node *nodes;
    uint32_t nnodes;
    size_t nodes_cap;
    sonde_thread *threads;
    uint32_t nthreads;
    size_t threads_cap;
    double seconds_per_tick;
    /* 0: ticks are time (a deterministic profile, node calls counted);
     * else ticks are samples taken at this many per second. */
    double sample_rate;
    /* The file gave counts and no rate (collapsed stacks): the rate is 1
     * and a "second" is one sample. */
    int rate_unknown;
    sonde_sample_event *events;   /* the timeline, when one was kept */
    uint64_t nevents;
    size_t events_cap;
    int events_dropped;           /* the timeline reached its cap */
    sonde_slice *slices;          /* a deterministic timeline, when one was kept */
    uint64_t nslices;
    size_t slices_cap;
    uint64_t slices_budget;       /* slices it keeps at most; 0: none kept */
    uint64_t slices_dropped;      /* slices left out for the budget */
    sonde_step *steps;            /* the training steps the timeline saw (run --torch) */
    uint32_t nsteps;
    sonde_step_part *step_parts;  /* each torch node's part of each step (step_parts.h) */
    uint32_t nstep_parts;
    size_t step_parts_cap;
    sonde_u64map step_part_at;    /* node << 32 | step -> index in step_parts */
    sonde_device_track *device_tracks; /* the GPU streams kernel slices ran on */
    uint32_t ndevice_tracks;
    size_t device_tracks_cap;
    /* --torch: each node's figures beyond time (enum sonde_node_figure),
     * one array a figure; SONDE_NO_FIGURE for a node without one, and for
     * nodes from nfigure[which] on; NULL when the figure was not recorded. */
    int64_t *figure[SONDE_NFIGURES];
    uint32_t nfigure[SONDE_NFIGURES];
    int pid;                      /* the profiled process, 0 when unknown */
    sonde_about about;            /* what was profiled, how and when (about.h) */
    uint32_t *wide;               /* open addressing: children of wide nodes, 0 = empty */
    uint32_t nwide, wide_slots;
    sonde_mapping *mappings;      /* native code's objects (sonde_func.mapping) */
    uint32_t nmappings;
    size_t mappings_cap;
} sonde_profile;

#define SONDE_NO_FIGURE INT64_MIN

/* Nodes with more children than this index them (see above). */
#define SONDE_NARROW_CHILDREN 8

/* 0 on success, -1 on out of memory. */
int sonde_profile_init(sonde_profile *p);
void sonde_profile_free(sonde_profile *p);
/* Forgets the tree, the threads and the timelines, keeping the strings,
 * functions and mappings (which a sampler's caches name): the profile of
 * the next interval (record --every). */
void sonde_profile_clear_tree(sonde_profile *p);
/* dst (not initialised) becomes a copy of src's threads, tree and sample
 * timeline with only the functions, strings and mappings the tree uses
 * (profile_compact.c: what record --every writes of an interval; src's
 * about is not copied).  0, or -1 on out of memory (dst then freed). */
int sonde_profile_compact(sonde_profile *dst, const sonde_profile *src);

/* node's entry of the figure (node < nnodes), its array made or grown to
 * every node with SONDE_NO_FIGURE entries; NULL on out of memory. */
int64_t *sonde_profile_figure(sonde_profile *p, enum sonde_node_figure which, uint32_t node);
/* The track of a GPU's stream (made when new): its index in
 * p->device_tracks, or -1 on out of memory. */
int64_t sonde_profile_device_track(sonde_profile *p, int64_t device, int64_t stream);

/* node's figure, SONDE_NO_FIGURE when it has none. */
int64_t sonde_profile_figure_of(const sonde_profile *p, enum sonde_node_figure which,
                                uint32_t node);

/* The function with this label, created when new; SONDE_NO_FUNC on out of
 * memory.  Functions are identified by (file, line, name) as pstats does. */
uint32_t sonde_profile_func(sonde_profile *p, const char *file, int32_t line,
                            const char *name, const char *qualname,
                            enum sonde_func_kind kind);

/* src's function f in dst, found or made by its label (file, line,
 * name, qualname, kind); SONDE_NO_FUNC on out of memory. */
uint32_t sonde_profile_func_from(sonde_profile *dst, const sonde_profile *src, uint32_t f);

/* The mapping of file at start (made when new): 1 + its index, for
 * sonde_func.mapping; 0 on out of memory. */
uint32_t sonde_profile_mapping(sonde_profile *p, const char *file, const char *build_id,
                               uint64_t start, uint64_t limit, uint64_t offset);

/* A new thread with its own root node; its index, or -1 on out of memory. */
int64_t sonde_profile_add_thread(sonde_profile *p, uint64_t ident,
                                 uint64_t native_id, const char *name);
int sonde_profile_set_thread_name(sonde_profile *p, uint32_t thread,
                                  const char *name);

/* sonde_profile_find_child for a parent with more than
 * SONDE_NARROW_CHILDREN children: a look-up in the hash index. */
uint32_t sonde_profile_find_wide(const sonde_profile *p, uint32_t parent, const void *key);

/* The child of `parent` with this key (never NULL), or SONDE_NO_NODE.
 * Among few siblings, a child found is moved to the front, so a loop
 * calling the same callee finds it first (the tracer's hot path); many
 * siblings are looked up in the index. */
static inline uint32_t sonde_profile_find_child(sonde_profile *p, uint32_t parent,
                                                const void *key)
{
    sonde_node *nodes = p->nodes;
    if (nodes[parent].nchildren > SONDE_NARROW_CHILDREN)
        return sonde_profile_find_wide(p, parent, key);
    uint32_t prev = SONDE_NO_NODE, c = nodes[parent].first_child;
    while (c != SONDE_NO_NODE && nodes[c].key != key) {
        prev = c;
        c = nodes[c].next_sibling;
    }
    if (c != SONDE_NO_NODE && prev != SONDE_NO_NODE) {
        nodes[prev].next_sibling = nodes[c].next_sibling;
        nodes[c].next_sibling = nodes[parent].first_child;
        nodes[parent].first_child = c;
    }
    return c;
}

/* A new child of `parent` for (key, func); SONDE_NO_NODE on out of memory.
 * May move p->nodes. */
uint32_t sonde_profile_add_child(sonde_profile *p, uint32_t parent,
                                 const void *key, uint32_t func);

/* The child of `parent` for (func, line), created when new (samplers,
 * files and merges use this; tracers use the key-based pair above). */
uint32_t sonde_profile_child_for(sonde_profile *p, uint32_t parent, uint32_t func,
                                 int32_t line);

/* ticks (a node's self or total) as a count of `unit` seconds (1e-6 for
 * microseconds, 1 / sample_rate for samples), rounded: a file's huge,
 * negative or NaN times give UINT64_MAX or 0, never a conversion C leaves
 * undefined. */
static inline uint64_t sonde_profile_ticks_in(const sonde_profile *p, uint64_t ticks, double unit)
{
    double v = (double)ticks * p->seconds_per_tick / unit + 0.5;
    if (!(v >= 1))
        return 0;
    return v < 18446744073709551616.0 ? (uint64_t)v : UINT64_MAX;
}

static inline const char *sonde_profile_str(const sonde_profile *p, uint32_t id)
{
    return sonde_strtab_get(&p->strings, id);
}

/* Appends a sample to the timeline (dropped past SONDE_MAX_SAMPLE_EVENTS).
 * 0, or -1 on out of memory. */
int sonde_profile_add_event(sonde_profile *p, uint64_t t_ns, uint32_t thread, uint32_t node);
/* The same for a sample that weighed `weight` ticks (sonde_sample_event). */
int sonde_profile_add_weighted_event(sonde_profile *p, uint64_t t_ns, uint32_t thread,
                                     uint32_t node, uint64_t weight);

/* profile_events.c: the timeline put in time order (ties keep the order
 * they had: a stable sort), for a reader whose samples come thread by
 * thread.  0, or -1 on out of memory (the events are then unchanged). */
int sonde_profile_sort_events(sonde_profile *p);
/* The timeline by thread, each thread's samples in time order: thread t's
 * are p->events[(*order)[k]] for k in [(*start)[t], (*start)[t + 1]); an
 * event naming no thread of p is left out.  *start (nthreads + 1
 * entries) and *order are malloc'd: the caller frees them.  0, or -1 on
 * out of memory. */
int sonde_profile_events_by_thread(const sonde_profile *p, uint64_t **start, uint32_t **order);

/* A copy of p's tree with every thread merged under one root and sibling
 * nodes of the same function merged (and of the same line, when by_line):
 * the shape flame graphs and collapsed stacks show.  Node 1 of *out is the
 * root, and every node comes after its parent; *out is malloc'd (caller
 * frees).  0, or -1 on out of memory. */
int sonde_profile_merged_tree(const sonde_profile *p, int by_line, sonde_node **out,
                              uint32_t *count);

#endif

