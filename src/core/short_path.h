/* short_path.h - file names as py-spy shows them: a module's path below
 * the site-packages (or dist-packages) folder it was installed in, a
 * standard library module's below lib/pythonX.Y, a file under the current
 * folder relative to it, anything else whole. */
#ifndef SONDE_SHORT_PATH_H
#define SONDE_SHORT_PATH_H

/* The shortened name: always a suffix of path, so nothing is allocated.
 * cwd is the current folder (absolute), or NULL. */
const char *sonde_short_path(const char *path, const char *cwd);

#endif
