/* cmd_view.c - sonde view: every profile sonde writes, and cProfile's .prof
 * files, as one self-contained HTML page (src/page/view.c; the page's
 * script is src/page/viewer.js), written next to the input, served on
 * 127.0.0.1 or opened in the browser. */
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../formats/load.h"
#include "../page/view.h"
#include "commands.h"
#include "inputs.h"
#include "open_url.h"
#include "options.h"
#include "output.h"
#include "serve.h"

typedef struct view_opts {
    const char *out;
    long port;        /* -1 when not given */
    int serve, open;
    int site_packages; /* the heatmap embeds site-packages' sources too */
    char sibling[PATH_MAX];   /* the page's default name */
} view_opts;

static const cli_opt option_table[] = {
    { .short_name = 'o', .long_name = "output", .arg = "OUT", .type = CLI_STRING,
      .offset = offsetof(view_opts, out),
      .help = "the page (default: FILE with .html for its extension;\n"
              "several files: the first's with -merged.html)" },
    { .long_name = "serve", .type = CLI_FLAG, .offset = offsetof(view_opts, serve), .set = 1,
      .help = "also serve it at http://127.0.0.1:PORT/ until Ctrl-C" },
    { .long_name = "port", .arg = "N", .type = CLI_COUNT, .offset = offsetof(view_opts, port),
      .min = 0, .max = 65535, .what = "is at most 65535",
      .help = "the port to serve on (default: a free one)" },
    { .long_name = "open", .type = CLI_FLAG, .offset = offsetof(view_opts, open), .set = 1,
      .help = "open it in the browser ($BROWSER, else xdg-open)" },
    { .long_name = "site-packages", .type = CLI_FLAG,
      .offset = offsetof(view_opts, site_packages), .set = 1,
      .help = "the source heatmap shows site-packages' files too\n"
              "(their source goes in the page): for a library's\n"
              "command-line tool, whose code is all there" },
    { 0 },
};

static int cmd_main(int argc, char **argv, const sonde_env *env);

const cli_command cmd_view = {
    .name = "view",
    .summary = "any profile as one HTML page: flame graph, sunburst, table (replaces snakeviz)",
    .synopsis = "FILE... [-o OUT.html] [--serve [--port N]] [--open] [--site-packages]",
    .about = "Draws a profile as one self-contained HTML page (no network access: it\n"
             "works from file://): for sonde run and record profiles (.prof or -f json)\n"
             "and cProfile's .prof files, a flame graph, an icicle and a sunburst (click\n"
             "to zoom), a sortable table with callers and callees, search, depth and\n"
             "cutoff; for sonde lines and mem files, each function's source with per-line\n"
             "bars, and mem's memory over time (and for line_profiler's .lprof files).\n"
             "From a .prof file the call tree is\n"
             "rebuilt from its callers, as snakeviz does; sonde's JSON has the exact one.\n"
             "Several files of one kind are summed first, as sonde merge sums them; the\n"
             "page's process selector shows them all or one process's part.",
    .words = CLI_WORDS_ANYWHERE,
    .opts = option_table,
    .run = cmd_main,
};

/* The page of the files into b.  0, or an exit code after printing why. */
static int make_page(const sonde_env *env, const cli_words *files, int site_packages,
                     sonde_buf *b)
{
    cli_inputs in;
    char err[512], title[PATH_MAX + 32];
    cli_inputs_title(title, sizeof title, files->word, files->count);
    int rc = cli_inputs_load(env, "view", files->word, files->count, NULL, &in);
    if (rc == 0 && in.kind != SONDE_LOADED_PROFILE &&
        sonde_view_document_write(b, title, &in.doc, err, sizeof err) < 0)
        rc = cli_fail(SONDE_EXIT_FAILED, "%s", err);
    else if (rc == 0 && in.kind == SONDE_LOADED_PROFILE &&
             sonde_view_profile_write(b, title, &in.p, &in.s, sonde_load_has_tree(&in.p),
                                      site_packages) < 0)
        rc = cli_fail(SONDE_EXIT_FAILED, "out of memory");
    cli_inputs_free(&in);
    return rc;
}

/* The command line into *o and *file, checked, the page's file included.
 * 0, or an exit code. */
static int parse(int argc, char **argv, view_opts *o, cli_words *words, cli_output *out)
{
    int rc = cli_parse(&cmd_view, argc, argv, o, words);
    if (rc != 0)
        return rc;
    if (words->count == 0)
        return cli_usage_error("view", "which profile? give a file sonde or cProfile wrote");
    if (o->port >= 0 && !o->serve)
        return cli_usage_error("view", "--port goes with --serve");
    if (!o->out && (rc = cli_sibling_path(words->word[0], words->count > 1 ? "-merged.html"
                                          : ".html", o->sibling, sizeof o->sibling)) != 0)
        return rc;
    return cli_output_open(out, o->out ? o->out : o->sibling);
}

static int cmd_main(int argc, char **argv, const sonde_env *env)
{
    view_opts o = { .port = -1 };
    cli_words files;
    cli_output out;
    int rc = parse(argc, argv, &o, &files, &out);
    if (rc != 0)
        return cli_exit(rc);
    sonde_buf b;
    sonde_buf_init(&b);
    rc = make_page(env, &files, o.site_packages, &b);
    if (rc == 0 && (rc = cli_output_write(&out, &b)) == 0)
        fprintf(stderr, "sonde: wrote %s\n", out.name);
    if (rc == 0 && o.serve) {
        const char *name = strrchr(out.name, '/');
        rc = serve_page(b.data, b.len, name ? name + 1 : out.name, o.port > 0 ? (int)o.port : 0,
                        o.open);
    } else if (rc == 0 && o.open) {
        char url[PATH_MAX + 16], real[PATH_MAX];
        snprintf(url, sizeof url, "file://%s", realpath(out.path, real) ? real : out.path);
        rc = open_url(url) < 0 ? SONDE_EXIT_FAILED : 0;
    }
    sonde_buf_free(&b);
    return rc;
}
