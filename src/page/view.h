/* view.h - sonde view's page: one self-contained HTML file (no request of
 * any kind: a Content-Security-Policy forbids them) holding the viewer
 * (src/page/viewer.js and viewer.css) and the profile as JSON.
 *
 * The JSON in the page (#data), by kind:
 * - "profile": {"title", "unit": "seconds", "sampled", "exact_tree",
 *   "about": {"rate": samples per second (0: deterministic), "pid" (0:
 *   unknown), "threads": [name], "run": what the file says of the run,
 *   the object of sonde's JSON "about" (json_about.h)},
 *   "files": [path] (each once), "funcs": [[name, file (its index in
 *   "files"), line, colour]], "tree": [[func, parent, total,
 *   self, x]] (node 0 the root, func -1; parents before children; threads
 *   merged; x and colour from flame_layout.h, as -f flamegraph draws them),
 *   "thread_trees": [{"name", "tree"}] (each thread's own tree, as "tree";
 *   only for a real tree of several threads),
 *   "gpu_tree", "gpu_thread_trees": the same trees weighed by GPU time
 *   (--torch with a GPU: a node's self is its kernels' seconds on the
 *   device, sonde's JSON "torch_device_ns"; only when some was recorded),
 *   "timeline": a sampled profile's samples in time order, for the stack
 *   chart (view_timeline.h; not on a diff page), "heatmap": a sampled
 *   profile's samples by source line and its files' text (view_heatmap.h;
 *   not on a diff page),
 *   "stats": [[func, ncalls, pcalls, tottime, cumtime]],
 *   "edges": [[caller, callee, ncalls, tottime, cumtime]]};
 * - "lines" / "mem": {"title", "doc": the sonde lines / mem document};
 *   a mem page also carries its memory-over-time SVG (mem_plot.h);
 * - "diff": a profile's fields for the newer profile, plus "base" (each
 *   node's total in the older one, matched by call path), "max_delta",
 *   "before_run" (the older file's "run") and "changes": [[function,
 *   before, after]] by change, largest first.
 * Every string is written by sonde_buf_json_str, which escapes '<', '>'
 * and '&': nothing in the data can close its <script> element. */
#ifndef SONDE_VIEW_H
#define SONDE_VIEW_H

#include <stddef.h>

#include "../core/buf.h"
#include "../core/profile.h"
#include "../core/stats.h"
#include "../report/diff.h"
#include "../formats/json_read.h"

/* The page of a profile of calls.  has_tree: p's calling-context tree is
 * real (load.h's sonde_load_has_tree); else (a .prof file) the tree is
 * rebuilt from the callers in s, as snakeviz does.  site_packages: the
 * source heatmap embeds the sources of site-packages files too
 * (view_heatmap.h).  0, or -1 on out of memory. */
int sonde_view_profile_write(sonde_buf *b, const char *title, const sonde_profile *p,
                       const sonde_stats *s, int has_tree, int site_packages);

/* The page of a sonde lines or mem document.  0, or -1 with a message. */
int sonde_view_document_write(sonde_buf *b, const char *title, const sonde_jtree *t, char *err,
                        size_t errlen);

/* One side of a diff: a profile, its stats, whether its tree is real. */
typedef struct sonde_view_side {
    const sonde_profile *p;
    const sonde_stats *s;
    int has_tree;
} sonde_view_side;

/* The page comparing `after` with `before`, with the changes sonde diff
 * computed (diff.h).  0, or -1 on out of memory. */
int sonde_view_diff_write(sonde_buf *b, const char *title, const sonde_view_side *before,
                    const sonde_view_side *after, const sonde_diff *d);

#endif
