/* view_heatmap.h - the source heatmap's data in sonde view's page: how
 * many samples each line of each profiled Python file holds, and the
 * source of the program's own files.
 *
 * A sampled frame's node knows the line it was at (profile.h).  A line's
 * self samples are those whose innermost frame was there; its total
 * samples those with a frame there anywhere on the stack (counted once
 * when recursion puts it on the stack twice).  Writes, after a member of
 * the page's JSON:
 *
 *   ,"heatmap": {"samples" (all of them), "max_bytes", "files": [{"func" (a
 *   function of the file: its index in the page's "funcs" names the file),
 *   "lines": [[line, self, total]] (by line), and "source": [line's text]
 *   (line 1 first), or "left_out": why ("library": a file of the
 *   interpreter's library or (unless asked) site-packages; "no working directory
 *   recorded"; "working directory not found"; "not a .py file"; "outside
 *   the program's folders"; "unreadable"; "too large": over max_bytes;
 *   "page full": the page's sources reached SONDE_VIEW_SOURCES_MAX_BYTES)}]}
 *
 * The page is shared and served, and the profile is untrusted: only the
 * program's own sources go in.  A file is read when the page is written,
 * from the path the profile names (a relative one from the recorded cwd,
 * about.h), only when it names a .py file whose real path (realpath: no
 * ".." or symlink escapes) lies under the real path of the recorded cwd or
 * of the folder of the script the recorded command line ran (its first
 * argument ending in .py, from the cwd); it is opened at that real path
 * without following a link, and must be a regular file of at most
 * max_bytes.  A profile without a cwd (a .prof, another tool's pprof,
 * collapsed stacks) embeds no source. */
#ifndef SONDE_VIEW_HEATMAP_H
#define SONDE_VIEW_HEATMAP_H

#include "../core/buf.h"
#include "../core/profile.h"

#define SONDE_VIEW_SOURCE_MAX_BYTES (1u << 20)
#define SONDE_VIEW_SOURCES_MAX_BYTES (8u << 20)

/* Writes p's "heatmap" member (nothing unless p is sampled and has frames
 * with lines).  site_packages: files of site-packages (or dist-packages)
 * are embedded too, those whose real path is a .py file in such a folder
 * (sonde view --site-packages: a library's command-line tool, whose code
 * is all there); the interpreter's own library stays out.  0, or -1 on
 * out of memory. */
int sonde_view_heatmap_put(sonde_buf *b, const sonde_profile *p, int site_packages);

#endif
