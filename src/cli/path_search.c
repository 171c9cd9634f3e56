/* path_search.c - a command's file in the folders of PATH; see
 * path_search.h. */
#include "path_search.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int cli_find_on_path(const char *name, char *out, size_t len)
{
    const char *path = getenv("PATH");
    for (const char *at = path ? path : ""; *at;) {
        size_t n = strcspn(at, ":");
        int w = snprintf(out, len, "%.*s%s%s", (int)n, at, n ? "/" : "", name);
        at += n + (at[n] == ':');
        struct stat st;
        if (w >= 0 && (size_t)w < len && stat(out, &st) == 0 && S_ISREG(st.st_mode) &&
            access(out, X_OK) == 0)
            return 0;
    }
    return -1;
}
