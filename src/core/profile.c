/* profile.c - the profile model: functions, calling-context tree, threads. */
#include "profile.h"

#include <stdlib.h>
#include <string.h>

#include "grow.h"

int sonde_profile_init(sonde_profile *p)
{
    memset(p, 0, sizeof *p);
    sonde_strtab_init(&p->strings);
    sonde_u64map_init(&p->func_by_label);
    sonde_u64map_init(&p->step_part_at);
    sonde_about_init(&p->about);
    p->seconds_per_tick = 1e-9;
    p->nodes_cap = 1024;
    p->nodes = calloc(p->nodes_cap, sizeof *p->nodes);
    if (!p->nodes)
        return -1;
    p->nnodes = 1; /* index 0 is SONDE_NO_NODE */
    p->nodes[0].func = SONDE_NO_FUNC;
    return 0;
}

void sonde_profile_free(sonde_profile *p)
{
    sonde_strtab_free(&p->strings);
    sonde_u64map_free(&p->func_by_label);
    free(p->funcs);
    free(p->func_next);
    free(p->nodes);
    free(p->threads);
    free(p->events);
    free(p->slices);
    free(p->steps);
    free(p->step_parts);
    sonde_u64map_free(&p->step_part_at);
    free(p->device_tracks);
    for (int i = 0; i < SONDE_NFIGURES; i++)
        free(p->figure[i]);
    free(p->wide);
    free(p->mappings);
    sonde_about_clear(&p->about);
    memset(p, 0, sizeof *p);
}

void sonde_profile_clear_tree(sonde_profile *p)
{
    p->nnodes = 1; /* index 0 stays SONDE_NO_NODE */
    p->nthreads = 0;
    p->nevents = 0;
    p->events_dropped = 0;
    p->nslices = 0;
    p->slices_dropped = 0;
    p->nsteps = 0;
    p->nstep_parts = 0;
    sonde_u64map_free(&p->step_part_at);
    sonde_u64map_init(&p->step_part_at);
    p->ndevice_tracks = 0;
    for (int i = 0; i < SONDE_NFIGURES; i++)
        p->nfigure[i] = 0;
    if (p->wide)
        memset(p->wide, 0, (size_t)p->wide_slots * sizeof *p->wide);
    p->nwide = 0;
}

int64_t *sonde_profile_figure(sonde_profile *p, enum sonde_node_figure which, uint32_t node)
{
    if (node >= p->nfigure[which]) {
        int64_t *grown = realloc(p->figure[which], (size_t)p->nnodes * sizeof *grown);
        if (!grown)
            return NULL;
        for (uint32_t i = p->nfigure[which]; i < p->nnodes; i++)
            grown[i] = SONDE_NO_FIGURE;
        p->figure[which] = grown;
        p->nfigure[which] = p->nnodes;
    }
    return &p->figure[which][node];
}

int64_t sonde_profile_device_track(sonde_profile *p, int64_t device, int64_t stream)
{
    for (uint32_t i = 0; i < p->ndevice_tracks; i++)
        if (p->device_tracks[i].device == device && p->device_tracks[i].stream == stream)
            return i;
    sonde_device_track *grown = sonde_grow(p->device_tracks, &p->device_tracks_cap,
                                           (size_t)p->ndevice_tracks + 1, sizeof *grown,
                                           SONDE_SLICE_DEVICE - 1);
    if (!grown)
        return -1;
    p->device_tracks = grown;
    p->device_tracks[p->ndevice_tracks] = (sonde_device_track){ device, stream };
    return p->ndevice_tracks++;
}

int64_t sonde_profile_figure_of(const sonde_profile *p, enum sonde_node_figure which,
                                uint32_t node)
{
    return node < p->nfigure[which] ? p->figure[which][node] : SONDE_NO_FIGURE;
}

int sonde_profile_add_event(sonde_profile *p, uint64_t t_ns, uint32_t thread, uint32_t node)
{
    return sonde_profile_add_weighted_event(p, t_ns, thread, node, 0);
}

int sonde_profile_add_weighted_event(sonde_profile *p, uint64_t t_ns, uint32_t thread,
                                     uint32_t node, uint64_t weight)
{
    if (p->nevents == SONDE_MAX_SAMPLE_EVENTS) {
        p->events_dropped = 1;
        return 0;
    }
    sonde_sample_event *e = sonde_grow(p->events, &p->events_cap, p->nevents + 1, sizeof *e,
                                       SONDE_MAX_SAMPLE_EVENTS);
    if (!e)
        return -1;
    p->events = e;
    p->events[p->nevents++] = (sonde_sample_event){ .t_ns = t_ns, .thread = thread, .node = node,
                                                    .weight = weight };
    return 0;
}

static uint64_t label_hash(uint32_t file, int32_t line, uint32_t name)
{
    return ((uint64_t)file * 0x9e3779b97f4a7c15ull) ^
           ((uint64_t)(uint32_t)line << 32) ^ (uint64_t)name;
}

static int intern(sonde_profile *p, const char *s, uint32_t *out)
{
    int64_t id = sonde_strtab_intern_cstr(&p->strings, s ? s : "");
    if (id < 0)
        return -1;
    *out = (uint32_t)id;
    return 0;
}

uint32_t sonde_profile_mapping(sonde_profile *p, const char *file, const char *build_id,
                               uint64_t start, uint64_t limit, uint64_t offset)
{
    sonde_mapping m = { .start = start, .limit = limit, .offset = offset };
    if (intern(p, file, &m.file) < 0 || intern(p, build_id, &m.build_id) < 0)
        return 0;
    for (uint32_t i = 0; i < p->nmappings; i++)
        if (p->mappings[i].file == m.file && p->mappings[i].start == start)
            return i + 1;
    sonde_mapping *grown = sonde_grow(p->mappings, &p->mappings_cap, (size_t)p->nmappings + 1,
                                      sizeof *grown, UINT32_MAX - 1);
    if (!grown)
        return 0;
    p->mappings = grown;
    p->mappings[p->nmappings++] = m;
    return p->nmappings;
}

uint32_t sonde_profile_func_from(sonde_profile *dst, const sonde_profile *src, uint32_t f)
{
    const sonde_func *sf = &src->funcs[f];
    return sonde_profile_func(dst, sonde_profile_str(src, sf->file), sf->line,
                              sonde_profile_str(src, sf->name),
                              sonde_profile_str(src, sf->qualname),
                              (enum sonde_func_kind)sf->kind);
}

uint32_t sonde_profile_func(sonde_profile *p, const char *file, int32_t line,
                            const char *name, const char *qualname,
                            enum sonde_func_kind kind)
{
    sonde_func f = { .line = line, .kind = kind };
    if (intern(p, file, &f.file) < 0 || intern(p, name, &f.name) < 0 ||
        intern(p, qualname ? qualname : name, &f.qualname) < 0)
        return SONDE_NO_FUNC;

    uint64_t h = label_hash(f.file, f.line, f.name);
    uint32_t head = sonde_u64map_get(&p->func_by_label, h);
    for (uint32_t i = head; i != SONDE_NO_FUNC; i = p->func_next[i]) {
        const sonde_func *g = &p->funcs[i];
        if (g->file == f.file && g->line == f.line && g->name == f.name)
            return i;
    }
    /* ids stop below SONDE_NO_FUNC */
    size_t need = (size_t)p->nfuncs + 1;
    sonde_func *funcs = sonde_grow(p->funcs, &p->funcs_cap, need, sizeof *funcs, SONDE_NO_FUNC);
    if (!funcs)
        return SONDE_NO_FUNC;
    p->funcs = funcs;
    uint32_t *next = sonde_grow(p->func_next, &p->func_next_cap, need, sizeof *next,
                                SONDE_NO_FUNC);
    if (!next)
        return SONDE_NO_FUNC;
    p->func_next = next;
    uint32_t id = p->nfuncs;
    uint32_t *slot = sonde_u64map_slot(&p->func_by_label, h, id);
    if (!slot)
        return SONDE_NO_FUNC;
    p->funcs[id] = f;
    p->func_next[id] = head;
    *slot = id;
    p->nfuncs++;
    return id;
}

/* ---- the index of wide nodes' children ---- */

/* Where a child starts its probe in the index: from its parent and its key,
 * or its function and line when it has no key. */
static uint32_t wide_hash(uint32_t parent, const void *key, uint32_t func, int32_t line)
{
    uint64_t h = key ? (uint64_t)(uintptr_t)key
                     : ((uint64_t)func << 32 | (uint32_t)line) ^ 0x5bd1e9955bd1e995ull;
    h ^= (uint64_t)parent * 0x9e3779b97f4a7c15ull;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return (uint32_t)h;
}

static void wide_put(sonde_profile *p, uint32_t node)
{
    const sonde_node *n = &p->nodes[node];
    uint32_t mask = p->wide_slots - 1;
    uint32_t i = wide_hash(n->parent, n->key, n->func, n->line) & mask;
    while (p->wide[i] != SONDE_NO_NODE)
        i = (i + 1) & mask;
    p->wide[i] = node;
    p->nwide++;
}

/* Room for `more` entries, the index kept at most half full.  0, or -1 on
 * out of memory. */
static int wide_reserve(sonde_profile *p, uint32_t more)
{
    uint64_t want = ((uint64_t)p->nwide + more) * 2;
    if (want <= p->wide_slots)
        return 0;
    uint64_t slots = p->wide_slots ? p->wide_slots : 64;
    while (slots < want)
        slots *= 2;
    if (slots > UINT32_MAX)
        return -1;
    uint32_t *old = p->wide, old_slots = p->wide_slots;
    p->wide = calloc(slots, sizeof *p->wide);
    if (!p->wide) {
        p->wide = old;
        return -1;
    }
    p->wide_slots = (uint32_t)slots;
    p->nwide = 0;
    for (uint32_t i = 0; i < old_slots; i++)
        if (old[i] != SONDE_NO_NODE)
            wide_put(p, old[i]);
    free(old);
    return 0;
}

uint32_t sonde_profile_find_wide(const sonde_profile *p, uint32_t parent, const void *key)
{
    uint32_t mask = p->wide_slots - 1;
    for (uint32_t i = wide_hash(parent, key, 0, 0) & mask;; i = (i + 1) & mask) {
        uint32_t c = p->wide[i];
        if (c == SONDE_NO_NODE || (p->nodes[c].parent == parent && p->nodes[c].key == key))
            return c;
    }
}

static uint32_t find_wide_func(const sonde_profile *p, uint32_t parent, uint32_t func,
                               int32_t line)
{
    uint32_t mask = p->wide_slots - 1;
    for (uint32_t i = wide_hash(parent, NULL, func, line) & mask;; i = (i + 1) & mask) {
        uint32_t c = p->wide[i];
        if (c == SONDE_NO_NODE)
            return c;
        const sonde_node *n = &p->nodes[c];
        if (n->parent == parent && !n->key && n->func == func && n->line == line)
            return c;
    }
}

/* ---- nodes ---- */

static uint32_t new_node(sonde_profile *p, uint32_t parent, const void *key,
                         uint32_t func, int32_t line)
{
    sonde_node *nodes = sonde_grow(p->nodes, &p->nodes_cap, (size_t)p->nnodes + 1,
                                   sizeof *nodes, UINT32_MAX);
    if (!nodes)
        return SONDE_NO_NODE;
    p->nodes = nodes;
    /* A parent growing wide indexes the children it has, then each new one. */
    uint32_t siblings = parent != SONDE_NO_NODE ? p->nodes[parent].nchildren : 0;
    if (siblings >= SONDE_NARROW_CHILDREN &&
        wide_reserve(p, siblings == SONDE_NARROW_CHILDREN ? siblings + 1 : 1) < 0)
        return SONDE_NO_NODE;
    uint32_t id = p->nnodes++;
    sonde_node *n = &p->nodes[id];
    memset(n, 0, sizeof *n);
    n->key = key;
    n->func = func;
    n->line = line;
    n->parent = parent;
    if (parent == SONDE_NO_NODE)
        return id;
    sonde_node *up = &p->nodes[parent];
    n->next_sibling = up->first_child;
    up->first_child = id;
    up->nchildren++;
    if (siblings == SONDE_NARROW_CHILDREN) {
        for (uint32_t c = id; c != SONDE_NO_NODE; c = p->nodes[c].next_sibling)
            wide_put(p, c);
    } else if (siblings > SONDE_NARROW_CHILDREN) {
        wide_put(p, id);
    }
    return id;
}

uint32_t sonde_profile_add_child(sonde_profile *p, uint32_t parent,
                                 const void *key, uint32_t func)
{
    return new_node(p, parent, key, func, 0);
}

uint32_t sonde_profile_child_for(sonde_profile *p, uint32_t parent, uint32_t func,
                                 int32_t line)
{
    if (p->nodes[parent].nchildren > SONDE_NARROW_CHILDREN) {
        uint32_t c = find_wide_func(p, parent, func, line);
        if (c != SONDE_NO_NODE)
            return c;
    } else {
        for (uint32_t c = p->nodes[parent].first_child; c != SONDE_NO_NODE;
             c = p->nodes[c].next_sibling)
            if (p->nodes[c].func == func && p->nodes[c].line == line)
                return c;
    }
    return new_node(p, parent, NULL, func, line);
}

int64_t sonde_profile_add_thread(sonde_profile *p, uint64_t ident,
                                 uint64_t native_id, const char *name)
{
    sonde_thread *threads = sonde_grow(p->threads, &p->threads_cap, (size_t)p->nthreads + 1,
                                       sizeof *threads, UINT32_MAX);
    if (!threads)
        return -1;
    p->threads = threads;
    sonde_thread t = { .ident = ident, .native_id = native_id };
    if (intern(p, name, &t.name) < 0)
        return -1;
    t.root = new_node(p, SONDE_NO_NODE, NULL, SONDE_NO_FUNC, 0);
    if (t.root == SONDE_NO_NODE)
        return -1;
    p->threads[p->nthreads] = t;
    return p->nthreads++;
}

int sonde_profile_set_thread_name(sonde_profile *p, uint32_t thread,
                                  const char *name)
{
    if (thread >= p->nthreads)
        return -1;
    return intern(p, name, &p->threads[thread].name);
}

/* Adds src node s (and its subtree) under dst node d of the merged tree. */
static int merge_into(const sonde_profile *p, sonde_profile *m, int by_line, uint32_t s,
                      uint32_t d)
{
    /* Explicit stack of (source node, destination node) pairs. */
    size_t cap = 64, top = 0;
    uint32_t (*stack)[2] = malloc(cap * sizeof *stack);
    if (!stack)
        return -1;
    stack[top][0] = s;
    stack[top][1] = d;
    top++;
    while (top) {
        top--;
        uint32_t src = stack[top][0], dst = stack[top][1];
        for (uint32_t c = p->nodes[src].first_child; c != SONDE_NO_NODE;
             c = p->nodes[c].next_sibling) {
            uint32_t mc = sonde_profile_child_for(m, dst, p->nodes[c].func,
                                                  by_line ? p->nodes[c].line : 0);
            if (mc == SONDE_NO_NODE) {
                free(stack);
                return -1;
            }
            m->nodes[mc].calls += p->nodes[c].calls;
            m->nodes[mc].total += p->nodes[c].total;
            m->nodes[mc].self += p->nodes[c].self;
            uint32_t (*bigger)[2] = sonde_grow(stack, &cap, top + 1, sizeof *stack, SIZE_MAX);
            if (!bigger) {
                free(stack);
                return -1;
            }
            stack = bigger;
            stack[top][0] = c;
            stack[top][1] = mc;
            top++;
        }
    }
    free(stack);
    return 0;
}

int sonde_profile_merged_tree(const sonde_profile *p, int by_line, sonde_node **out,
                              uint32_t *count)
{
    /* Borrow the profile type for its node arrays; no strings are used. */
    sonde_profile m;
    if (sonde_profile_init(&m) < 0)
        return -1;
    uint32_t root = sonde_profile_add_child(&m, SONDE_NO_NODE, NULL, SONDE_NO_FUNC);
    int rc = root == SONDE_NO_NODE ? -1 : 0;
    for (uint32_t t = 0; t < p->nthreads && rc == 0; t++) {
        const sonde_node *r = &p->nodes[p->threads[t].root];
        m.nodes[root].total += r->total;
        rc = merge_into(p, &m, by_line, p->threads[t].root, root);
    }
    if (rc < 0) {
        sonde_profile_free(&m);
        return -1;
    }
    *out = m.nodes;
    *count = m.nnodes;
    m.nodes = NULL;
    sonde_profile_free(&m);
    return 0;
}

enum sonde_func_kind sonde_func_kind_of(const char *file, int32_t line)
{
    if ((line == SONDE_TORCH_SHAPES_LINE || line == SONDE_TORCH_KERNEL_LINE) &&
        strcmp(file, SONDE_TORCH_FILE) == 0)
        return SONDE_FUNC_TORCH;
    if (line != 0)
        return SONDE_FUNC_PYTHON;
    if (strcmp(file, "~") == 0)
        return SONDE_FUNC_C;
    return strcmp(file, SONDE_TORCH_FILE) == 0 ? SONDE_FUNC_TORCH : SONDE_FUNC_PYTHON;
}

size_t sonde_torch_name_len(const sonde_func *f, const char *name)
{
    const char *shapes = f->line == SONDE_TORCH_SHAPES_LINE ? strstr(name, " [") : NULL;
    return shapes ? (size_t)(shapes - name) : strlen(name);
}

/* Indexed by enum sonde_func_kind; constant. */
static const char *const kind_names[] = { "python", "c", "native", "torch" };

const char *sonde_func_kind_name(enum sonde_func_kind kind)
{
    return (unsigned)kind < sizeof kind_names / sizeof *kind_names ? kind_names[kind] : "python";
}

enum sonde_func_kind sonde_func_kind_named(const char *name)
{
    for (unsigned k = 0; k < sizeof kind_names / sizeof *kind_names; k++)
        if (strcmp(name, kind_names[k]) == 0)
            return (enum sonde_func_kind)k;
    return SONDE_FUNC_PYTHON;
}
