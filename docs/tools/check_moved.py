"""check_moved.py - that a README's content lands somewhere in docs/.

When the README became a landing page (issue 25), its sections moved into
docs/.  This checks that nothing of substance was lost: every block of the
old README (a paragraph, each item of a list, a code block, a table; headings
aside, as pages retitle them) is found in the pages, whitespace, heading
marks and Markdown links ([text](url) read as text) aside; a command's
synopsis counts as found where its page now takes it from the command's
--help (the line <!-- sonde-usage -->).  It prints, per
heading of the old README, how many of its blocks were found, then the
blocks that were not; exit status 1 when any was not.

    python3 docs/tools/check_moved.py [OLD_README]   # default: git's README.md at fba0d65
"""

import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BEFORE = "fba0d65"  # the last commit whose README held everything


def normal(text):
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"^#+ ", "", text, flags=re.M)
    return " ".join(text.split())


def blocks(text):
    """(heading, block) for each block under each heading."""
    heading, out = "(top)", []
    for block in re.split(r"\n\s*\n", text):
        lines = [line for line in block.split("\n") if line.strip()]
        body = []
        for line in lines:
            if re.match(r"^#+ ", line):
                heading = line.lstrip("# ").strip()
                continue
            if re.match(r"^(- |\d+\. )", line) and body:  # a list item: a block of its own
                out.append((heading, "\n".join(body)))
                body = []
            body.append(line)
        if body:
            out.append((heading, "\n".join(body)))
    return out


def generated_usage(block):
    """A command's synopsis, which its page now takes from --help."""
    m = re.match(r"^    sonde (\w+) ", block)
    page = os.path.join(ROOT, "docs", "commands", "%s.md" % (m.group(1) if m else ""))
    if not m or not os.path.exists(page):
        return False
    with open(page) as f:
        return "<!-- sonde-usage -->" in f.read()


def main():
    if len(sys.argv) > 1:
        with open(sys.argv[1]) as f:
            old = f.read()
    else:
        old = subprocess.run(["git", "show", BEFORE + ":README.md"], cwd=ROOT, check=True,
                             stdout=subprocess.PIPE, universal_newlines=True).stdout
    pages = []
    for folder, _, files in os.walk(os.path.join(ROOT, "docs")):
        pages += [os.path.join(folder, f) for f in sorted(files) if f.endswith(".md")]
    docs = ""
    for page in pages:
        with open(page) as f:
            docs += " " + normal(f.read())
    found, missing, order = {}, [], []
    for heading, block in blocks(old):
        if heading not in found:
            found[heading] = [0, 0]
            order.append(heading)
        found[heading][1] += 1
        if normal(block) in docs or generated_usage(block):
            found[heading][0] += 1
        else:
            missing.append((heading, block))
    for heading in order:
        print("%-60s %d/%d blocks found" % (heading[:60], found[heading][0], found[heading][1]))
    for heading, block in missing:
        print("\nnot found, under %r:\n%s" % (heading, block))
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
