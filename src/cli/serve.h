/* serve.h - serving one page on 127.0.0.1 (sonde view --serve): never on
 * other interfaces, only GET and HEAD, the page at / and at its name, only
 * to requests whose Host names the loopback and the port. */
#ifndef SONDE_SERVE_H
#define SONDE_SERVE_H

#include <stddef.h>

/* Serves page (len bytes of HTML) until Ctrl-C; port 0 picks a free one.
 * Prints the address, and opens it in a browser when `open` is set.
 * 0 after Ctrl-C, or an exit code after printing why it could not. */
int serve_page(const char *page, size_t len, const char *name, int port, int open);

#endif
