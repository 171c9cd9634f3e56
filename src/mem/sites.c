/* sites.c - where sonde mem's bytes belong: the code objects whose lines
 * get figures (sites), each thread's shadow stack with line events, the
 * placing of a sample by the stack, and the timeline's spans.  See
 * account.h for the two ways and the locking. */
#include <stdlib.h>
#include <string.h>

#include "../core/clock.h"
#include "../core/grow.h"
#include "account.h"

/* Thread-local: this thread's shadow stack, valid while tls_generation is
 * mem_generation (line events). */
static _Thread_local mem_thread *tls_thread __attribute__((tls_model("initial-exec")));
static _Thread_local uint64_t tls_generation __attribute__((tls_model("initial-exec")));

/* ---- sites ---- */

static void free_site(mem_site *s)
{
    if (!s)
        return;
    free(s->file);
    free(s->name);
    free(s->lines);
    free(s);
}

/* Room for one more site (lock held).  0, or -1 on out of memory. */
static int grow_sites(mem_data *m)
{
    if (m->nsites < m->sites_cap)
        return 0;
    mem_site **bigger = sonde_grow(m->sites, &m->sites_cap, (size_t)m->nsites + 1,
                                   sizeof *bigger, UINT32_MAX);
    if (!bigger)
        return -1;
    m->sites = bigger;
    return 0;
}

uint32_t mem_site_add(mem_data *m, const void *code, const char *file, const char *name,
                      int first, int nlines, const uint64_t *hits)
{
    if (nlines <= 0)
        return MEM_NO_SITE;
    mem_lock(m); /* samples read the sites from any thread; this is sonde's memory */
    uint32_t index = MEM_NO_SITE;
    mem_site *s = calloc(1, sizeof *s);
    if (s)
        *s = (mem_site){ .code = code, .file = strdup(file), .name = strdup(name),
                         .first = first, .nlines = nlines, .hits = hits,
                         .lines = calloc((size_t)nlines, sizeof(mem_line_figures)),
                         .index = m->nsites, .last_span = -1 };
    uint32_t *slot = s && s->file && s->name && s->lines && grow_sites(m) == 0
                         ? sonde_u64map_slot(&m->site_of, (uint64_t)(uintptr_t)code, m->nsites)
                         : NULL;
    if (slot) {
        *slot = m->nsites;
        m->sites[m->nsites] = s;
        index = m->nsites++;
    } else {
        free_site(s);
    }
    mem_unlock(m);
    return index;
}

/* ---- spans ---- */

void mem_span_mark(mem_data *m, mem_site *s, uint64_t ns, int end)
{
    mem_span *last = s->last_span >= 0 ? &m->spans[s->last_span] : NULL;
    if (end) {
        if (last)
            last->end = ns;
        return;
    }
    if (last && last->site == s->index && ns - last->end < m->interval_ns / 2) {
        last->end = 0; /* running again: the same span */
        return;
    }
    if (m->nspans == m->spans_cap) {
        mem_busy_begin();
        mem_span *bigger = sonde_grow(m->spans, &m->spans_cap, (size_t)m->nspans + 1,
                                      sizeof *bigger, MEM_MAX_SPANS);
        mem_busy_end();
        if (!bigger) {
            m->spans_dropped++;
            s->last_span = -1;
            return;
        }
        m->spans = bigger;
    }
    m->spans[m->nspans] = (mem_span){ .site = s->index, .start = ns, .end = 0 };
    s->last_span = m->nspans++;
}

/* ---- line events: the shadow stacks (GIL held) ---- */

/* The calling thread's shadow stack in this recording, or NULL. */
static mem_thread *this_thread(void)
{
    return tls_generation == __atomic_load_n(&mem_generation, __ATOMIC_RELAXED) ? tls_thread
                                                                                : NULL;
}

/* The same, made when new (NULL on out of memory). */
static mem_thread *attach(mem_data *m)
{
    uint64_t generation = __atomic_load_n(&mem_generation, __ATOMIC_RELAXED);
    if (tls_generation == generation)
        return tls_thread;
    mem_busy_begin();
    mem_thread *th = calloc(1, sizeof *th);
    mem_busy_end();
    if (th) {
        th->next = m->threads;
        m->threads = th;
    }
    tls_thread = th;
    tls_generation = generation;
    return th;
}

static mem_line_figures *figures_of(mem_site *s, int line)
{
    int k = s ? line - s->first : -1;
    return k >= 0 && k < s->nlines ? &s->lines[k] : NULL;
}

/* A line opens and closes with the thread's totals. */
static void line_open(mem_data *m, mem_thread *th, mem_open *f, uint64_t rss)
{
    f->alloc0 = th->alloc_total;
    f->freed0 = th->freed_total;
    f->rss0 = rss;
    f->peak = mem_heap(m);
    f->node = 0;
}

static void line_close(mem_data *m, mem_thread *th, mem_open *f, uint64_t rss)
{
    mem_line_figures *lf = figures_of(f->site, f->line);
    if (!lf)
        return; /* nested code: its function's line counts it */
    uint64_t heap = mem_heap(m), peak = f->peak > heap ? f->peak : heap;
    /* Atomic: workers add to these under the lock alone (add_from_stack). */
    __atomic_fetch_add(&lf->alloc, th->alloc_total - f->alloc0, __ATOMIC_RELAXED);
    __atomic_fetch_add(&lf->freed, th->freed_total - f->freed0, __ATOMIC_RELAXED);
    lf->rss_max = rss > lf->rss_max ? rss : lf->rss_max;
    lf->rss_increment += (int64_t)rss - (int64_t)f->rss0;
    lf->peak_heap = peak > lf->peak_heap ? peak : lf->peak_heap;
}

int mem_frame_enter(mem_data *m, uint32_t site)
{
    mem_thread *th = attach(m);
    if (!th)
        return -1;
    if (th->depth == th->cap) {
        mem_busy_begin();
        mem_open *s = sonde_grow(th->stack, &th->cap, (size_t)th->depth + 1, sizeof *s,
                                 UINT32_MAX);
        mem_busy_end();
        if (!s)
            return -1;
        th->stack = s;
    }
    mem_site *s = site < m->nsites ? m->sites[site] : NULL;
    th->stack[th->depth++] = (mem_open){ .site = s, .line = -1, .peak = mem_heap(m) };
    if (s && s->active++ == 0)
        mem_span_mark(m, s, sonde_clock_ns(), 0);
    return 0;
}

/* Ends activation f, the top of th's stack. */
static void close_open(mem_data *m, mem_thread *th, mem_open *f)
{
    if (f->line >= 0)
        line_close(m, th, f, mem_rss(m));
    if (f > th->stack && f[-1].peak < f->peak)
        f[-1].peak = f->peak;
    if (f->site && --f->site->active == 0)
        mem_span_mark(m, f->site, sonde_clock_ns(), 1);
}

void mem_frame_leave(mem_data *m)
{
    mem_thread *th = this_thread();
    if (!th || th->depth == 0)
        return;
    close_open(m, th, &th->stack[th->depth - 1]);
    th->depth--;
}

void mem_line(mem_data *m, int line)
{
    mem_thread *th = this_thread();
    if (!th || th->depth == 0)
        return;
    mem_open *f = &th->stack[th->depth - 1];
    uint64_t rss = mem_rss(m);
    if (f->line >= 0)
        line_close(m, th, f, rss);
    f->line = line;
    if (line >= 0)
        line_open(m, th, f, rss);
}

void mem_sites_forked(mem_data *m)
{
    for (uint32_t i = 0; i < m->nsites; i++) {
        mem_site *s = m->sites[i];
        memset(s->lines, 0, (size_t)s->nlines * sizeof *s->lines);
        s->active = 0;
        s->last_span = -1;
    }
    m->walk = 0;
    m->rss_nlines = 0;
    mem_thread *own = this_thread();
    for (mem_thread **at = &m->threads; *at;) {
        mem_thread *th = *at;
        if (th == own) {
            at = &th->next;
            continue;
        }
        *at = th->next; /* a thread the fork did not copy */
        free(th->stack);
        free(th);
    }
    if (!own)
        return;
    own->alloc_total = own->freed_total = 0;
    uint64_t now = sonde_clock_ns(), rss = mem_rss(m);
    for (uint32_t k = 0; k < own->depth; k++) {
        mem_open *f = &own->stack[k];
        if (f->line >= 0)
            line_open(m, own, f, rss);
        f->peak = 0;
        f->node = 0;
        if (f->site && f->site->active++ == 0)
            mem_span_mark(m, f->site, now, 0);
    }
}

void mem_sites_unwind(mem_data *m)
{
    for (mem_thread *th = m->threads; th; th = th->next)
        for (; th->depth; th->depth--)
            close_open(m, th, &th->stack[th->depth - 1]);
}

/* The node of the stack of sites th is on, made as needed from the
 * deepest activation that knows its node (lock held). */
static uint32_t thread_node(mem_data *m, mem_thread *th)
{
    uint32_t k = th->depth;
    while (k > 0 && th->stack[k - 1].node == 0)
        k--;
    uint32_t node = k ? th->stack[k - 1].node : m->root;
    for (; k < th->depth; k++) {
        mem_open *f = &th->stack[k];
        if (!f->site) { /* on its function's line, already in the stack */
            f->node = node;
            continue;
        }
        uint32_t child = sonde_profile_child_for(&m->stacks, node, f->site->index,
                                                 f->line >= 0 ? f->line : f->site->first);
        if (child == SONDE_NO_NODE)
            return node; /* out of memory: the deepest stack known */
        f->node = node = child;
    }
    return node;
}

void mem_thread_allocated(mem_data *m, uint64_t weight)
{
    mem_thread *th = m->line_events ? this_thread() : NULL;
    if (!th)
        return;
    th->alloc_total += weight;
    mem_open *top = th->depth ? &th->stack[th->depth - 1] : NULL;
    if (top && top->peak < m->heap)
        top->peak = m->heap;
}

/* ---- from the stack (lock held) ---- */

/* The line of code unit `offset` of site s (cached: the interpreter walks
 * the whole location table for it). */
static int line_at(mem_data *m, const mem_site *s, int offset)
{
    if (offset < 0)
        return s->first;
    uint64_t key = (uint64_t)s->index << 32 | (uint32_t)offset;
    uint32_t line = sonde_u64map_get(&m->line_at, key);
    if (line == SONDE_U64MAP_NONE) {
        int found = m->host.line_of(s->code, offset);
        line = (uint32_t)(found > 0 ? found : s->first);
        sonde_u64map_slot(&m->line_at, key, line); /* on out of memory, asked again */
    }
    return (int)line;
}

/* The site lines among frames[0 .. n - 1], innermost first, after the k
 * of out already found; the new count. */
static int sites_among(mem_data *m, const mem_frame *frames, int n, mem_site_line *out, int k,
                       int max)
{
    for (int i = 0; i < n && k < max && frames[i].code != m->floor; i++) {
        uint32_t site = sonde_u64map_get(&m->site_of, (uint64_t)(uintptr_t)frames[i].code);
        if (site < m->nsites)
            out[k++] = (mem_site_line){ .site = m->sites[site],
                                    .line = line_at(m, m->sites[site], frames[i].offset) };
    }
    return k;
}

/* The site lines on the calling thread's stack (when `own`), innermost
 * first, then those on the stack of the thread that started it: a
 * worker's bytes are also the line's that handed it the work and waits
 * for it, as a callee's are its caller's.  Each sample stamps them so
 * that a line that recurs counts once. */
static int site_stack(mem_data *m, mem_site_line *out, int max, int own)
{
    mem_frame frames[MEM_MAX_FRAMES];
    int cap = max < MEM_MAX_FRAMES ? max : MEM_MAX_FRAMES, k = 0;
    if (own)
        k = sites_among(m, frames, m->host.frames(frames, cap), out, 0, max);
    if (m->host.starter_frames)
        k = sites_among(m, frames, m->host.starter_frames(frames, cap), out, k, max);
    m->walk++;
    return k;
}

/* The line's figures when this sample has not counted it yet, else NULL. */
static mem_line_figures *first_sight(mem_data *m, const mem_site_line *sl)
{
    mem_line_figures *lf = figures_of(sl->site, sl->line);
    if (!lf || lf->seen == m->walk)
        return NULL;
    lf->seen = m->walk;
    return lf;
}

static uint32_t stack_node_of(mem_data *m, const mem_site_line *s, int k)
{
    uint32_t node = m->root;
    for (int i = k - 1; i >= 0; i--) {
        uint32_t child = sonde_profile_child_for(&m->stacks, node, s[i].site->index, s[i].line);
        if (child == SONDE_NO_NODE)
            break;
        node = child;
    }
    return node;
}

/* Sites seen running at `ns` extend their current span, or start one.
 * A site goes on running while the recording thread's readings keep
 * seeing it (one each interval, when the timeline thread gets a CPU): a
 * `reading` of that thread continues a site the reading before saw, and
 * a sample one the latest reading saw; else a site not seen for two
 * intervals starts a new span. */
static void spans_seen(mem_data *m, const mem_site_line *s, int k, uint64_t ns, int reading)
{
    for (int i = 0; i < k; i++) {
        mem_site *site = s[i].site;
        int read_running =
            site->seen_reading && site->seen_reading + (uint64_t)reading == m->readings;
        if (site->last_span < 0 ||
            (!read_running && m->spans[site->last_span].end + 2 * m->interval_ns < ns))
            mem_span_mark(m, site, ns, 0);
        if (site->last_span >= 0)
            m->spans[site->last_span].end = ns;
        if (reading)
            site->seen_reading = m->readings;
    }
}

void mem_spans_of_recorder(mem_data *m, const mem_frame *frames, int n)
{
    mem_site_line s[MEM_MAX_FRAMES];
    int k = sites_among(m, frames, n, s, 0, MEM_MAX_FRAMES);
    m->readings++;
    spans_seen(m, s, k, sonde_clock_ns(), 1);
}

/* From the stack, the RSS change since the last reading goes to the
 * lines of the stack it was read on: they ran on from there (a line that
 * allocates is read as it allocates, before it touches the pages; a
 * release, before it returns them), and RSS now is their Mem usage. */
void mem_sites_rss_read(mem_data *m)
{
    int64_t delta = (int64_t)m->rss - (int64_t)m->rss_attributed;
    m->rss_attributed = m->rss;
    m->walk++;
    for (int i = 0; i < m->rss_nlines; i++) {
        mem_line_figures *lf = first_sight(m, &m->rss_lines[i]);
        if (lf) {
            lf->rss_increment += delta;
            lf->rss_max = m->rss > lf->rss_max ? m->rss : lf->rss_max;
        }
    }
}

/* RSS read again once the allocations and releases of a thread have
 * churned enough: the change so far to the lines of the last reading,
 * the change from now to the lines of this one, s. */
static void rss_to_lines(mem_data *m, const mem_site_line *s, int k)
{
    if (m->churn - m->churn_at_read < MEM_RSS_CHURN)
        return;
    mem_read_rss(m, 1);
    mem_sites_rss_read(m);
    memcpy(m->rss_lines, s, (size_t)k * sizeof *s);
    m->rss_nlines = k;
}

static uint32_t place_by_stack(mem_data *m, uint64_t weight)
{
    mem_site_line s[MEM_MAX_FRAMES];
    int k = site_stack(m, s, MEM_MAX_FRAMES, 1);
    for (int i = 0; i < k; i++) {
        mem_line_figures *lf = first_sight(m, &s[i]);
        if (lf) {
            lf->alloc += weight;
            lf->peak_heap = m->heap > lf->peak_heap ? m->heap : lf->peak_heap;
        }
    }
    if (k)
        spans_seen(m, s, k, sonde_clock_ns(), 0);
    rss_to_lines(m, s, k);
    return stack_node_of(m, s, k);
}

/* A release of weight bytes counts on the site lines of the stack; undo
 * takes back one counted just before (a realloc that failed). */
static void release_by_stack(mem_data *m, uint64_t weight, int undo)
{
    mem_site_line s[MEM_MAX_FRAMES];
    int k = site_stack(m, s, MEM_MAX_FRAMES, 1);
    for (int i = 0; i < k; i++) {
        mem_line_figures *lf = first_sight(m, &s[i]);
        if (lf)
            lf->freed = undo ? lf->freed - weight : lf->freed + weight;
    }
    if (!undo)
        rss_to_lines(m, s, k);
}

/* ---- line events: what the stack adds (lock held) ---- */

/* With line events, a thread's open lines get its own bytes (line_close);
 * the stack adds what the events cannot see: the bytes of a thread with
 * no open activation (a worker, or the program outside the traced
 * functions) go to the lines on its stack and its starter's, and those of
 * a traced worker to its starter's lines too.  The starter closes its own
 * lines under the GIL alone, so these adds are atomic; RSS and the spans
 * stay with the events.  delta is added to alloc or to freed (a negative
 * one takes back what was added just before).  The node of the stack
 * read. */
static uint32_t add_from_stack(mem_data *m, int64_t delta, int freed, int own)
{
    mem_site_line s[MEM_MAX_FRAMES];
    int k = site_stack(m, s, MEM_MAX_FRAMES, own);
    for (int i = 0; i < k; i++) {
        mem_line_figures *lf = first_sight(m, &s[i]);
        if (lf)
            __atomic_fetch_add(freed ? &lf->freed : &lf->alloc, (uint64_t)delta, __ATOMIC_RELAXED);
    }
    return stack_node_of(m, s, k);
}

/* This thread's shadow stack when it has an open activation, else NULL. */
static mem_thread *traced_thread(void)
{
    mem_thread *th = this_thread();
    return th && th->depth ? th : NULL;
}

/* The node of th's stack of sites above `node` (its starter's lines),
 * made as needed; not kept, since the starter moves on. */
static uint32_t node_above(mem_data *m, const mem_thread *th, uint32_t node)
{
    for (uint32_t k = 0; k < th->depth; k++) {
        const mem_open *f = &th->stack[k];
        if (!f->site)
            continue; /* on its function's line, already in the stack */
        uint32_t child = sonde_profile_child_for(&m->stacks, node, f->site->index,
                                                 f->line >= 0 ? f->line : f->site->first);
        if (child == SONDE_NO_NODE)
            return node; /* out of memory: the deepest stack known */
        node = child;
    }
    return node;
}

static uint32_t place_by_events(mem_data *m, uint64_t weight)
{
    mem_thread *th = traced_thread();
    if (!th)
        return add_from_stack(m, (int64_t)weight, 0, 1);
    uint32_t starter = add_from_stack(m, (int64_t)weight, 0, 0);
    return starter == m->root ? thread_node(m, th) : node_above(m, th, starter);
}

/* ---- both ways (lock held) ---- */

uint32_t mem_place_alloc(mem_data *m, uint64_t weight)
{
    return m->line_events ? place_by_events(m, weight) : place_by_stack(m, weight);
}

uint32_t mem_place_again(mem_data *m, uint64_t weight, uint32_t node)
{
    if (m->line_events)
        return place_by_events(m, weight);
    mem_site_line s[MEM_MAX_FRAMES];
    int k = site_stack(m, s, MEM_MAX_FRAMES, 1);
    uint32_t now = stack_node_of(m, s, k);
    for (int i = 0; now != node && i < k; i++) {
        mem_line_figures *lf = first_sight(m, &s[i]);
        if (lf) {
            lf->alloc += weight;
            lf->peak_heap = m->heap > lf->peak_heap ? m->heap : lf->peak_heap;
        }
    }
    return now;
}

void mem_place_release(mem_data *m, uint64_t weight, enum mem_leaving how)
{
    if (!m->line_events) {
        if (how != MEM_FORGOTTEN)
            release_by_stack(m, weight, how == MEM_RESTORED);
        return;
    }
    mem_thread *th = traced_thread();
    int64_t w = (int64_t)weight;
    add_from_stack(m, how == MEM_RELEASED ? w : -w, how != MEM_FORGOTTEN, !th);
    if (!th)
        return;
    if (how == MEM_RELEASED)
        th->freed_total += weight;
    else if (how == MEM_FORGOTTEN)
        th->alloc_total -= weight;
    else
        th->freed_total -= weight;
}

void mem_sites_free(mem_data *m)
{
    m->rss_nlines = 0;
    for (uint32_t i = 0; i < m->nsites; i++)
        free_site(m->sites[i]);
    free(m->sites);
    m->sites = NULL;
    m->nsites = m->sites_cap = 0;
    while (m->threads) {
        mem_thread *next = m->threads->next;
        free(m->threads->stack);
        free(m->threads);
        m->threads = next;
    }
}
