/* cli.h - the sonde command line, shared by build/bin/sonde and by
 * `python3 -m sonde` (through the extension's main()). */
#ifndef SONDE_CLI_H
#define SONDE_CLI_H

typedef struct sonde_env {
    const char *python;       /* interpreter for launched programs (NULL: default) */
    const char *package_dir;  /* folder holding the sonde package, or NULL to find it */
    /* Native frames (--native): the sonde command's (it links libdw);
     * NULL in the extension (python3 -m sonde). */
    const struct sonde_native_ops *native;
} sonde_env;

/* sonde's version (pyproject.toml's). */
const char *sonde_version(void);

/* Runs one sonde command; returns the process exit code. */
int sonde_main(int argc, char **argv, const sonde_env *env);

#endif
