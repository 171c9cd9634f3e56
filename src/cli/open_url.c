/* open_url.c - the user's browser; see open_url.h. */
#include "open_url.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "launch.h"
#include "options.h"

int open_url(const char *url)
{
    const char *browser = getenv("BROWSER");
    char *argv[] = { (char *)(browser && *browser ? browser : "xdg-open"), (char *)url, NULL };
    pid_t pid = launch_start(argv);
    if (pid < 0) {
        return cli_fail(-1, "cannot start a browser (%s): open %s yourself, or set BROWSER",
                        argv[0], url);
    }
    /* xdg-open returns once the browser is on its way; a browser named by
     * BROWSER may keep running: it is left to run. */
    if (!browser || !*browser)
        waitpid(pid, NULL, 0);
    return 0;
}
