/* path_search.h - finding a command's file in the folders of PATH, as
 * exec does. */
#ifndef SONDE_PATH_SEARCH_H
#define SONDE_PATH_SEARCH_H

#include <stddef.h>

/* The file exec would run for a command name without '/': the first
 * executable regular file of that name in a folder of PATH (an empty entry
 * is the current folder), written to out.  0, or -1 when there is none. */
int cli_find_on_path(const char *name, char *out, size_t len);

#endif
