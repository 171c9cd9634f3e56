#!/bin/sh
# fresh_machine.sh - `git clone` then `make demo` on what a bare machine of
# this kind ships: a compiler, make, git and Python with its headers, but
# none of the headers of elfutils (libdw-dev) or zlib (zlib1g-dev), and no
# chromium, graphviz (dot) or go.  Those are hidden in a mount namespace of
# this script's own (unshare -m, as root), so the rest of the machine keeps
# them; the clone of HEAD is built and its demo run in a folder of its own.
#
# usage: sh tests/fresh_machine.sh OUT_DIR     (the clone is OUT_DIR/sonde)
# Exit status: the demo's; 77 when no mount namespace can be made.
set -eu
out=$(cd "$1" && pwd)
repo=$(cd "$(dirname "$0")/.." && pwd)

if [ -z "${SONDE_FRESH_INSIDE:-}" ]; then
    if ! unshare -m true 2>/dev/null; then
        echo "fresh_machine: cannot make a mount namespace (needs root)"
        exit 77
    fi
    SONDE_FRESH_INSIDE=1 exec unshare -m sh "$0" "$out"
fi

# /usr/include as a folder of links to the real one, less what -dev
# packages of libdw, libelf and zlib put there.
mount --make-rprivate /
rm -rf "$out/include"
mkdir -p "$out/real-include" "$out/include"
mount --bind /usr/include "$out/real-include"
for entry in "$out"/real-include/* "$out"/real-include/.[!.]*; do
    [ -e "$entry" ] || continue
    case "${entry##*/}" in
        elfutils|dwarf.h|gelf.h|libelf.h|nlist.h|zlib.h|zconf.h) ;;
        *) ln -s "$entry" "$out/include/${entry##*/}" ;;
    esac
done
mount --bind "$out/include" /usr/include
# The programs the demo draws with or reads back with, when present.
for prog in chromium chromium-browser dot go; do
    path=$(command -v "$prog" 2>/dev/null) || continue
    mount --bind /dev/null "$(readlink -f "$path")"
done

rm -rf "$out/sonde"
git clone -q "$repo" "$out/sonde"
cd "$out/sonde"
make demo
