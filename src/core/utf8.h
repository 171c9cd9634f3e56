/* utf8.h - the bytes of a profile's strings, and how they are escaped.
 *
 * A profile's strings are UTF-8, except that a file name may hold bytes
 * of the file system that are not (a script in a folder whose name is
 * not UTF-8: the extension keeps os.fsencode(co_filename)).  Every writer
 * keeps its output well-formed: Python's convention (surrogateescape)
 * names such a byte b as the lone surrogate U+DC00 + b, which marshal
 * writes as UTF-8 ('surrogatepass') and JSON as \udcXX, so that Python
 * gets back the very string the interpreter had; text, XML and DOT show a
 * visible escape or U+FFFD.  The readers turn the surrogates back into
 * the bytes. */
#ifndef SONDE_UTF8_H
#define SONDE_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* Length of the valid UTF-8 sequence at s (1 for ASCII), or 0 when the
 * byte at s does not start one (overlong forms, surrogates and code
 * points past U+10FFFF are not valid).  s is NUL-terminated. */
size_t sonde_utf8_len(const unsigned char *s);

/* Writes code point c (up to U+10FFFF) as UTF-8 into out[0..4); returns
 * how many bytes it took. */
size_t sonde_utf8_encode(uint32_t c, unsigned char out[4]);

/* Rewrites s[0..n) in place, each lone surrogate U+DC80..U+DCFF written
 * as UTF-8 (Python's surrogateescape of a byte that is not UTF-8) back
 * into the byte it escapes; returns the new length (NUL-terminated when
 * room allows: the length never grows). */
size_t sonde_utf8_unescape(char *s, size_t n);

#endif
