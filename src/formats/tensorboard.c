/* tensorboard.c - a PyTorch profiler trace, as torch.profiler's
 * tensorboard_trace_handler writes one (Kineto's Chrome trace JSON), from
 * a run --torch timeline: TensorBoard's PyTorch profiler plugin
 * (torch-tb-profiler) and Perfetto read it.
 *
 * The plugin knows an event by its category: operators are "cpu_op",
 * record_function regions "user_annotation", training steps
 * "user_annotation" named "ProfilerStep#N", GPU kernels "kernel", Python
 * calls "python_function" (with "Python id" and "Python parent id", as
 * torch's with_stack traces have them).  A Python call is written only
 * when it holds an operator or a region (torch_holders.h).
 *
 * A step ends at the end of the optimizer.step() call that ended it,
 * inside torch's own "Optimizer.step#..." region; the plugin nests
 * operators within steps, so a step's end moves past the operators and
 * regions begun within it that are still running then.
 *
 * A window (sonde_format_opts.window: one cycle of --torch-steps) keeps
 * its steps, and the events from its first step's start up to the first
 * later step's start: a Python call that holds one and began earlier
 * stays, whole. */
#include <stdio.h>
#include <stdlib.h>

#include "../core/short_path.h"
#include "format.h"
#include "torch_holders.h"

static void put_head(sonde_buf *b, const char *kind, const char *name, double us,
                     double dur_us, int pid, unsigned long long tid)
{
    sonde_buf_puts(b, ",\n {\"ph\": \"X\", \"cat\": \"");
    sonde_buf_puts(b, kind);
    sonde_buf_puts(b, "\", \"name\": ");
    sonde_buf_json_str(b, name);
    sonde_buf_printf(b, ", \"pid\": %d, \"tid\": %llu, \"ts\": %.3f, \"dur\": %.3f", pid, tid,
                     us, dur_us);
}

static void put_slice(sonde_buf *b, const sonde_profile *p, const sonde_torch_holders *h,
                      uint64_t i,
                      const sonde_format_opts *o)
{
    const sonde_slice *sl = &p->slices[i];
    const sonde_node *n = &p->nodes[sl->node];
    const sonde_func *f = &p->funcs[n->func];
    double us = (double)sl->start_ns / 1000.0, dur = (double)(sl->end_ns - sl->start_ns) / 1000.0;
    unsigned long long tid = (unsigned long long)p->threads[sl->thread].native_id;
    const char *name = sonde_profile_str(p, f->qualname);
    if (f->kind == SONDE_FUNC_TORCH) {
        put_head(b, f->region ? "user_annotation" : "cpu_op", name, us, dur, p->pid, tid);
        sonde_buf_printf(b, ", \"args\": {\"External id\": %llu, \"Ev Idx\": %llu}}",
                         (unsigned long long)i + 1, (unsigned long long)i);
        return;
    }
    sonde_buf puts_name;
    sonde_buf_init(&puts_name);
    if (f->kind == SONDE_FUNC_PYTHON)
        sonde_buf_printf(&puts_name, "%s(%d): %s",
                         sonde_short_path(sonde_profile_str(p, f->file), o ? o->cwd : NULL),
                         n->line ? n->line : f->line, name);
    else
        sonde_buf_puts(&puts_name, name);
    if (!sonde_buf_ok(&puts_name)) {
        b->oom = 1;
        sonde_buf_free(&puts_name);
        return;
    }
    put_head(b, "python_function", puts_name.data, us, dur, p->pid, tid);
    sonde_buf_free(&puts_name);
    sonde_buf_printf(b, ", \"args\": {\"Python id\": %llu, \"Python parent id\": ",
                     (unsigned long long)i + 1);
    if (h->python_parent[i] == UINT32_MAX)
        sonde_buf_puts(b, "null");
    else
        sonde_buf_printf(b, "%llu", (unsigned long long)h->python_parent[i] + 1);
    sonde_buf_printf(b, ", \"Python thread\": %u}}", sl->thread);
}

/* The end of a step moved past the operators and regions of its thread
 * begun within it (from `from` on) and still running at its end.  The
 * thread's slices come in start order: *cursor, the first slice not yet
 * looked at, moves on from step to step of one thread. */
static uint64_t step_end(const sonde_profile *p, const sonde_step *st, uint64_t from,
                         uint64_t *cursor)
{
    uint64_t end = st->end_ns;
    for (; *cursor < p->nslices; ++*cursor) {
        const sonde_slice *s = &p->slices[*cursor];
        if (!sonde_slice_on_thread(p, s, st->thread))
            continue;
        if (s->start_ns >= st->end_ns)
            break;
        if (sonde_slice_is_torch(p, s) && s->start_ns >= from && s->end_ns > end)
            end = s->end_ns;
    }
    return end;
}

/* 1 when the options keep step st. */
static int step_kept(const sonde_step *st, const sonde_format_opts *o)
{
    return !o->window || (st->number >= o->window_first && st->number <= o->window_last);
}

/* The time the window's events lie in: [*from, *to), from its first
 * step's start to the start of the first step after it (else no end). */
static void window_span(const sonde_profile *p, const sonde_format_opts *o, uint64_t *from,
                        uint64_t *to)
{
    *from = o->window ? UINT64_MAX : 0;
    *to = UINT64_MAX;
    for (uint32_t k = 0; o->window && k < p->nsteps; k++) {
        const sonde_step *st = &p->steps[k];
        if (step_kept(st, o) && st->start_ns < *from)
            *from = st->start_ns;
        else if (st->number > o->window_last && st->start_ns < *to)
            *to = st->start_ns;
    }
}

static void put_steps(sonde_buf *b, const sonde_profile *p, const sonde_format_opts *o)
{
    uint64_t last_end = 0, cursor = 0;
    uint32_t last_thread = UINT32_MAX;
    for (uint32_t k = 0; k < p->nsteps; k++) {
        const sonde_step *st = &p->steps[k];
        if (st->thread >= p->nthreads || !step_kept(st, o))
            continue;
        if (st->thread != last_thread)
            cursor = last_end = 0;
        uint64_t start = last_end > st->start_ns ? last_end : st->start_ns;
        uint64_t end = step_end(p, st, start, &cursor);
        if (end < start)
            end = start;
        char name[32];
        snprintf(name, sizeof name, "ProfilerStep#%u", st->number);
        /* A nanosecond short: the next step starts where this one ends,
         * and the plugin, adding microseconds in floating point, would
         * find the two overlapping by a rounding error. */
        put_head(b, "user_annotation", name, (double)start / 1000.0,
                 (double)(end - start - (end > start)) / 1000.0, p->pid,
                 (unsigned long long)p->threads[st->thread].native_id);
        sonde_buf_puts(b, "}");
        last_end = end;
        last_thread = st->thread;
    }
}

static void put_kernel(sonde_buf *b, const sonde_profile *p, const sonde_slice *sl)
{
    const sonde_device_track *track = &p->device_tracks[sl->thread & ~SONDE_SLICE_DEVICE];
    sonde_buf_puts(b, ",\n {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": ");
    sonde_buf_json_str(b, sonde_profile_str(p, p->funcs[p->nodes[sl->node].func].qualname));
    sonde_buf_printf(b, ", \"pid\": %lld, \"tid\": %lld, \"ts\": %.3f, \"dur\": %.3f, "
                     "\"args\": {\"device\": %lld, \"stream\": %lld}}",
                     (long long)track->device, (long long)track->stream,
                     (double)sl->start_ns / 1000.0, (double)(sl->end_ns - sl->start_ns) / 1000.0,
                     (long long)track->device, (long long)track->stream);
}

static void put_names(sonde_buf *b, const sonde_profile *p)
{
    sonde_buf_printf(b, "\n {\"ph\": \"M\", \"name\": \"process_name\", \"pid\": %d, \"tid\": 0, "
                     "\"args\": {\"name\": \"python\"}},\n {\"ph\": \"M\", \"name\": "
                     "\"process_labels\", \"pid\": %d, \"tid\": 0, \"args\": {\"labels\": "
                     "\"CPU\"}}", p->pid, p->pid);
    for (uint32_t t = 0; t < p->nthreads; t++) {
        const sonde_thread *th = &p->threads[t];
        sonde_buf_printf(b, ",\n {\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": %d, "
                         "\"tid\": %llu, \"args\": {\"name\": ", p->pid,
                         (unsigned long long)th->native_id);
        sonde_buf_json_str(b, sonde_profile_str(p, th->name));
        sonde_buf_puts(b, "}}");
    }
    for (uint32_t t = 0; t < p->ndevice_tracks; t++)
        sonde_buf_printf(b, ",\n {\"ph\": \"M\", \"name\": \"process_name\", \"pid\": %lld, "
                         "\"tid\": 0, \"args\": {\"name\": \"GPU %lld\"}}",
                         (long long)p->device_tracks[t].device,
                         (long long)p->device_tracks[t].device);
}

int sonde_tensorboard_write(sonde_buf *b, const sonde_profile *p, const sonde_stats *s,
                            const sonde_format_opts *o)
{
    (void)s;
    o = sonde_format_opts_or_default(o);
    uint64_t from, to;
    window_span(p, o, &from, &to);
    sonde_torch_holders h;
    if (sonde_torch_holders_mark(p, &h) < 0) {
        b->oom = 1;
        return -1;
    }
    sonde_buf_printf(b, "{\"schemaVersion\": 1, \"deviceProperties\": [], "
                     "\"displayTimeUnit\": \"ms\", \"otherData\": {\"exporter\": \"sonde\", "
                     "\"budget\": %llu, \"events\": %llu, \"dropped\": %llu},\n"
                     "\"traceEvents\": [", (unsigned long long)p->slices_budget,
                     (unsigned long long)p->nslices, (unsigned long long)p->slices_dropped);
    put_names(b, p);
    put_steps(b, p, o);
    for (uint64_t i = 0; i < p->nslices && sonde_buf_ok(b); i++) {
        const sonde_slice *sl = &p->slices[i];
        if (sl->node >= p->nnodes || sl->start_ns >= to || sl->end_ns <= from)
            continue;
        if (sl->thread < p->nthreads && h.keep[i])
            put_slice(b, p, &h, i, o);
        else if ((sl->thread & SONDE_SLICE_DEVICE) &&
                 (sl->thread & ~SONDE_SLICE_DEVICE) < p->ndevice_tracks)
            put_kernel(b, p, sl);
    }
    sonde_buf_puts(b, "]}\n");
    sonde_torch_holders_free(&h);
    return sonde_buf_ok(b) ? 0 : -1;
}
