#!/bin/sh
# make_root.sh - the Pythons people run now (3.14 and 3.15), from Debian's unstable suite, in a
# root of their own: they need a newer C library than the host's.  Made once with debootstrap
# (about 2 minutes; kept while ROOT/.ready is there), then one wrapper per interpreter in
# BIN_DIR: BIN_DIR/python3.14 runs the root's interpreter in a mount namespace of its own, as a
# container would (tests/sid/python.sh), so that sonde samples it from outside.
#
# usage: sh tests/sid/make_root.sh ROOT BIN_DIR      (as root; needs debootstrap)
set -eu
root=$1
bin=$2
here=$(cd "$(dirname "$0")" && pwd)
versions="3.14 3.15"

if [ ! -f "$root/.ready" ]; then
    if ! command -v debootstrap >/dev/null; then
        echo "make_root: debootstrap is not installed (apt-get install debootstrap)" >&2
        exit 1
    fi
    rm -rf "$root"
    packages=gcc,make,libc6-dev
    for v in $versions; do
        packages=$packages,python$v,python$v-dev,python$v-venv,libpython$v-testsuite
    done
    debootstrap --variant=minbase --include="$packages" sid "$root" > "$root.log" 2>&1 ||
        { tail -20 "$root.log" >&2; exit 1; }
    touch "$root/.ready"
fi
# Each interpreter's own test package (CPython's cProfile tests run against sonde.Profile):
# added to a root made before it was in the list above.
for v in $versions; do
    if [ -x "$root/usr/bin/python$v" ] && [ ! -f "$root/usr/lib/python$v/test/test_profile.py" ]; then
        chroot "$root" apt-get install -y -q --no-install-recommends \
            -o Acquire::Check-Valid-Until=false "libpython$v-testsuite" >> "$root.log" 2>&1 ||
            echo "make_root: libpython$v-testsuite could not be added: CPython's cProfile tests are skipped on $v" >&2
    fi
done
mkdir -p "$bin"
root_abs=$(cd "$root" && pwd)
for v in $versions; do
    [ -x "$root/usr/bin/python$v" ] || continue
    printf '#!/bin/sh\nexec sh %s %s /usr/bin/python%s "$@"\n' "$here/python.sh" "$root_abs" "$v" \
        > "$bin/python$v"
    chmod +x "$bin/python$v"
done
