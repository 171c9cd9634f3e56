"""Two versions of one function, from the seeds' %timeit comparison: an
expressive loop and a terse builtin (make demo times them with sonde
timeit)."""


def fn_expressive(upper=100000):
    total = 0
    for n in range(upper):
        total += n
    return total


def fn_terse(upper=100000):
    return sum(range(upper))
