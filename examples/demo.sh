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
else
    echo "   (go is not installed, so go tool pprof is not shown: apt-get install golang-go)"
fi
echo "   the same file read back: sonde report $out/julia.pb.gz -l 5"
$sonde report "$out/julia.pb.gz" -l 5
echo
# Native frames: numpy's BLAS kernels under the Python lines that called
# them (the interpreter's own frames left out).  numpy comes from the test
# venv (make test) or the python3 on PATH.
py=python3
[ -x build/venv/bin/python ] && py=build/venv/bin/python
if $py -c "import numpy" 2>/dev/null; then
    echo "== sonde record --native -f collapsed -o $out/numpy.collapsed -- $py examples/numpy_native.py"
    OPENBLAS_NUM_THREADS=2 $sonde record --native -r 500 -f collapsed -o "$out/numpy.collapsed" \
        -- $py examples/numpy_native.py 300 150
    echo "   the heaviest stacks, from the Python line down to the innermost native frame:"
    sort -t' ' -k2 -rn "$out/numpy.collapsed" 2>/dev/null | awk '{print $NF "\t" $0}' | sort -rn |
        head -4 | cut -f2- | sed -e 's/ [0-9]*$//' |
        awk -F';' '{ py = ""; for (i = 1; i <= NF; i++) if ($i ~ /numpy_native\.py/) py = $i;
                     printf "   %s  ...  %s\n", py, $NF }'
    $sonde record --native -r 500 -o "$out/numpy.svg" -- $py examples/numpy_native.py 300 150 \
        2>/dev/null
    echo "   open $out/numpy.svg: the same as a flame graph"
else
    echo "== (numpy is not installed for $py: the native-frames demo is left out)"
fi
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
else
    echo "   (Graphviz is not installed, so it is not drawn: apt-get install graphviz)"
fi
echo
# PyTorch: a small CNN's forward and backward passes, operators included,
# with the first interpreter here that has torch (make test installs it
# into build/venv).
torch_py=""
for py in ${SONDE_PYTHON:-} python3 build/venv/bin/python; do
    if [ -n "$py" ] && "$py" -c "import torch" 2>/dev/null; then torch_py=$py; break; fi
done
if [ -n "$torch_py" ]; then
    echo "== sonde run --torch -f json -o $out/cnn.json examples/torch_cnn.py  (PyTorch operators)"
    $sonde run --torch --python "$torch_py" -f json -o "$out/cnn.json" -s tottime -l 10 \
        examples/torch_cnn.py 2>&1 | grep -v '^USDT:'
    echo
    echo "== sonde report $out/cnn.json --ops -l 8  (key_averages().table(), from the file)"
    $sonde report "$out/cnn.json" --ops -l 8
    echo
    echo "== sonde report $out/cnn.json --ops --by-caller -s self_cpu_time_total -l 5"
    $sonde report "$out/cnn.json" --ops --by-caller -s self_cpu_time_total -l 5
    $sonde view "$out/cnn.json" >/dev/null
    echo "   open $out/cnn.html: operators are the blue-green frames"
else
    echo "== (no interpreter here imports torch: the PyTorch demo is skipped;"
    echo "   pip install torch==2.13.0, or make test, which installs it into build/venv)"
fi
echo
echo "== sonde timeit -o $out/sum.json fn_expressive() fn_terse()  (the seeds' %timeit comparison)"
$sonde timeit -s "from examples.sum_versions import fn_expressive, fn_terse" \
    -o "$out/sum.json" "fn_expressive()" "fn_terse()"
echo "   $out/sum.json is pyperf's format: python -m pyperf stats $out/sum.json reads it"
echo
echo "files written:"
ls -l "$out"
