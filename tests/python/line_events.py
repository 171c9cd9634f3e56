"""The interpreter's own line events of chosen functions, counted with
sys.settrace (threads started meanwhile included): the reference the line
profilers' hits are compared with."""

import sys
import threading


def line_events(run, codes):
    """{"name:line": hits} of the code objects in codes (code -> name)
    while run() runs."""
    hits = {}

    def local(frame, event, arg):
        if event == "line":
            key = "%s:%d" % (codes[frame.f_code], frame.f_lineno)
            hits[key] = hits.get(key, 0) + 1
        return local

    def hook(frame, event, arg):
        return local if frame.f_code in codes else None

    sys.settrace(hook)
    threading.settrace(hook)
    try:
        run()
    finally:
        sys.settrace(None)
        threading.settrace(None)
    return hits
