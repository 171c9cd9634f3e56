/* chrome.c - Chrome's trace event JSON (chrome://tracing, Perfetto) from a
 * profile's timeline: a sampled one's, or a deterministic one's slices.
 *
 * Slices (sonde run --torch, core/timeline.h) are complete events ("X"),
 * calls in category "python" and operators in "torch", nested on their
 * thread's track as they ran, and GPU kernels in "kernel" on their
 * stream's; training steps (ProfilerStep#N, run --torch) on a track of
 * their own, "steps" (tid 0: a step's ends fall inside the calls of its
 * thread, which would not nest); otherData says how many the budget kept
 * and how many it dropped.  Of the Python calls, only those that hold an
 * operator or region are written (torch_holders.h) unless every one is
 * asked for (opts' all_calls); otherData's "python_calls" says which.
 *
 * Each thread's samples are replayed in time order: frames that leave the
 * stack between two samples end ("E") at the later sample's time, frames
 * that join it begin ("B") there, so a function that stayed on the stack
 * across many samples is one slice.  Times are microseconds since the
 * recording began; the last slices end one sampling period after the last
 * sample. */
#include <stdlib.h>

#include "format.h"
#include "torch_holders.h"

/* The frames from the thread root down to node, root first, into path;
 * their number. */
static uint32_t path_of(const sonde_profile *p, uint32_t node, uint32_t *path, uint32_t cap)
{
    uint32_t n = 0;
    for (uint32_t x = node; x != SONDE_NO_NODE && p->nodes[x].func != SONDE_NO_FUNC && n < cap;
         x = p->nodes[x].parent)
        path[n++] = x;
    for (uint32_t i = 0; i < n / 2; i++) {
        uint32_t t = path[i];
        path[i] = path[n - 1 - i];
        path[n - 1 - i] = t;
    }
    return n;
}

static void put_event(sonde_buf *b, const sonde_profile *p, uint32_t node, char phase,
                      double us, const sonde_thread *t, int *first)
{
    const sonde_func *f = &p->funcs[p->nodes[node].func];
    sonde_buf_puts(b, *first ? "\n " : ",\n ");
    *first = 0;
    sonde_buf_puts(b, "{\"name\": ");
    sonde_buf_json_str(b, sonde_profile_str(p, f->qualname));
    sonde_buf_printf(b, ", \"cat\": \"python\", \"ph\": \"%c\", \"ts\": %.3f, \"pid\": %d, "
                     "\"tid\": %llu", phase, us, p->pid, (unsigned long long)t->native_id);
    if (phase == 'B') {
        sonde_buf_puts(b, ", \"args\": {\"file\": ");
        sonde_buf_json_str(b, sonde_profile_str(p, f->file));
        sonde_buf_printf(b, ", \"line\": %d}", p->nodes[node].line ? p->nodes[node].line : f->line);
    }
    sonde_buf_putc(b, '}');
}

static void put_thread_name(sonde_buf *b, const sonde_profile *p, const sonde_thread *th,
                            int *first)
{
    sonde_buf_puts(b, *first ? "\n " : ",\n ");
    *first = 0;
    sonde_buf_printf(b, "{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": %d, \"tid\": %llu, "
                     "\"args\": {\"name\": ", p->pid, (unsigned long long)th->native_id);
    sonde_buf_json_str(b, sonde_profile_str(p, th->name));
    sonde_buf_puts(b, "}}");
}

static void put_slice(sonde_buf *b, const sonde_profile *p, const sonde_slice *sl)
{
    const sonde_node *n = &p->nodes[sl->node];
    const sonde_func *f = &p->funcs[n->func];
    int torch = f->kind == SONDE_FUNC_TORCH;
    sonde_buf_puts(b, ",\n {\"name\": ");
    sonde_buf_json_str(b, sonde_profile_str(p, f->qualname));
    sonde_buf_printf(b, ", \"cat\": \"%s\", \"ph\": \"X\", \"ts\": %.3f, \"dur\": %.3f, "
                     "\"pid\": %d, \"tid\": %llu", torch ? "torch" : "python",
                     (double)sl->start_ns / 1000.0, (double)(sl->end_ns - sl->start_ns) / 1000.0,
                     p->pid, (unsigned long long)p->threads[sl->thread].native_id);
    if (!torch) {
        sonde_buf_puts(b, ", \"args\": {\"file\": ");
        sonde_buf_json_str(b, sonde_profile_str(p, f->file));
        sonde_buf_printf(b, ", \"line\": %d}", n->line ? n->line : f->line);
    }
    sonde_buf_putc(b, '}');
}

/* A GPU kernel's slice on its stream's track: process "GPU N" (the
 * device's index as its pid, as torch.profiler's traces have it), thread
 * "stream S". */
static void put_kernel(sonde_buf *b, const sonde_profile *p, const sonde_slice *sl)
{
    const sonde_device_track *track = &p->device_tracks[sl->thread & ~SONDE_SLICE_DEVICE];
    sonde_buf_puts(b, ",\n {\"name\": ");
    sonde_buf_json_str(b, sonde_profile_str(p, p->funcs[p->nodes[sl->node].func].qualname));
    sonde_buf_printf(b, ", \"cat\": \"kernel\", \"ph\": \"X\", \"ts\": %.3f, \"dur\": %.3f, "
                     "\"pid\": %lld, \"tid\": %lld}", (double)sl->start_ns / 1000.0,
                     (double)(sl->end_ns - sl->start_ns) / 1000.0, (long long)track->device,
                     (long long)track->stream);
}

/* Track t's stream named, and its device too unless an earlier track
 * (another stream of the same GPU) named it. */
static void put_track_names(sonde_buf *b, const sonde_profile *p, uint32_t t, int *first)
{
    const sonde_device_track *track = &p->device_tracks[t];
    int named = 0;
    for (uint32_t u = 0; u < t && !named; u++)
        named = p->device_tracks[u].device == track->device;
    sonde_buf_puts(b, *first ? "\n " : ",\n ");
    *first = 0;
    if (!named)
        sonde_buf_printf(b, "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": %lld, "
                         "\"args\": {\"name\": \"GPU %lld\"}},\n ", (long long)track->device,
                         (long long)track->device);
    sonde_buf_printf(b, "{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": %lld, "
                     "\"tid\": %lld, \"args\": {\"name\": \"stream %lld\"}}",
                     (long long)track->device, (long long)track->stream,
                     (long long)track->stream);
}

/* The training steps, on their own track. */
static void put_steps(sonde_buf *b, const sonde_profile *p, int *first)
{
    if (p->nsteps == 0)
        return;
    sonde_buf_puts(b, *first ? "\n " : ",\n ");
    *first = 0;
    sonde_buf_printf(b, "{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": %d, \"tid\": 0, "
                     "\"args\": {\"name\": \"steps\"}}", p->pid);
    for (uint32_t k = 0; k < p->nsteps; k++) {
        const sonde_step *st = &p->steps[k];
        sonde_buf_printf(b, ",\n {\"name\": \"ProfilerStep#%u\", \"cat\": \"step\", \"ph\": \"X\", "
                         "\"ts\": %.3f, \"dur\": %.3f, \"pid\": %d, \"tid\": 0, \"args\": "
                         "{\"thread\": %llu}}", st->number, (double)st->start_ns / 1000.0,
                         (double)(st->end_ns - st->start_ns) / 1000.0, p->pid,
                         st->thread < p->nthreads
                             ? (unsigned long long)p->threads[st->thread].native_id : 0ULL);
    }
}

/* A deterministic profile's slices, each thread and stream named first:
 * the Python calls all of them, or (keep not NULL) those keep marks. */
static int write_slices(sonde_buf *b, const sonde_profile *p, const uint8_t *keep)
{
    int first = 1;
    sonde_buf_printf(b, "{\"displayTimeUnit\": \"ms\", \"otherData\": {\"exporter\": \"sonde\", "
                     "\"budget\": %llu, \"events\": %llu, \"dropped\": %llu, "
                     "\"python_calls\": \"%s\"},\n\"traceEvents\": [",
                     (unsigned long long)p->slices_budget, (unsigned long long)p->nslices,
                     (unsigned long long)p->slices_dropped,
                     keep ? "holding an operator or region" : "all");
    for (uint32_t t = 0; t < p->nthreads; t++)
        put_thread_name(b, p, &p->threads[t], &first);
    for (uint32_t t = 0; t < p->ndevice_tracks; t++)
        put_track_names(b, p, t, &first);
    put_steps(b, p, &first);
    for (uint64_t i = 0; i < p->nslices; i++) {
        const sonde_slice *sl = &p->slices[i];
        if (sl->node >= p->nnodes)
            continue;
        if (sl->thread < p->nthreads && (!keep || keep[i]))
            put_slice(b, p, sl);
        else if ((sl->thread & SONDE_SLICE_DEVICE) &&
                 (sl->thread & ~SONDE_SLICE_DEVICE) < p->ndevice_tracks)
            put_kernel(b, p, sl);
    }
    sonde_buf_puts(b, "]}\n");
    return sonde_buf_ok(b) ? 0 : -1;
}

/* Whether p's timeline holds a PyTorch operator or region. */
static int has_torch(const sonde_profile *p)
{
    for (uint64_t i = 0; i < p->nslices; i++)
        if (p->slices[i].thread < p->nthreads && p->slices[i].node < p->nnodes &&
            p->nodes[p->slices[i].node].func < p->nfuncs && sonde_slice_is_torch(p, &p->slices[i]))
            return 1;
    return 0;
}

int sonde_chrome_write(sonde_buf *b, const sonde_profile *p, const sonde_stats *s,
                       const sonde_format_opts *o)
{
    (void)s;
    if (p->slices_budget) {
        if ((o && o->all_calls) || !has_torch(p))
            return write_slices(b, p, NULL);
        sonde_torch_holders h;
        if (sonde_torch_holders_mark(p, &h) < 0) {
            b->oom = 1;
            return -1;
        }
        int rc = write_slices(b, p, h.keep);
        sonde_torch_holders_free(&h);
        return rc;
    }
    uint32_t cap = 4096;
    uint32_t *open_path = malloc(cap * sizeof *open_path), *next_path = malloc(cap * sizeof *next_path);
    if (!open_path || !next_path) {
        free(open_path);
        free(next_path);
        b->oom = 1;
        return -1;
    }
    double period_us = p->sample_rate > 0 ? 1e6 / p->sample_rate : 0;
    int first = 1;
    sonde_buf_puts(b, "{\"displayTimeUnit\": \"ms\", \"otherData\": {\"exporter\": \"sonde\"},\n"
                      "\"traceEvents\": [");
    for (uint32_t t = 0; t < p->nthreads; t++) {
        const sonde_thread *th = &p->threads[t];
        put_thread_name(b, p, th, &first);
        uint32_t depth = 0;
        double last = 0;
        for (uint64_t i = 0; i < p->nevents; i++) {
            const sonde_sample_event *e = &p->events[i];
            if (e->thread != t)
                continue;
            double us = (double)e->t_ns / 1000.0;
            uint32_t n = path_of(p, e->node, next_path, cap);
            uint32_t common = 0;
            while (common < n && common < depth && next_path[common] == open_path[common])
                common++;
            /* A gap of more than two periods (an idle stretch, a missed
             * tick) closes everything at the end of the last sample. */
            double end = us - last > 2 * period_us && depth ? last + period_us : us;
            if (end != us)
                common = 0;
            while (depth > common)
                put_event(b, p, open_path[--depth], 'E', end, th, &first);
            for (; depth < n; depth++) {
                open_path[depth] = next_path[depth];
                put_event(b, p, open_path[depth], 'B', us, th, &first);
            }
            last = us;
        }
        while (depth > 0)
            put_event(b, p, open_path[--depth], 'E', last + period_us, th, &first);
    }
    sonde_buf_puts(b, "]}\n");
    free(open_path);
    free(next_path);
    return sonde_buf_ok(b) ? 0 : -1;
}
