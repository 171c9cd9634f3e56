/* collapsed_frame.h - one frame of collapsed stacks, in every dialect sonde reads.
 *
 * A line of collapsed stacks is "FRAME;FRAME;... COUNT", outermost frame
 * first.  Tools write their frames differently, and one file may mix
 * them; each frame is read by the first of these rules that fits it:
 *
 *   1. "NAME (FILE:LINE)" -- sonde's -f collapsed, py-spy's raw output.
 *      The file is the parenthesised group at the frame's end (its
 *      parentheses balanced, so "process 12 (cmd) (~:0)" names the
 *      label "process 12 (cmd)" in file "~"), and LINE the digits after
 *      the group's last ':'.
 *   2. "FILE:FUNC:LINE" -- Python 3.15's profiling.sampling --collapsed,
 *      austin's: LINE the digits after the last ':', FUNC the text
 *      between it and the ':' before (names hold no ':'), FILE the rest
 *      (which may hold ':').
 *   3. anything else -- a name only: Brendan Gregg's stackcollapse
 *      ("main", "[unknown]"), Python 3.15's frames of no file ("<GC>"),
 *      py-spy's frames written without a line ("thread (0x7F12)",
 *      "func (file.py)": the whole text is the name).  Such a frame is a
 *      C function, file "~" and line 0, as cProfile names them.
 *
 * LINE is an optional '-' and 1 to 10 digits within 32 bits; a frame
 * whose would-be line is not one falls to the next rule.  Names and
 * files are unescaped as sonde's writer escapes them: "\xNN" (two hex
 * digits) of a control byte (but NUL), 0x7f or a byte of 0x80 and more
 * is that byte; any other "\x" stays as it is; a lone surrogate
 * U+DC80..U+DCFF in UTF-8 (Python's surrogateescape, which 3.15 writes
 * so) is the byte it escapes.  A ';' the writer turned into ':' stays.
 *
 * The first frames of a line may name its thread instead:
 *   "tid:N" (Python 3.15: a thread id), "thread (0xHEX)" (py-spy
 *   --threads), "P<pid>;T<thread>" (austin: a process and a thread).
 * Lines without one belong to one thread, "all threads".  sonde's own
 * "process 12 (cmd)" and "thread NAME" label frames stay frames (rule 1),
 * as sonde wrote them. */
#ifndef SONDE_COLLAPSED_FRAME_H
#define SONDE_COLLAPSED_FRAME_H

#include <stddef.h>
#include <stdint.h>

/* A frame split by the rules above; the pointers are into its text. */
typedef struct sonde_cframe {
    const char *name;
    size_t name_len;      /* at least 1 */
    const char *file;     /* "~" for a frame of a name only */
    size_t file_len;
    int32_t line;         /* 0 when the frame has none */
} sonde_cframe;

/* Splits the frame text s[0..n), n >= 1, by the rules above.  Never fails. */
void sonde_cframe_parse(const char *s, size_t n, sonde_cframe *out);

/* The thread a stack's first frames name. */
typedef struct sonde_cthread {
    size_t len;           /* the bytes of the stack those frames take (no ';' after) */
    size_t frames;        /* how many frames: 0 (no thread named), 1 or 2 */
    uint64_t ident;       /* py-spy's thread address, else 0 */
    uint64_t native_id;   /* Python 3.15's thread id, else 0 */
    char name[160];       /* "thread 8880", "process 12 thread 0:4711", ... */
} sonde_cthread;

/* Reads the thread that the stack text s[0..n) names at its start into
 * *t (t->frames 0 when it names none). */
void sonde_cframe_thread(const char *s, size_t n, sonde_cthread *t);

/* Unescapes s[0..n) into out (room for n + 1 bytes) as described above,
 * NUL-terminated; returns the new length (never more than n). */
size_t sonde_cframe_unescape(const char *s, size_t n, char *out);

#endif
