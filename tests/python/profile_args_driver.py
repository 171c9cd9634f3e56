"""sonde.Profile's cProfile arguments, checked against cProfile in the same
process (run by test_profile_args.py under each interpreter).  Each check
is a function; the driver runs the one named on the command line and
prints "ok"."""

import cProfile
import sys
import time

import sonde


def stats_of(prof):
    prof.create_stats()
    return prof.stats


def entry(stats, name):
    found = [v for k, v in stats.items() if k[2] == name]
    assert len(found) == 1, (name, sorted(stats))
    return found[0]


def sleeper():
    time.sleep(0.3)


def spinner(seconds):
    end = time.process_time() + seconds
    n = 0
    while time.process_time() < end:
        n += 1
    return n


def check_process_time():
    """Profile(time.process_time): a sleeping function gets no CPU time
    (cProfile's figure too), a spinning one its CPU time within 5%."""
    for cls in (cProfile.Profile, sonde.Profile):
        prof = cls(time.process_time)
        prof.enable()
        sleeper()
        prof.disable()
        ct = entry(stats_of(prof), "sleeper")[3]
        assert ct < 0.03, (cls, ct)
    prof = sonde.Profile(time.process_time)
    before = time.process_time()
    prof.runcall(spinner, 0.5)
    measured = time.process_time() - before
    ct = entry(stats_of(prof), "spinner")[3]
    assert abs(ct - measured) <= 0.05 * measured, (ct, measured)
    print("sleeper 0 s of CPU; spinner %.4f s against %.4f s measured" % (ct, measured))


def fake_clock(unit_ticks):
    ticks = [0]

    def timer():
        ticks[0] += unit_ticks
        return ticks[0]
    return timer


def leaf():
    return 1


def caller():
    return leaf() + leaf()


def figures(stats):
    """Per function name: (cc, nc, tt, ct, callers by name)."""
    return {k[2]: (v[0], v[1], round(v[2], 9), round(v[3], 9),
                   {c[2]: tuple(round(x, 9) for x in cv) for c, cv in v[4].items()})
            for k, v in stats.items()
            if k[2] in ("leaf", "caller", "<built-in method builtins.len>")}


def check_timer_units():
    """An int timer with timeunit, and one of seconds (timeunit 0, the
    default, as in cProfile): the same figures as cProfile's."""
    for args in ((1, 0.001), (1, 0.0), (3, 1e-6)):
        got = []
        for cls in (cProfile.Profile, sonde.Profile):
            prof = cls(fake_clock(args[0]), args[1])
            prof.runcall(caller)
            got.append(figures(stats_of(prof)))
        assert got[0] == got[1], (args, got)


def check_subcalls_builtins():
    """subcalls=False empties the callers; builtins=False leaves C
    functions out: as cProfile, in the constructor and in enable().
    From 3.14 cProfile's enable() with no arguments sets both back to True,
    dropping the constructor's; sonde keeps them, as cProfile up to 3.13:
    the reference is given them in enable() too."""
    def work():
        return caller() + len([1])
    for kwargs, enable_args in (({"subcalls": False}, {}), ({"builtins": False}, {}),
                                ({}, {"subcalls": False}), ({}, {"builtins": False})):
        got = []
        for cls in (cProfile.Profile, sonde.Profile):
            prof = cls(fake_clock(1), 1.0, **kwargs)
            prof.enable(**dict(kwargs, **enable_args) if cls is cProfile.Profile else enable_args)
            work()
            prof.disable()
            got.append(figures(stats_of(prof)))
        assert got[0] == got[1], (kwargs, enable_args, got)


def check_getprofile():
    """sys.getprofile() answers the profiler where cProfile's answers it;
    with sonde, sys.setprofile(sys.getprofile()) keeps recording."""
    answers = []
    for cls in (cProfile.Profile, sonde.Profile):
        prof = cls()
        prof.enable()
        answers.append(sys.getprofile() is prof)
        if cls is sonde.Profile:
            sys.setprofile(sys.getprofile())
        caller()
        prof.disable()
        answers.append(sys.getprofile() is None)
        assert entry(stats_of(prof), "leaf")[1] == 2
    assert answers[:2] == answers[2:], answers


def check_second_profiler():
    """A second profiler raises a ValueError (and a RuntimeError); the
    first goes on recording."""
    first, second = sonde.Profile(), sonde.Profile()
    first.enable()
    try:
        second.enable()
    except ValueError as e:
        assert isinstance(e, RuntimeError) and isinstance(e, sonde.ProfilerActiveError), e
    else:
        raise AssertionError("no error")
    caller()
    first.disable()
    assert entry(stats_of(first), "leaf")[1] == 2
    second.enable()
    second.disable()


def unraisable_type(timer):
    """The type of error cProfile reports for this timer."""
    seen = []
    old = sys.unraisablehook
    sys.unraisablehook = lambda u: seen.append(u.exc_type)
    try:
        prof = cProfile.Profile(timer)
        prof.enable()
        leaf()
        prof.disable()
    finally:
        sys.unraisablehook = old
    assert seen, "cProfile reported nothing"
    return seen[0]


def check_bad_timers():
    """A timer that raises, or returns what is not a number: one error of
    the type cProfile reports, raised by disable(); never a crash."""
    def raising():
        return 1 / 0

    def text():
        return "now"

    def nan():
        return float("nan")
    for timer in (raising, text, nan):
        want = unraisable_type(timer)
        prof = sonde.Profile(timer)
        prof.enable()
        leaf()
        try:
            prof.disable()
        except Exception as e:
            assert type(e) is want, (timer, e, want)
        else:
            raise AssertionError("no error for %r" % timer)
        prof.create_stats  # the profile stays readable
        prof.clear()
    # an int timer with a unit returning floats: cProfile's TypeError (3.12+)
    prof = sonde.Profile(time.process_time, 0.001)
    prof.enable()
    leaf()
    try:
        prof.disable()
    except TypeError:
        pass
    else:
        raise AssertionError("a float from an int timer was taken")
    for args, error in (((42,), TypeError), ((time.time, -1.0), ValueError),
                        ((time.time, float("nan")), ValueError), ((time.time, "s"), TypeError)):
        try:
            sonde.Profile(*args)
        except error:
            pass
        else:
            raise AssertionError("%r taken" % (args,))


def check_evil_timer():
    """A timer that disables or clears its own profiler: RuntimeError,
    as cProfile's, and the profiler still works afterwards."""
    for what in ("disable", "clear"):
        errors = []

        def timer():
            try:
                getattr(prof, what)()
            except RuntimeError as e:
                errors.append(e)
            return time.perf_counter()
        prof = sonde.Profile(timer)
        prof.enable()
        caller()
        prof.disable()
        assert errors and entry(stats_of(prof), "leaf")[1] == 2, errors


def check_zero_timeunit():
    """timeunit=0 is cProfile's default: the timer returns seconds (ints
    too).  Figures as cProfile's."""
    got = []
    for cls in (cProfile.Profile, sonde.Profile):
        prof = cls(fake_clock(2), 0)
        prof.runcall(caller)
        got.append(figures(stats_of(prof)))
    assert got[0] == got[1] and got[1]["leaf"][2] == 4.0, got


if __name__ == "__main__":
    globals()["check_" + sys.argv[1]]()
    print("ok")
