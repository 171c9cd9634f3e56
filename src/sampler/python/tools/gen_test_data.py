"""gen_test_data.py - real line tables, str objects and _Py_DebugOffsets for test_sampler_python.c.

A developer tool, not run by the tests.  Run with any python3:
    python3 src/sampler/python/tools/gen_test_data.py > /tmp/data.c
and paste its output over the generated block of tests/c/test_sampler_python.c (which defines
struct line_run and the LINE_CASE and STR_CASE macros the block uses).  It runs itself
under each pyenv interpreter (3.8.18 ... 3.13.0 in $PYENV_ROOT/versions, ~/.pyenv by default)
and each of build/sid/python3.14 and python3.15 (tests/sid/make_root.sh makes them; run this
from the repository's root) with --dump, which reports from inside that interpreter:
  - for a few functions: the raw line table (co_lnotab up to 3.9, co_linetable from 3.10), the
    first line, and the line of every code unit as the interpreter sees it (dis.findlinestarts
    up to 3.9, co_lines() on 3.10, co_positions() from 3.11; -1 for none), each checked against
    the interpreter's own PyCode_Addr2Line, which also gives the lines just past the end;
  - the memory of a few str objects (header and characters, via ctypes.string_at);
  - from 3.13, the first bytes of its own _PyRuntime: the _Py_DebugOffsets struct.
"""
import ctypes
import dis
import json
import os
import subprocess
import sys

VERSIONS = ["3.8.18", "3.9.18", "3.10.13", "3.11.7", "3.12.1", "3.13.0"]
SID_VERSIONS = ["3.14", "3.15"]
# sizeof(_Py_DebugOffsets) by minor version, see gen_layout.sh
DEBUG_OFFSETS_SIZE = {13: 584, 14: 760, 15: 888}

# Loops (negative line deltas), a multi-line expression, exception handling, a gap of 1000 lines
# (several lnotab pairs; multi-chunk varints), a column past 127 (3.11's long form), a listcomp.
SAMPLE = (
    "def sample(items, limit=10):\n"
    "    total = 0\n"
    "    for i, item in enumerate(items):\n"
    "        if i > limit:\n"
    "            break\n"
    "        try:\n"
    "            total += item[\n"
    "                0\n"
    "            ] * 2\n"
    "        except (IndexError,\n"
    "                TypeError):\n"
    "            total -= 1\n"
    + "\n" * 1000
    + "    while total > 100:\n"
    "        total //= 2\n"
    "    return [x for x in range(total)\n"
    "            if x % 3]" + " " * 140 + "+ [total]\n"
)

STRINGS = ["sample", "caf\u00e9", "\u03a9mega \u4e2d", "snake \U0001f40d!", "lone \udc80"]


def addr2line():
    f = ctypes.pythonapi.PyCode_Addr2Line
    f.argtypes = [ctypes.py_object, ctypes.c_int]
    f.restype = ctypes.c_int
    return f


def lines_by_unit(code):
    """The line of each code unit, from dis's view of the table; -1 for none."""
    units = len(code.co_code) // 2
    if sys.version_info >= (3, 11):
        return [-1 if p[0] is None else p[0] for p in code.co_positions()]
    lines = [-1] * units
    if sys.version_info >= (3, 10):
        for start, end, line in code.co_lines():
            for u in range(start // 2, end // 2):
                lines[u] = -1 if line is None else line
        return lines
    starts = dict(dis.findlinestarts(code))
    line = -1
    for u in range(units):
        line = starts.get(2 * u, line)
        lines[u] = line
    return lines


def dump_code(name, code):
    a2l = addr2line()
    lines = lines_by_unit(code)
    units = len(code.co_code) // 2
    assert len(lines) == units, name
    for u, line in enumerate(lines):
        got = a2l(code, 2 * u)
        assert got == line, (name, u, got, line)
    # Just past the end the table alone decides; the interpreter's answer is the reference.
    lines += [a2l(code, 2 * u) for u in (units, units + 1)]
    table = code.co_lnotab if sys.version_info < (3, 10) else code.co_linetable
    return {"name": name, "table": table.hex(), "first": code.co_firstlineno, "lines": lines}


def dump():
    import json.decoder

    ns = {}
    exec(compile(SAMPLE, "<sonde-sample>", "exec"), ns)
    sample = ns["sample"].__code__
    scanstring = json.decoder.py_scanstring.__code__
    codes = [("sample", sample), ("json.decoder.py_scanstring", scanstring)]
    codes += [("sample." + c.co_name, c) for c in sample.co_consts if hasattr(c, "co_code")]
    out = {"version": "%d.%d" % sys.version_info[:2]}
    out["codes"] = [dump_code(n, c) for n, c in codes]
    out["strings"] = []
    for s in STRINGS:
        kind = 1 if max(map(ord, s)) < 256 else 2 if max(map(ord, s)) < 65536 else 4
        size = sys.getsizeof(s)  # header, characters and the trailing NUL
        mem = ctypes.string_at(id(s), size).hex()
        text = "".join("\ufffd" if 0xD800 <= ord(c) < 0xE000 else c for c in s)
        out["strings"].append({"text": text.encode("utf-8").hex(), "kind": kind, "mem": mem})
    if sys.version_info[1] in DEBUG_OFFSETS_SIZE:
        rt = ctypes.addressof(ctypes.c_char.in_dll(ctypes.pythonapi, "_PyRuntime"))
        out["debug_offsets"] = ctypes.string_at(rt, DEBUG_OFFSETS_SIZE[sys.version_info[1]]).hex()
    json.dump(out, sys.stdout)


def c_bytes(hexstr, indent="    "):
    """A C string literal of the bytes, in lines of at most 100 columns."""
    data = bytes.fromhex(hexstr)
    rows, row = [], ""
    for b in data:
        if len(row) + 4 > 100 - len(indent) - 2:
            rows.append(row)
            row = ""
        row += "\\x%02x" % b
    rows.append(row)
    return "\n".join('%s"%s"' % (indent, r) for r in rows)


def runs(lines):
    """(start, end, line) for each stretch of code units with one line."""
    out, start = [], 0
    for u in range(1, len(lines) + 1):
        if u == len(lines) or lines[u] != lines[start]:
            out.append((start, u, lines[start]))
            start = u
    return out


def emit(dumps):
    formats = {"3.8": "SONDE_PY_LNOTAB", "3.9": "SONDE_PY_LNOTAB", "3.10": "SONDE_PY_LINETABLE_310"}
    print("/* BEGIN generated by src/sampler/python/tools/gen_test_data.py */")
    cases = []
    for d in dumps:
        tag = d["version"].replace(".", "")
        for i, c in enumerate(d["codes"]):
            sym = "lt_%s_%d" % (tag, i)
            print("/* %s %s */" % (d["version"], c["name"]))
            print("static const char %s_table[] =\n%s;" % (sym, c_bytes(c["table"])))
            print("static const struct line_run %s_runs[] = {" % sym)
            items = ["{%d, %d, %d}" % r for r in runs(c["lines"])]
            row = "   "
            for it in items:
                if len(row) + len(it) + 2 > 100:
                    print(row)
                    row = "   "
                row += " " + it + ","
            print(row)
            print("};")
            fmt = formats.get(d["version"], "SONDE_PY_LOCATIONS_311")
            cases.append('    LINE_CASE("%s %s", %s, %d, %s),'
                         % (d["version"], c["name"], fmt, c["first"], sym))
    print("static const struct line_case line_cases[] = {")
    print("\n".join(cases))
    print("};")
    strs = []
    for d in dumps:
        minor = d["version"].split(".")[1]
        for i, st in enumerate(d["strings"]):
            sym = "str_%s_%d" % (minor, i)
            print("static const char %s_mem[] =\n%s;" % (sym, c_bytes(st["mem"])))
            print("static const char %s_utf8[] =\n%s;" % (sym, c_bytes(st["text"])))
            strs.append("    STR_CASE(%s, %d, %s)," % (minor, st["kind"], sym))
    print("static const struct str_case str_cases[] = {")
    print("\n".join(strs))
    print("};")
    for d in dumps:
        if "debug_offsets" in d:
            print("/* The first %d bytes of a live %s process's _PyRuntime. */"
                  % (len(d["debug_offsets"]) // 2, d["version"]))
            print("static const char debug_offsets_%s[] =\n%s;"
                  % (d["version"].replace(".", ""), c_bytes(d["debug_offsets"])))
    print("/* END generated */")


def main():
    if sys.argv[1:] == ["--dump"]:
        dump()
        return
    root = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    dumps = []
    exes = [os.path.join(root, "versions", v, "bin", "python3") for v in VERSIONS]
    exes += [os.path.join("build", "sid", "python" + v) for v in SID_VERSIONS]
    for exe in exes:
        env = dict(os.environ, PYTHONHASHSEED="0")  # fewer bytes change between runs
        res = subprocess.run([exe, os.path.abspath(__file__), "--dump"], check=True,
                             stdout=subprocess.PIPE, env=env)
        dumps.append(json.loads(res.stdout))
    emit(dumps)


if __name__ == "__main__":
    main()
