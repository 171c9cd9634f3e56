/* cmd_view.c - sonde view: every profile sonde writes, and cProfile's .prof
 * files, as one self-contained HTML page (src/page/view.c; the page's
 * script is src/page/viewer.js), written next to the input, served on
 * 127.0.0.1 or opened in the browser. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../formats/load.h"
#include "../page/view.h"
#include "commands.h"
#include "open_url.h"
#include "options.h"
#include "serve.h"

static const char usage[] =
    "usage: sonde view FILE [-o OUT.html] [--serve [--port N]] [--open]\n"
    "\n"
    "Draws a profile as one self-contained HTML page (no network access: it\n"
    "works from file://): for sonde run and record profiles (.prof or -f json)\n"
    "and cProfile's .prof files, a flame graph, an icicle and a sunburst (click\n"
    "to zoom), a sortable table with callers and callees, search, depth and\n"
    "cutoff; for sonde lines and mem files, each function's source with per-line\n"
    "bars, and mem's memory over time.  From a .prof file the call tree is\n"
    "rebuilt from its callers, as snakeviz does; sonde's JSON has the exact one.\n"
    "\n"
    "  -o, --output OUT   the page (default: FILE with .html for its extension)\n"
    "      --serve        also serve it at http://127.0.0.1:PORT/ until Ctrl-C\n"
    "      --port N       the port to serve on (default: a free one)\n"
    "      --open         open it in the browser ($BROWSER, else xdg-open)\n";

/* The page for file into b.  0, or -1 with a message. */
static int make_page(const char *file, sonde_buf *b, char *err, size_t errlen)
{
    sonde_profile p;
    sonde_stats s;
    sonde_jtree doc;
    enum sonde_load_kind kind;
    if (sonde_profile_init(&p) < 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    sonde_stats_init(&s);
    int rc = sonde_load_any(file, &p, &s, &doc, &kind, err, errlen);
    if (rc == 0 && kind != SONDE_LOADED_PROFILE) {
        rc = sonde_view_document_write(b, file, &doc, err, errlen);
        sonde_jtree_free(&doc);
    } else if (rc == 0 && sonde_view_profile_write(b, file, &p, &s, sonde_load_has_tree(&p)) < 0) {
        snprintf(err, errlen, "out of memory");
        rc = -1;
    }
    sonde_stats_free(&s);
    sonde_profile_free(&p);
    return rc;
}

int cmd_view(int argc, char **argv, const sonde_env *env)
{
    (void)env;
    const char *file = NULL, *out = NULL, *port_text = NULL;
    int serve = 0, open = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int r;
        if (cli_flag(a, "-h", "--help")) {
            fputs(usage, stdout);
            return 0;
        }
        if (cli_flag(a, NULL, "--serve") || cli_flag(a, NULL, "--open")) {
            *(strcmp(a, "--serve") == 0 ? &serve : &open) = 1;
            continue;
        }
        if ((r = cli_option(argc, argv, &i, "-o", "--output", &out)) ||
            (r = cli_option(argc, argv, &i, NULL, "--port", &port_text))) {
            if (r < 0)
                return SONDE_EXIT_USAGE;
            continue;
        }
        if ((r = cli_one_file("view", a, &file)) != 0)
            return r;
    }
    if (!file)
        return cli_usage_error("view", "which profile? give a file sonde or cProfile wrote");
    long port = 0;
    if (port_text && (cli_count("view", "--port", port_text, &port) < 0 || port > 65535))
        return port > 65535 ? cli_usage_error("view", "--port is at most 65535") : SONDE_EXIT_USAGE;
    if (port_text && !serve)
        return cli_usage_error("view", "--port goes with --serve");
    char path[PATH_MAX], err[512];
    int rc;
    if (!out && (rc = cli_sibling_path(file, ".html", path, sizeof path)) != 0)
        return rc;
    out = out ? out : path;
    sonde_buf b;
    sonde_buf_init(&b);
    if (make_page(file, &b, err, sizeof err) < 0)
        rc = cli_fail(SONDE_EXIT_FAILED, "%s", err);
    else if ((rc = cli_write(&b, out)) == 0)
        fprintf(stderr, "sonde: wrote %s\n", out);
    if (rc == 0 && serve) {
        const char *name = strrchr(out, '/');
        rc = serve_page(b.data, b.len, name ? name + 1 : out, (int)port, open);
    } else if (rc == 0 && open) {
        char url[PATH_MAX + 16], real[PATH_MAX];
        snprintf(url, sizeof url, "file://%s", realpath(out, real) ? real : out);
        rc = open_url(url) < 0 ? SONDE_EXIT_FAILED : 0;
    }
    sonde_buf_free(&b);
    return rc;
}
