#!/bin/sh
# gen_layout.sh - checks layout_3X.c and the 3.13 debug-offsets parser against CPython's headers.
#
# A developer tool, not run by the tests.  For each pyenv interpreter (default: 3.8.18 3.9.18
# 3.10.13 3.11.7 3.12.1 3.13.0 under $PYENV_ROOT/versions, ~/.pyenv by default; or the versions
# given as arguments), and for 3.14 and 3.15 in the Debian root tests/sid/make_root.sh makes
# ($SONDE_SID_ROOT, build/sid-root by default; built and run there with its gcc, as root), it
# builds gen_layout.c with -DPy_BUILD_CORE against that version's include/python3.X/internal
# headers, linked with src/sampler/python/*.c and its libpython, then
#   - prints "headers": every sonde_py_layout field measured with offsetof/sizeof, one
#     "name value" line each ("-" = SONDE_PY_ABSENT): paste these values into a new layout_3X.c;
#   - diffs it against "table": what sonde has (layout_3X.c; from 3.13 what
#     sonde_py_layout_from_debug_offsets() makes of that libpython's real _PyRuntime);
#   - from 3.13 also prints the word index of each _Py_DebugOffsets field sonde reads: the
#     version's table in debug_offsets.c.
# Exit status 1 when any listing differs or a build fails.
#
# Usage: src/sampler/python/tools/gen_layout.sh [VERSION...]
set -u

here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../../.." && pwd)
root=${PYENV_ROOT:-$HOME/.pyenv}
cc=${CC:-gcc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

sid=${SONDE_SID_ROOT:-$src/../build/sid-root}
[ $# -gt 0 ] || set -- 3.8.18 3.9.18 3.10.13 3.11.7 3.12.1 3.13.0 3.14 3.15
status=0
for v in "$@"; do
    prefix=$root/versions/$v
    mm=$(echo "$v" | cut -d. -f1,2)
    inc=$prefix/include/python$mm
    echo "== $v"
    if [ -d "$inc/internal" ]; then
        exe=$tmp/gen_$v
        run=
        $cc -std=c11 -D_GNU_SOURCE -DPy_BUILD_CORE -w -I"$inc" -I"$src" \
            "$here/gen_layout.c" "$src"/sampler/python/*.c "$src"/core/utf8.c \
            -L"$prefix/lib" -lpython"$mm" -Wl,-rpath,"$prefix/lib" -o "$exe"
    elif [ -d "$sid/usr/include/python$mm/internal" ]; then
        # Inside the root, with a copy of the sources.
        rm -rf "$sid/tmp/gen_layout" && mkdir -p "$sid/tmp/gen_layout" &&
            cp -r "$src" "$sid/tmp/gen_layout/src"
        exe=/tmp/gen_layout/gen
        run="chroot $sid"
        chroot "$sid" sh -c "cd /tmp/gen_layout/src && gcc -std=c11 -D_GNU_SOURCE \
            -DPy_BUILD_CORE -w -I/usr/include/python$mm -I. sampler/python/tools/gen_layout.c \
            sampler/python/*.c core/utf8.c -lpython$mm -o $exe"
    else
        echo "   no internal headers in $inc or in $sid"
        status=1
        continue
    fi
    if [ $? -ne 0 ]; then
        echo "   build failed"
        status=1
        continue
    fi
    $run "$exe" headers > "$tmp/headers_$v" || status=1
    $run "$exe" table > "$tmp/table_$v" || status=1
    sed 's/^/   /' "$tmp/headers_$v"
    if diff -u --label "headers $v" --label "table $v" "$tmp/headers_$v" "$tmp/table_$v" \
            > "$tmp/diff_$v"; then
        echo "   table matches the headers"
    else
        cat "$tmp/diff_$v"
        status=1
    fi
    case $mm in 3.8|3.9|3.10|3.11|3.12) ;; *)
        echo "   _Py_DebugOffsets (word index of each field sonde reads):"
        $run "$exe" debug | sed 's/^/   /' ;;
    esac
done
exit $status
