"""python3 -m sonde: the same command line as build/bin/sonde.

The commands themselves are C (the extension's main()); this only tells
them which interpreter launched programs should use and where the sonde
package lives.
"""

import os
import sys


def main():
    from . import _sonde

    package_dir = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sys.stdout.flush()
    return _sonde.main(["sonde"] + sys.argv[1:], sys.executable or "", package_dir)


def cli():
    """The `sonde` console script that `pip install` creates."""
    sys.exit(main())


if __name__ == "__main__":
    cli()
