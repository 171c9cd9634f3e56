"""bench_merge.py - sonde merge of many large profiles: how long summing N
profiles of F functions each takes (issue 27: 100 of 10,000 in under 2 s),
beside pstats.Stats.add, Python's own way of summing .prof files, on the
same files in the same run.

The profiles are made up: F functions in 20 modules, each called by one of
the functions before it (a tree of callers, 4 callees a function), 90% of
them in every file and 10% each file's own, with counts and times that
differ from file to file.  Two sets: cProfile's .prof (marshal, as
`sonde run -o` and `python -m cProfile -o` write) and sonde's JSON with
its call tree (as `sonde run -f json` writes).  Prints each time and the
ratio to pstats.

  build/venv/bin/python bench/bench_merge.py [--files N] [--functions F] [--keep DIR]

Not a test: nothing is asserted.
"""

import argparse
import json
import marshal
import os
import pstats
import random
import shutil
import subprocess
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SONDE = os.path.join(os.path.dirname(HERE), "build", "bin", "sonde")


def labels(k, nfuncs):
    """File k's functions: 90% shared by every file, 10% its own."""
    shared = nfuncs * 9 // 10
    out = [("/app/pkg/mod%d.py" % (i % 20), 10 + i, "f%d" % i) for i in range(shared)]
    out += [("/app/own/file%d.py" % k, 10 + i, "own%d" % i) for i in range(nfuncs - shared)]
    return out


def prof_file(path, k, nfuncs, rnd):
    funcs = labels(k, nfuncs)
    stats = {}
    for i, key in enumerate(funcs):
        calls = rnd.randint(1, 1000)
        tt = rnd.random() * 1e-3
        callers = {}
        if i:
            caller = funcs[(i - 1) // 4]
            callers[caller] = (calls, calls, tt, tt * 2)
        stats[key] = (calls, calls, tt, tt * 2, callers)
    with open(path, "wb") as f:
        marshal.dump(stats, f)


def json_file(path, k, nfuncs, rnd):
    funcs = labels(k, nfuncs)
    fdocs = [{"name": n, "qualname": n, "file": f, "line": l, "kind": "python"}
             for f, l, n in funcs]
    # node 0: placeholder; node 1: the thread's root; node 2 + i: function i
    nodes = [[-1, 0, 0, 0, 0], [-1, 0, 0, 0, 0]]
    totals = [0] * nfuncs
    selfs = [rnd.randint(1, 10 ** 6) for _ in range(nfuncs)]
    for i in range(nfuncs - 1, -1, -1):
        totals[i] += selfs[i]
        if i:
            totals[(i - 1) // 4] += totals[i]
    for i in range(nfuncs):
        parent = 1 if i == 0 else 2 + (i - 1) // 4
        nodes.append([i, parent, rnd.randint(1, 1000), totals[i], selfs[i]])
    doc = {"sonde": 1, "mode": "run", "unit": "seconds", "functions": fdocs,
           "threads": [{"ident": 1, "native_id": 1, "name": "MainThread", "root": 1}],
           "nodes": nodes, "stats": []}
    with open(path, "w") as f:
        json.dump(doc, f)


def timed(args):
    t = time.perf_counter()
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=100)
    ap.add_argument("--functions", type=int, default=10000)
    ap.add_argument("--keep", help="folder to keep the profiles in")
    a = ap.parse_args()
    folder = a.keep or tempfile.mkdtemp(prefix="sonde-bench-merge-")
    os.makedirs(folder, exist_ok=True)
    rnd = random.Random(27)
    profs = [os.path.join(folder, "p%03d.prof" % k) for k in range(a.files)]
    jsons = [os.path.join(folder, "p%03d.json" % k) for k in range(a.files)]
    for k in range(a.files):
        prof_file(profs[k], k, a.functions, rnd)
        json_file(jsons[k], k, a.functions, rnd)
    size = sum(os.path.getsize(p) for p in profs) / 2 ** 20
    jsize = sum(os.path.getsize(p) for p in jsons) / 2 ** 20
    print("%d profiles of %d functions each (.prof: %.0f MiB in all, JSON: %.0f MiB)"
          % (a.files, a.functions, size, jsize))
    out = os.path.join(folder, "merged.prof")
    sonde_prof = timed([SONDE, "merge"] + profs + ["-o", out])
    t = time.perf_counter()
    st = pstats.Stats(profs[0])
    st.add(*profs[1:])
    py = time.perf_counter() - t
    merged = pstats.Stats(out)
    print("sonde merge .prof -> .prof:  %.3f s  (%d functions in the result)"
          % (sonde_prof, len(merged.stats)))
    print("pstats.Stats(...).add(...):  %.3f s  (%d functions)" % (py, len(st.stats)))
    print("ratio pstats / sonde:        %.1fx" % (py / sonde_prof))
    sonde_json = timed([SONDE, "merge"] + jsons + ["-o", os.path.join(folder, "merged.json")])
    print("sonde merge JSON trees -> JSON: %.3f s" % sonde_json)
    if not a.keep:
        shutil.rmtree(folder)


if __name__ == "__main__":
    main()
