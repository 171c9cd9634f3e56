#!/bin/sh
# make demo: profile the bundled Julia set example and show what sonde wrote.
set -e
cd "$(dirname "$0")/.."
out=build/demo
mkdir -p "$out"
sonde=build/bin/sonde

echo "== sonde run -o $out/julia.prof examples/julia.py"
$sonde run -o "$out/julia.prof" -l 12 examples/julia.py
echo
echo "== sonde run -f collapsed -o $out/julia.collapsed examples/julia.py  (flame graph stacks)"
$sonde run -f collapsed -o "$out/julia.collapsed" examples/julia.py 2>/dev/null >/dev/null
awk '{print $NF "\t" $0}' "$out/julia.collapsed" | sort -rn | head -3 | cut -f2-
echo
echo "== sonde report $out/julia.prof -s tottime -l 5 --callers calculate_z"
$sonde report "$out/julia.prof" -s tottime -l 5 --callers calculate_z
echo
echo "== the same file in Python's own pstats"
python3 -c "import pstats; pstats.Stats('$out/julia.prof').sort_stats('tottime').print_stats(3)" | tail -6
echo
echo "== sonde record -o $out/julia.svg -- python3 examples/julia.py 300 300  (sampled from outside)"
$sonde record -r 1000 -o "$out/julia.svg" -- python3 examples/julia.py 300 300
echo "   open $out/julia.svg in a browser: hover, click to zoom, Search"
echo
echo "== sonde record -f pprof -o $out/julia.pb.gz -- python3 examples/julia.py 300 300  (pprof)"
$sonde record -r 1000 -f pprof -o "$out/julia.pb.gz" -- python3 examples/julia.py 300 300
if command -v go >/dev/null; then
    echo "   go tool pprof -top $out/julia.pb.gz:"
    go tool pprof -top "$out/julia.pb.gz" 2>/dev/null | head -8
fi
echo "   the same file read back: sonde report $out/julia.pb.gz -l 5"
$sonde report "$out/julia.pb.gz" -l 5
echo
echo "== sonde mem -o $out/julia-mem.json --plot $out/julia-mem.svg examples/julia.py 300 60"
$sonde mem -f coordinates -f calculate_z -o "$out/julia-mem.json" --plot "$out/julia-mem.svg" \
    examples/julia.py 300 60
echo "   open $out/julia-mem.svg: RSS and heap over time, with when each function ran"
echo
echo "== sonde view $out/julia.prof   (flame graph, icicle, sunburst, table: one HTML file)"
$sonde view "$out/julia.prof"
echo "   open $out/julia.html in a browser (it needs no network)"
echo
echo "== sonde report $out/julia.prof -f dot  (the call graph, for Graphviz)"
$sonde report "$out/julia.prof" -f dot -o "$out/julia.dot"
if command -v dot >/dev/null; then
    $sonde report "$out/julia.prof" -f svg -o "$out/julia-calls.svg"
    echo "   drawn: $out/julia-calls.svg"
fi
echo
echo "== sonde timeit -o $out/sum.json fn_expressive() fn_terse()  (the seeds' %timeit comparison)"
$sonde timeit -s "from examples.sum_versions import fn_expressive, fn_terse" \
    -o "$out/sum.json" "fn_expressive()" "fn_terse()"
echo "   $out/sum.json is pyperf's format: python -m pyperf stats $out/sum.json reads it"
echo
echo "files written:"
ls -l "$out"
