"""The lines and mem documents keep their schema: every key and the type
of every value of what `sonde lines -o` and `sonde mem -o` (with and
without --lines) write for a program, and of what the Python API's
results() gives, is pinned by golden files (tests/python/golden/).  A
change there is a change of README's "Formats": update both together."""

import json
import os
import subprocess
import sys

from conftest import HERE, run_sonde, with_pkg_env

GOLDEN = os.path.join(HERE, "golden")

# A small program of the usual shape: stdlib calls, a comprehension, a
# loop, memory kept to the end (a leak) and memory released.
PROGRAM = """\
import json
import zlib

KEPT = []


def build(n):
    rows = [{"id": i, "name": "row %d" % i} for i in range(n)]
    KEPT.append(json.dumps(rows))
    return len(zlib.compress(KEPT[-1].encode()))


def main():
    total = 0
    for _ in range(3):
        total += build(20000)
    return total


main()
"""

API = """\
import json, sys
import sonde
sys.path.insert(0, sys.argv[1])
import program

lines = sonde.LineProfiler(program.build, program.main, bytecode=True)
with lines:
    program.main()
mem = sonde.MemoryProfiler(program.build, program.main)
with mem:
    program.main()
print(json.dumps([lines.results(), mem.results()]))
"""


def schema(value):
    """The keys and types of value: {key: schema} for an object, [schema]
    for an array (its items' schemas merged), else the type's name."""
    if isinstance(value, dict):
        return {key: schema(v) for key, v in value.items()}
    if isinstance(value, list):
        merged = None
        for item in value:
            merged = merge(merged, schema(item))
        return [merged] if merged is not None else []
    if value is None:
        return "null"
    return {bool: "bool", int: "int", float: "float", str: "str"}[type(value)]


def merge(a, b):
    """One schema for two values of a place: objects key by key, arrays by
    their items, and types that differ as "type1|type2"."""
    if a is None or b is None:
        return b if a is None else a
    if isinstance(a, dict) and isinstance(b, dict):
        return {key: merge(a.get(key), b.get(key)) if key in a and key in b else
                "missing|" + str(a.get(key, b.get(key))) for key in sorted(set(a) | set(b))}
    if isinstance(a, list) and isinstance(b, list):
        return [merge(a[0] if a else None, b[0] if b else None)] if a or b else []
    if a == b:
        return a
    return "|".join(sorted(set(str(a).split("|")) | set(str(b).split("|"))))


def golden(name):
    with open(os.path.join(GOLDEN, name)) as f:
        return json.load(f)


def documents(tmp_path):
    (tmp_path / "program.py").write_text(PROGRAM)
    docs = {}
    for name, args in (("lines", ["lines", "--bytecode"]), ("mem", ["mem"]),
                       ("mem-lines", ["mem", "--lines"])):
        proc = run_sonde(args + ["-o", name + ".json", "program.py"], tmp_path)
        assert proc.returncode == 0, proc.stderr
        with open(str(tmp_path / (name + ".json"))) as f:
            docs[name] = json.load(f)
    return docs


def test_documents_keep_their_schema(tmp_path):
    """sonde lines -o and sonde mem -o on a real program: keys and types as
    the golden files have them; every list the program fills is there
    (leaks and allocations with stacks, spans, instructions), so none is left unchecked."""
    docs = documents(tmp_path)
    assert schema(docs["lines"]) == golden("lines_doc_schema.json")
    assert docs["mem"]["leaks"] and docs["mem"]["leaks"][0]["stack"]
    assert docs["mem"]["allocations"] and docs["mem"]["allocations"][0]["stack"]
    assert docs["mem"]["timeline"]["spans"]
    assert merge(schema(docs["mem"]), schema(docs["mem-lines"])) == golden("mem_doc_schema.json")
    assert [line["hits"] for f in docs["mem"]["functions"] for line in f["lines"]] == \
        [None] * sum(len(f["lines"]) for f in docs["mem"]["functions"])


def test_api_results_have_the_documents_schema(tmp_path):
    """LineProfiler.results() is the lines document's functions, and
    MemoryProfiler.results() the mem document, with the same schema."""
    (tmp_path / "program.py").write_text(PROGRAM)
    out = subprocess.run([sys.executable, "-c", API, str(tmp_path)], env=with_pkg_env(),
                         stdout=subprocess.PIPE, universal_newlines=True, check=True).stdout
    lines, mem = json.loads(out)
    # the API profiles no run of its own: no "about" (what the commands add)
    lines_golden, mem_golden = golden("lines_doc_schema.json"), golden("mem_doc_schema.json")
    del lines_golden["about"], mem_golden["about"]
    assert schema({"sonde": 1, "mode": "lines", "functions": lines}) == lines_golden
    # without line events, hits are null: the golden file has int|null
    assert merge(schema(mem), mem_golden) == mem_golden
