/* torch_ops.h - PyTorch operators joined to the tracer's calls.
 *
 * While sonde runs with torch, the tracer logs its calls as spans
 * (tracer.h, spans_on) and torch.profiler's machinery records operators
 * and record_function regions; when both have stopped, torch_ops_place
 * turns each operator into a node of the tracer's tree, beneath the call
 * that ran it (core/ops.h), on the tracer's clock. */
#ifndef SONDE_TORCH_OPS_H
#define SONDE_TORCH_OPS_H

#include "tracer.h"

/* Starts logging spans; notes the clocks and the calling thread. */
void torch_ops_begin(tracer *t);

/* Span logging on or off between torch_ops_begin and torch_ops_place
 * (run --torch-steps: on only in the steps recorded).  Off: the calls
 * open on every thread are logged as ending now (the operators recorded
 * inside them need them); on again: those of them still open are
 * forgotten, to be logged whole or cut again.  drop: off, forgetting
 * every span logged so far (nothing recorded then is kept). */
void torch_ops_spans(tracer *t, int on, int drop);

/* What torch recorded, as _torch.py's _Operators holds it.  Four lists
 * of one length, an item an operator: the native thread id each ran on,
 * its name (with shapes: then a space and its input shapes, see
 * SONDE_TORCH_SHAPES_LINE), its start and end in CLOCK_REALTIME
 * nanoseconds (torch's _KinetoEvent.start_ns / end_ns); mems and
 * device_mems, such lists or None, each one's net CPU and GPU bytes
 * (--torch-memory: the profile's SONDE_CPU_MEM and SONDE_DEVICE_MEM
 * figures); kernels, a list or None, the GPU kernels, each a tuple (the
 * index of the operator that launched it or -1, name, start, end, device,
 * stream); regions, a list or None, whether each is a record_function
 * region rather than an operator (sonde_func.region); steps, a list or
 * None, the training steps, each a tuple (native thread id, start, end,
 * number) in the operators' clock (sonde_step). */
typedef struct torch_input {
    PyObject *tids, *names, *starts, *ends;
    PyObject *mems, *device_mems;
    PyObject *kernels;
    PyObject *regions, *steps;
} torch_input;

/* Places the operators, and each kernel beneath the operator that
 * launched it (one with none under the thread that began recording).
 * With a budget, the calls, operators and kernels also become the
 * profile's timeline, at most budget slices (core/timeline.h).  Stops
 * logging spans and frees them.  Returns (operators, top-level operators,
 * of which placed beneath a call, spans_full, slices kept, slices
 * dropped), or NULL with an exception. */
PyObject *torch_ops_place(tracer *t, const torch_input *in, int shapes, uint64_t budget);

/* record_function regions as frames of the calling thread's stack, so
 * that the calls made inside a region become its children.  enter: the
 * region opens beneath the innermost open call (record_function's
 * __enter__, which is returning), as if it began with that call; exit:
 * the innermost open region of that name closes, the calls still open
 * above it staying open.  1 when done, 0 when the thread is not recorded
 * (or, on exit, has no such region), -1 on out of memory with an
 * exception. */
int torch_region_enter(tracer *t, PyObject *name);
int torch_region_exit(tracer *t, PyObject *name);

#endif
