/* doc.h - the keys of sonde's JSON documents, defined once: the envelope
 * every document has ({"sonde": 1, "mode": ...}) and every member of the
 * lines and mem documents (what sonde lines -o and sonde mem -o write,
 * docs/formats.md).  Their writers (lines_doc.c, mem_doc.c) and their
 * readers (the tables, the plot, the page, the loader) name members only
 * through these (the page's script, src/page/viewer.js, spells them again). */
#ifndef SONDE_DOC_H
#define SONDE_DOC_H

#include "../core/buf.h"

/* The envelope. */
#define DOC_SONDE "sonde"                /* the format's version: 1 */
#define DOC_MODE "mode"                  /* one of: */
#define DOC_MODE_RUN "run"               /*   sonde run's profile (json.c) */
#define DOC_MODE_LINES "lines"           /*   lines_doc.h */
#define DOC_MODE_MEM "mem"               /*   mem_doc.h */

/* What was profiled (every mode; json_about.h writes and reads it): an
 * object, each member present only when known. */
#define DOC_ABOUT "about"                /* {argv, executable, ...} */
#define DOC_ARGV "argv"                  /* [str]: the command line as run */
#define DOC_EXECUTABLE "executable"      /* str: the interpreter's path */
#define DOC_PYTHON_VERSION "python_version" /* str: its sys.version */
#define DOC_START "start"                /* str: when it started, ISO 8601 UTC */
#define DOC_WALL_S "wall_s"              /* float: seconds, start to end (record: sampled) */
#define DOC_CPU_S "cpu_s"                /* float: CPU seconds, user + system */
#define DOC_PROCESSES "processes"        /* int: processes sampled */
#define DOC_VERDICT "verdict"            /* str: sonde run's resource verdict */
#define DOC_PID "pid"                    /* int: the profiled process */
#define DOC_CWD "cwd"                    /* str: its working directory as it started */

/* A function, in both: its lines from the first to the last. */
#define DOC_FUNCTIONS "functions"        /* [function] */
#define DOC_FILE "file"                  /* str */
#define DOC_NAME "name"                  /* str: the qualified name */
#define DOC_FIRST_LINE "first_line"      /* int */
#define DOC_LINES "lines"                /* [line] */
#define DOC_LINE "line"                  /* int: a line's number */
#define DOC_HITS "hits"                  /* int (mem: null without line events) */
#define DOC_ITERATIONS "iterations"      /* lines: int, a loop's passes on the line
                                            (absent in older documents: 0) */
#define DOC_SOURCE "source"              /* str: the line's text */

/* lines: a function's time, a line's, and with --bytecode each
 * instruction's. */
#define DOC_TOTAL_NS "total_ns"          /* int: its lines' time added up */
#define DOC_TIME_NS "time_ns"            /* int */
#define DOC_INSTRUCTIONS "instructions"  /* [instruction] */
#define DOC_OFFSET "offset"              /* int: in bytes, as dis shows it */
#define DOC_OPNAME "opname"              /* str */
#define DOC_ARG "arg"                    /* str: dis's argrepr */

/* mem: the settings and totals at the top. */
#define DOC_SAMPLE_BYTES "sample_bytes"  /* int: 0 = every block followed */
#define DOC_NATIVE "native"              /* bool: C allocations counted */
#define DOC_LINE_EVENTS "line_events"    /* bool: --lines */
#define DOC_INTERVAL_MS "interval_ms"    /* float: the timeline's period */
#define DOC_HEAP_PEAK_BYTES "heap_peak_bytes"
#define DOC_RSS_HIGH_WATER_BYTES "rss_high_water_bytes"
#define DOC_UNTRACKED_BYTES "untracked_bytes"
/* mem: a line's figures (also the top's reserved_bytes, a leak's, the
 * timeline's rss_bytes and reserved_bytes: all ints). */
#define DOC_ALLOC_BYTES "alloc_bytes"
#define DOC_FREED_BYTES "freed_bytes"
#define DOC_NET_BYTES "net_bytes"
#define DOC_RESERVED_BYTES "reserved_bytes"
#define DOC_PEAK_HEAP_BYTES "peak_heap_bytes"
#define DOC_RSS_BYTES "rss_bytes"
#define DOC_RSS_INCREMENT_BYTES "rss_increment_bytes"
/* mem: the leaks, each an allocating stack of frames (file, name, line,
 * source), outermost first. */
#define DOC_LEAKS "leaks"                /* [leak] */
#define DOC_BYTES "bytes"
#define DOC_NATIVE_BYTES "native_bytes"
#define DOC_STACK "stack"                /* [frame] */
#define DOC_OBJECTS "objects"            /* int: the allocations a leak's bytes stand for */
/* mem: what each allocating stack allocated in all (bytes, objects,
 * stack), most bytes first. */
#define DOC_ALLOCATIONS "allocations"    /* [allocation] */
/* mem: the timeline, arrays of one length in time order, and the spans
 * in which profiled functions ran (name, start_ns, end_ns). */
#define DOC_TIMELINE "timeline"          /* {t_ns, rss_bytes, heap_bytes, reserved_bytes, spans} */
#define DOC_T_NS "t_ns"                  /* [int]: since the start */
#define DOC_HEAP_BYTES "heap_bytes"      /* [int] */
#define DOC_SPANS "spans"                /* [span] */
#define DOC_START_NS "start_ns"
#define DOC_END_NS "end_ns"

/* `"key": ` for a writer. */
#define DOC_KEY(k) "\"" k "\": "

/* Opens a document of this mode: {"sonde": 1, "mode": "<mode>"; the
 * writer adds its members, each after ", ", and the closing brace. */
void sonde_doc_open(sonde_buf *b, const char *mode);

/* The length of the envelope sonde_doc_open wrote at the start of text
 * (len bytes), or 0 when text does not start with one: where a member
 * can be inserted into a document already written. */
size_t sonde_doc_envelope_len(const char *text, size_t len);

#endif
