/* short_path.c - file names as py-spy shows them; see short_path.h. */
#include "short_path.h"

#include <ctype.h>
#include <string.h>

/* Past the last "/site-packages/" or "/dist-packages/" in path, or NULL. */
static const char *below_packages(const char *path)
{
    static const char *const folders[] = { "/site-packages/", "/dist-packages/" };
    const char *best = NULL;
    for (size_t i = 0; i < sizeof folders / sizeof folders[0]; i++)
        for (const char *at = strstr(path, folders[i]); at; at = strstr(at + 1, folders[i]))
            if (!best || at + strlen(folders[i]) > best)
                best = at + strlen(folders[i]);
    return best;
}

/* Past the first "/lib/pythonX.Y/" (the standard library) in path, or NULL. */
static const char *below_stdlib(const char *path)
{
    for (const char *at = strstr(path, "/lib/python"); at; at = strstr(at + 1, "/lib/python")) {
        const char *p = at + strlen("/lib/python");
        if (!isdigit((unsigned char)*p))
            continue;
        while (isdigit((unsigned char)*p) || *p == '.')
            p++;
        if (*p == '/')
            return p + 1;
    }
    return NULL;
}

const char *sonde_short_path(const char *path, const char *cwd)
{
    const char *p = below_packages(path);
    if (p && *p)
        return p;
    p = below_stdlib(path);
    if (p && *p)
        return p;
    size_t n = cwd ? strlen(cwd) : 0;
    while (n > 1 && cwd[n - 1] == '/')
        n--;
    if (n > 1 && strncmp(path, cwd, n) == 0 && path[n] == '/' && path[n + 1])
        return path + n + 1;
    return path;
}
