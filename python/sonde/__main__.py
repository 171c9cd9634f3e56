"""python3 -m sonde: the same command line as the sonde command.

The commands themselves are C (the extension's main()); this only tells
them which interpreter launched programs should use and where the sonde
package lives.  (`sonde` on PATH, after pip install, is the C command
itself: the wheel's script, with --native, which this has not.)
"""

import os
import sys


def main():
    package_dir = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        from . import _sonde
    except ImportError as e:
        fix = ("install sonde for it: %s -m pip install --force-reinstall sonde"
               if os.path.basename(package_dir) in ("site-packages", "dist-packages")
               else "build it with: make PYTHON=%s") % sys.executable
        sys.stderr.write("sonde: cannot load sonde's extension into Python %d.%d (%s): %s; %s\n"
                         % (sys.version_info[0], sys.version_info[1], sys.executable, e, fix))
        return 1
    sys.stdout.flush()
    return _sonde.main(["sonde"] + sys.argv[1:], sys.executable or "", package_dir)


def cli():
    """Runs the command line and exits with its code."""
    sys.exit(main())


if __name__ == "__main__":
    cli()
