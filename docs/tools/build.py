"""build.py - the documentation site and the man pages, from docs/ and from
the command's own option tables.

Each command declares its options once, in the table of src/cli/cmd_NAME.c;
the command prints them as `sonde NAME --help`.  This script reads that help
(the tables' one rendering: usage, what the command does, each option and
its text) and writes it twice, never by hand:

- into the site's source: docs/ is copied to OUT/src (less docs/tools/), and
  each command's page, docs/commands/NAME.md, gets its option reference
  where it holds the line `<!-- sonde-options -->` (at its end when it has
  none; a command without a page gets a page of its reference alone, and a
  place in the nav), and its usage where it holds `<!-- sonde-usage -->`;
- as man pages: MAN/sonde.1 (the commands) and MAN/sonde-NAME.1 each.

The pictures the pages show are what `make demo` wrote (build/demo): every
`demo/FILE` a page links to is copied from there into the site's source;
one the demo did not make (no Graphviz, no numpy on this machine) is
replaced by a picture saying so, and named on stderr.

Then, unless --man-only or --stage-only, it writes OUT/mkdocs.yml (mkdocs.yml with the nav
completed and the folders set) and runs `mkdocs build --strict` on it: a
warning (a broken link or anchor, a page missing from the nav) fails.

    python docs/tools/build.py --sonde build/bin/sonde --out build/docs \
        --man build/man --demo build/demo [--man-only | --stage-only]
"""

import argparse
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MARKER = "<!-- sonde-options -->"
USAGE = "<!-- sonde-usage -->"
# An option's first line: "  -o, --output FILE  help" or "      --idle  help".
OPTION_LINE = re.compile(r"^(?:  -[^-\s]|      --\S)")


class Help:
    """One command's --help, read into its parts."""

    def __init__(self, name, summary, text):
        self.name, self.summary = name, summary
        lines = text.rstrip("\n").split("\n")
        if not lines or not lines[0].startswith("usage: sonde %s" % name):
            raise SystemExit("docs: 'sonde %s --help' does not start with its usage" % name)
        indent = len("usage: sonde %s " % name)
        usage = [lines[0][len("usage: "):]]
        i = 1
        while i < len(lines) and lines[i].strip():
            usage.append(" " * len("sonde %s " % name) + lines[i][indent:])
            i += 1
        self.usage = usage
        # the options: from the first option line after the last blank line
        rest = lines[i:]
        last_blank = max(k for k, line in enumerate(rest) if not line.strip())
        self.about = "\n".join(rest[:last_blank]).strip("\n")
        self.options = []  # (label, [help lines])
        for line in rest[last_blank + 1:]:
            if OPTION_LINE.match(line):
                label, _, text = line.strip().partition("  ")
                self.options.append((label.strip(), [text.strip()] if text.strip() else []))
            elif self.options:
                self.options[-1][1].append(line.strip())
            else:
                raise SystemExit("docs: 'sonde %s --help': an option block that does not "
                                 "start with an option: %r" % (name, line))
        if not self.options:
            raise SystemExit("docs: 'sonde %s --help' lists no option" % name)


def run_help(sonde, args):
    try:
        proc = subprocess.run([sonde] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True)
    except OSError as e:
        raise SystemExit("docs: cannot run %s: %s (make builds it)" % (sonde, e.strerror))
    if proc.returncode != 0:
        raise SystemExit("docs: '%s %s' failed: %s" % (sonde, " ".join(args), proc.stderr.strip()))
    return proc.stdout


def commands(sonde):
    """[(name, summary)] in the order `sonde --help` lists them, and that help."""
    text = run_help(sonde, ["--help"])
    block = text.split("\ncommands:\n", 1)
    if len(block) != 2:
        raise SystemExit("docs: 'sonde --help' has no 'commands:' list")
    found = []
    for line in block[1].split("\n"):
        m = re.match(r"^  (\w+) +(.*)$", line)
        if not m:
            break
        found.append((m.group(1), m.group(2)))
    return found, text


# ---- Markdown ----

def md_escape(text):
    return text.replace("<", "&lt;").replace("*", "\\*").replace("_", "\\_")


def md_code(text):
    return "`%s`" % text if "`" not in text else "`` %s ``" % text


def options_markdown(h, with_usage=True):
    out = ["## Options", "",
           "Generated%s from the option table of `src/cli/cmd_%s.c`, as `sonde %s --help` "
           "prints it." % ("" if with_usage else ", with the usage at the top of this page",
                           h.name, h.name), ""]
    if with_usage:
        out += ["    " + line for line in h.usage] + [""]
    for label, text in h.options:
        out += [md_code(label), ":   " + md_escape(" ".join(text)), ""]
    out += ["`-h`, `--help` prints this reference; `man sonde-%s` shows it as a man page "
            "(`make install` installs it)." % h.name]
    return "\n".join(out) + "\n"


def write_page(src, h):
    """The command's page with its reference; True when the page is new."""
    path = os.path.join(src, "commands", h.name + ".md")
    if os.path.exists(path):
        with open(path) as f:
            page = f.read()
        ref = options_markdown(h, with_usage=USAGE not in page)
        page = page.replace(USAGE, "\n".join("    " + line for line in h.usage))
        page = page.replace(MARKER, ref.rstrip("\n")) if MARKER in page else \
            page.rstrip("\n") + "\n\n" + ref
        new = False
    else:
        ref = options_markdown(h)
        page = "# sonde %s\n\n%s.\n\n" % (h.name, h.summary[0].upper() + h.summary[1:]) + \
            "(This page is the command's reference alone: its story goes in " \
            "`docs/commands/%s.md`, with the line `%s` where this reference goes.)\n\n" % (
                h.name, MARKER.replace("<", "&lt;")) + \
            "\n".join("    " + line for line in h.usage) + "\n\n" + h.about + "\n\n" + ref
        new = True
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(page)
    return new


# ---- man pages ----

def roff(text):
    """Text made safe for roff: backslashes, dashes, a leading dot or quote."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return "\n".join("\\&" + line if line.startswith((".", "'")) else line
                     for line in text.split("\n"))


def man_header(title, summary):
    return ['.TH %s 1 "" "sonde" "sonde manual"' % title.upper(), ".SH NAME",
            "%s \\- %s" % (roff(title), roff(summary))]


def man_page(h, others):
    out = man_header("sonde-" + h.name, h.summary)
    out += [".SH SYNOPSIS", ".nf"] + [roff(line) for line in h.usage] + [".fi"]
    out += [".SH DESCRIPTION"]
    for para in re.split(r"\n\s*\n", h.about):
        out += [".PP", roff(" ".join(line.strip() for line in para.split("\n")))]
    out += [".SH OPTIONS"]
    for label, text in h.options:
        words = label.split(" ")
        named = max(k for k, word in enumerate(words) if word.startswith("-")) + 1
        names, arg = " ".join(words[:named]), " ".join(words[named:])
        out += [".TP", "\\fB%s\\fR%s" % (roff(names), " \\fI%s\\fR" % roff(arg) if arg else ""),
                roff(" ".join(text))]
    out += [".TP", "\\fB\\-h\\fR, \\fB\\-\\-help\\fR", "print this help and exit"]
    out += [".SH EXIT STATUS",
            "The profiled program's own exit status is passed through; sonde's own errors "
            "exit 2 (bad usage) or 1 (could not profile), with one line on standard error.",
            ".SH SEE ALSO",
            ", ".join("\\fBsonde\\-%s\\fR(1)" % n for n in others if n != h.name) +
            ", \\fBsonde\\fR(1)"]
    return "\n".join(out) + "\n"


def man_index(cmds, top_help):
    out = man_header("sonde", "a profiler for Python programs, its engine in C")
    out += [".SH SYNOPSIS", ".B sonde", "\\fICOMMAND\\fR [\\fIOPTIONS\\fR] ...",
            ".SH DESCRIPTION", roff(top_help.split("\n\n")[1].strip()), ".SH COMMANDS"]
    for name, summary in cmds:
        out += [".TP", "\\fBsonde %s\\fR" % name, roff(summary) + " (\\fBsonde\\-%s\\fR(1))" % name]
    out += [".SH SEE ALSO", ", ".join("\\fBsonde\\-%s\\fR(1)" % n for n, _ in cmds)]
    return "\n".join(out) + "\n"


# ---- the site ----

DEMO_LINK = re.compile(r"""(?:\]\(|src=["'])(?:\.\./)*demo/([\w.-]+)""")


def copy_pictures(src, demo):
    """Every demo/FILE the pages name, from make demo's output; the missing
    ones as a picture saying so."""
    wanted = set()
    for folder, _, files in os.walk(src):
        for name in files:
            if name.endswith(".md"):
                with open(os.path.join(folder, name)) as f:
                    wanted.update(DEMO_LINK.findall(f.read()))
    os.makedirs(os.path.join(src, "demo"), exist_ok=True)
    for name in sorted(wanted):
        have = os.path.join(demo, name)
        to = os.path.join(src, "demo", name)
        if os.path.isfile(have):
            shutil.copyfile(have, to)
            continue
        print("docs: %s was not made by make demo here (see its output for why): the page "
              "shows a note in its place" % have, file=sys.stderr)
        note = "%s: made by make demo where its tools are installed" % name
        if name.endswith(".svg"):
            body = ('<svg xmlns="http://www.w3.org/2000/svg" width="640" height="40">'
                    '<text x="10" y="25" font-family="sans-serif" font-size="14">%s</text></svg>\n'
                    % note)
        else:
            body = "<!doctype html><title>%s</title><p>%s</p>\n" % (name, note)
        with open(to, "w") as f:
            f.write(body)


def write_config(base, out, src, site, new_pages):
    """OUT/mkdocs.yml: the repository's, with its folders set to the staged
    ones and a nav entry for each command page it did not list."""
    import yaml  # mkdocs' own dependency: in the docs venv

    with open(base) as f:
        config = yaml.safe_load(f)
    config["docs_dir"] = os.path.abspath(src)
    config["site_dir"] = os.path.abspath(site)
    config.pop("exclude_docs", None)
    listed = set()

    def walk(items):
        for item in items:
            for value in item.values() if isinstance(item, dict) else [item]:
                if isinstance(value, list):
                    walk(value)
                else:
                    listed.add(value)
    walk(config["nav"])
    section = next(item for item in config["nav"] if isinstance(item, dict) and "Commands" in item)
    for page in new_pages:
        if page not in listed:
            section["Commands"].append(page)
    path = os.path.join(out, "mkdocs.yml")
    with open(path, "w") as f:
        yaml.safe_dump(config, f, sort_keys=False)
    return path


def markdown_left(site):
    """[(page, line)]: the lines of the built pages, outside code blocks, that
    still start as Markdown's lists and tables do (Python-Markdown, unlike
    GitHub, wants a blank line before a list and 4 spaces of indent inside
    an item: a page written otherwise shows its marks as text)."""
    found = []
    for folder, _, files in os.walk(site):
        for name in files:
            if not name.endswith(".html") or name == "404.html":
                continue
            with open(os.path.join(folder, name)) as f:
                html = re.sub(r"<pre.*?</pre>", "", f.read(), flags=re.S)
            for line in html.split("\n"):
                if re.match(r"^\s*(?:- |\| |\d+\. )\S", line):
                    found.append((os.path.relpath(os.path.join(folder, name), site), line.strip()))
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sonde", required=True)
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "docs"))
    ap.add_argument("--man", default=os.path.join(ROOT, "build", "man"))
    ap.add_argument("--demo", default=os.path.join(ROOT, "build", "demo"))
    ap.add_argument("--docs", default=os.path.join(ROOT, "docs"), help="the pages' folder")
    ap.add_argument("--config", default=os.path.join(ROOT, "mkdocs.yml"))
    ap.add_argument("--man-only", action="store_true", help="the man pages alone")
    ap.add_argument("--stage-only", action="store_true",
                    help="the man pages and the site's source (OUT/src), no mkdocs")
    args = ap.parse_args()

    cmds, top_help = commands(args.sonde)
    helps = [Help(name, summary, run_help(args.sonde, [name, "--help"])) for name, summary in cmds]
    names = [name for name, _ in cmds]

    os.makedirs(args.man, exist_ok=True)
    for old in os.listdir(args.man):
        if old.endswith(".1"):
            os.remove(os.path.join(args.man, old))
    with open(os.path.join(args.man, "sonde.1"), "w") as f:
        f.write(man_index(cmds, top_help))
    for h in helps:
        with open(os.path.join(args.man, "sonde-%s.1" % h.name), "w") as f:
            f.write(man_page(h, names))
    if args.man_only:
        return 0

    src, site = os.path.join(args.out, "src"), os.path.join(args.out, "site")
    shutil.rmtree(src, ignore_errors=True)
    shutil.copytree(args.docs, src, ignore=shutil.ignore_patterns("tools"))
    new_pages = ["commands/%s.md" % h.name for h in helps if write_page(src, h)]
    copy_pictures(src, args.demo)
    if args.stage_only:
        return 0
    config = write_config(args.config, args.out, src, site, new_pages)
    # not --quiet: mkdocs counts the warnings that --strict fails on only
    # when it logs them
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--clean",
                           "-f", config], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True)
    for line in proc.stdout.splitlines():
        if not line.startswith("INFO"):
            print(line, file=sys.stderr)
    if proc.returncode != 0:
        print("docs: mkdocs build --strict failed (every warning fails it: see above)",
              file=sys.stderr)
        return 1
    unread = markdown_left(site)
    if unread:
        for page, line in unread:
            print("docs: %s shows Markdown it did not read: %r (a list or table needs a "
                  "blank line before it, and a block inside a list item 4 spaces)" % (page, line),
                  file=sys.stderr)
        return 1
    print("docs: %s/index.html, man pages in %s" % (site, args.man))
    return 0


if __name__ == "__main__":
    sys.exit(main())
