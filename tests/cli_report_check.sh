#!/bin/sh
# cli_report_check.sh - `sonde report` on a cProfile file, conversions,
# the call graph, `sonde view` and `sonde diff`, bad input.
#
#   SONDE_BIN="valgrind -q build/bin/sonde" sh tests/cli_report_check.sh
#
# SONDE_BIN is the command to test, split on spaces so that a wrapper such
# as valgrind can come first (default: build/bin/sonde of this checkout).
# Prints one line per check and "N passed, N failed"; exits 1 on a failure.

here=$(cd "$(dirname "$0")/.." && pwd)
SONDE_BIN=${SONDE_BIN:-$here/build/bin/sonde}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sonde-cli.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM
passed=0
failed=0

ok() {
    passed=$((passed + 1))
    echo "ok   $1"
}

fail() {
    failed=$((failed + 1))
    echo "FAIL $1"
    shift
    for why in "$@"; do echo "     $why"; done
}

# Runs sonde with the given arguments; sets rc, and leaves its output in
# $tmp/stdout and $tmp/stderr.
sonde() {
    $SONDE_BIN "$@" >"$tmp/stdout" 2>"$tmp/stderr"
    rc=$?
}

# expect_ok NAME ARGS...: exit status 0 and nothing on stderr but the
# names of the files written ("sonde: wrote FILE").
expect_ok() {
    name=$1
    shift
    sonde "$@"
    if [ "$rc" -eq 0 ] && ! grep -qv '^sonde: wrote ' "$tmp/stderr"; then
        ok "$name"
    else
        fail "$name" "exit status $rc" "stderr: $(head -c 300 "$tmp/stderr")"
    fi
}

# expect_error NAME STATUS ARGS...: that exit status and exactly one line
# on stderr, starting with "sonde" (report's own errors: "sonde:").
expect_error() {
    name=$1
    status=$2
    shift 2
    sonde "$@"
    lines=$(wc -l <"$tmp/stderr")
    first=$(head -c 6 "$tmp/stderr")
    prefix="sonde:"
    [ "$status" -eq 2 ] && prefix="sonde "
    if [ "$rc" -eq "$status" ] && [ "$lines" -eq 1 ] && [ "$first" = "$prefix" ]; then
        ok "$name"
    else
        fail "$name" "exit status $rc (want $status), $lines stderr lines" \
            "stderr: $(head -c 300 "$tmp/stderr")"
    fi
}

# contains NAME TEXT: the last command's stdout holds TEXT.
contains() {
    if grep -qF -- "$2" "$tmp/stdout"; then
        ok "$1"
    else
        fail "$1" "stdout lacks '$2'"
    fi
}

# python_check NAME CODE ARGS...: python3 -c CODE ARGS exits 0.
python_check() {
    name=$1
    shift
    if out=$(python3 -c "$@" 2>&1); then
        ok "$name"
    else
        fail "$name" "$(printf '%s\n' "$out" | tail -n 3)"
    fi
}

prof=$tmp/prog.prof
python_check "cProfile writes a .prof" '
import cProfile, sys
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)
def main():
    return sum(fib(i) for i in range(15)) + len(sorted(range(1000), key=str))
profiler = cProfile.Profile()
profiler.enable()
main()
profiler.disable()
profiler.dump_stats(sys.argv[1])
' "$prof"

expect_ok "report prints the table" report "$prof"
contains "table has the totals line" "function calls ("
contains "table lists fib" "(fib)"

expect_ok "report -s tottime -l 5" report "$prof" -s tottime -l 5
contains "table cut to 5 rows" "due to restriction <5>"
expect_ok "report --callers fib --callees fib" report "$prof" --callers fib --callees fib
contains "callers of fib listed" "Function was called by..."
contains "callees of fib listed" "Function called..."
if grep -q "ncalls  tottime  percall" "$tmp/stdout"; then
    fail "only the callers and callees, as pstats' print_callers" "the table is there too"
else
    ok "only the callers and callees, as pstats' print_callers"
fi

expect_ok "report -f json -o out.json" report "$prof" -f json -o "$tmp/out.json"
python_check "out.json is JSON" 'import json, sys; json.load(open(sys.argv[1]))' \
    "$tmp/out.json"

expect_ok "report -f pstats -o re.prof" report "$prof" -f pstats -o "$tmp/re.prof"
python_check "pstats loads re.prof, same figures as cProfile's" '
import pstats, sys
a, b = pstats.Stats(sys.argv[1]), pstats.Stats(sys.argv[2])
assert a.stats == b.stats, "stats differ"
assert (a.total_calls, a.prim_calls) == (b.total_calls, b.prim_calls)
' "$prof" "$tmp/re.prof"

expect_ok "report -f json's output reads back" report "$tmp/out.json" -s tottime
contains "the JSON's table lists fib" "(fib)"

expect_ok "report -f dot" report "$prof" -f dot --node-thres 1 --edge-thres 1
contains "a digraph" "digraph sonde {"
contains "fib's node" 'label="fib'

expect_ok "view a .prof" view "$prof" -o "$tmp/prog.html"
python_check "the page holds fib" '
import sys
html = open(sys.argv[1]).read()
assert "Content-Security-Policy" in html and "\"fib\"" in html
' "$tmp/prog.html"
expect_ok "view the JSON" view "$tmp/out.json" -o "$tmp/out.html"
expect_ok "diff two profiles" diff "$prof" "$tmp/re.prof" -o "$tmp/diff.html" -l 3
contains "the diff table" "Functions whose own time changed most"

gopprof=$here/tests/c/corpus/go_cpu.pb.gz
expect_ok "report a Go pprof file" report "$gopprof" -l 0
contains "Go's main.spin" "(main.spin)"
expect_ok "report a Go pprof file -f collapsed" report "$gopprof" -f collapsed
contains "the inlined frame under its caller" "main.spin (/tmp/goapp/main.go:15);main.sq"
expect_ok "report -f pprof of a pprof file" report "$gopprof" -f pprof -o "$tmp/again.pb.gz"
expect_ok "the pprof sonde wrote reads back" report "$tmp/again.pb.gz" -f collapsed
contains "the same stacks" "main.spin (/tmp/goapp/main.go:15);main.sq"
expect_ok "a mem document as pprof" report "$here/tests/c/corpus/mem_lines.json" -f pprof \
    -o "$tmp/mem.pb.gz"
expect_ok "view a pprof file" view "$tmp/again.pb.gz" -o "$tmp/go.html"
head -c 200 "$gopprof" >"$tmp/cut.pb.gz"
expect_error "a cut pprof file" 1 report "$tmp/cut.pb.gz"

: >"$tmp/empty.prof"
head -c 300 /dev/urandom >"$tmp/random.prof"
head -c 100 "$prof" >"$tmp/truncated.prof"
echo '{"sonde": 1, "functions": []}' >"$tmp/profile.json"
expect_error "missing file" 1 report "$tmp/missing.prof"
expect_error "empty file" 1 report "$tmp/empty.prof"
expect_error "random bytes" 1 report "$tmp/random.prof"
expect_error "truncated .prof" 1 report "$tmp/truncated.prof"
expect_error "JSON file" 1 report "$tmp/profile.json"
expect_error "bad flag" 2 report "$prof" --bogus
expect_error "view a random file" 1 view "$tmp/random.prof"
expect_error "diff with a missing file" 1 diff "$prof" "$tmp/missing.prof"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
