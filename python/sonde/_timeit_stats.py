"""The statistics of sonde timeit, in plain Python (no scipy at run time).

Values from one process share its address layout, hash seed and
allocator state, so they are not independent: the unit of every interval
and test here is the process (the mean of its values), and the values
inside a process only feed the description (mean, std. dev., median,
outliers).

- mean_ci: Student's t interval of the mean of the process means.
- mann_whitney: the two-sided Mann-Whitney U test (a rank test: it
  assumes no normality and an outlier moves it by one rank at most), the
  normal approximation with tie and continuity corrections.
- ratio_ci: a percentile bootstrap interval for the ratio of the means,
  resampling processes, with a fixed seed so a result can be replayed;
  past BOOTSTRAP_UNITS processes in all (a pyperf file may hold
  hundreds of thousands: 2000 resamples of them took minutes), the normal
  interval of the log of the ratio (the delta method), which the
  bootstrap's tends to as processes grow, in time linear in them.
- Paired: statements timed in the same processes (sonde timeit runs the
  statements of one interpreter in each process, their values
  alternating) are compared process by process, so that what makes one
  process faster than the next falls out: each process gives the log of
  the ratio of the two statements' medians there (a value stretched by
  preemption does not move a median), the ratio is exp of the median of
  those, log_ratios and paired_ratio_ci (a bootstrap over processes) give
  it and its interval, and wilcoxon_signed_rank tests them (exact below
  50 processes when no two are equal, else the normal approximation with
  tie and continuity corrections).
"""

import math
import random
import statistics

_Z975 = statistics.NormalDist().inv_cdf(0.975)


def t975(df):
    """The 0.975 quantile of Student's t with df degrees of freedom
    (Cornish-Fisher expansion about the normal quantile, Abramowitz and
    Stegun 26.7.5; within 0.1% of the exact value from 3 degrees up, and
    the exact values below)."""
    if df <= 0:
        return float("inf")
    if df == 1:
        return 12.706204736174707
    if df == 2:
        return 4.302652729749464
    z = _Z975
    v = float(df)
    return (z + (z ** 3 + z) / (4 * v) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * v ** 2)
            + (3 * z ** 7 + 19 * z ** 5 + 17 * z ** 3 - 15 * z) / (384 * v ** 3)
            + (79 * z ** 9 + 776 * z ** 7 + 1482 * z ** 5 - 1920 * z ** 3 - 945 * z)
            / (92160 * v ** 4))


def mean_ci(units):
    """(low, high): the 95% interval of the mean of units (process means),
    cut at 0 (a time is not negative; few processes can reach below)."""
    n = len(units)
    m = statistics.fmean(units)
    if n < 2:
        return (m, m)
    half = t975(n - 1) * statistics.stdev(units) / math.sqrt(n)
    return (max(0.0, m - half), m + half)


def outliers(values):
    """How many values lie beyond 3 interquartile ranges of the quartiles."""
    if len(values) < 4:
        return 0
    q1, _, q3 = statistics.quantiles(values, n=4)
    spread = 3 * (q3 - q1)
    return sum(1 for v in values if v < q1 - spread or v > q3 + spread)


def _ranks(keys):
    """(ranks, ties): each key's rank from 1, tied keys sharing their mean
    rank, and the tie term: the sum of t**3 - t over groups of t ties."""
    order = sorted(range(len(keys)), key=keys.__getitem__)
    ranks = [0.0] * len(keys)
    ties = 0.0
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and keys[order[j + 1]] == keys[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2.0 + 1
        ties += (j - i + 1) ** 3 - (j - i + 1)
        i = j + 1
    return ranks, ties


def _two_sided(distance, var):
    """The normal approximation's two-sided p-value of a statistic that
    lies distance from its mean, with a continuity correction."""
    if var <= 0:
        return 1.0
    z = (distance - 0.5) / math.sqrt(var)
    return 1.0 if z <= 0 else math.erfc(z / math.sqrt(2))


def mann_whitney(a, b):
    """The two-sided p-value of the Mann-Whitney U test of a against b."""
    n1, n2 = len(a), len(b)
    if n1 == 0 or n2 == 0:
        return 1.0
    ranks, ties = _ranks(list(a) + list(b))
    u = sum(ranks[:n1]) - n1 * (n1 + 1) / 2.0
    n = n1 + n2
    var = n1 * n2 / 12.0 * ((n + 1) - ties / (n * (n - 1)))
    return _two_sided(abs(u - n1 * n2 / 2.0), var)


BOOTSTRAP_UNITS = 2000


def ratio_ci(a, b, resamples=2000, seed=1):
    """(low, high): the 95% percentile bootstrap interval of
    mean(a) / mean(b), resampling the units of each side; the delta
    method's past BOOTSTRAP_UNITS units."""
    na, nb = len(a), len(b)
    if na + nb > BOOTSTRAP_UNITS:
        return _log_ratio_ci(a, b)
    rng = random.Random(seed)
    ratios = []
    for _ in range(resamples):
        sa = math.fsum(a[rng.randrange(na)] for _ in range(na)) / na
        sb = math.fsum(b[rng.randrange(nb)] for _ in range(nb)) / nb
        ratios.append(sa / sb)
    ratios.sort()
    return (ratios[int(0.025 * resamples)], ratios[int(0.975 * resamples) - 1])


def _log_ratio_ci(a, b):
    """(low, high): the normal 95% interval of mean(a) / mean(b) on the log
    scale, the variance of the log of each mean by the delta method
    (var(x) / (n mean(x)**2))."""
    ma, mb = statistics.fmean(a), statistics.fmean(b)
    var = 0.0
    for units, m in ((a, ma), (b, mb)):
        if len(units) > 1:
            var += statistics.variance(units, m) / (len(units) * m * m)
    half = _Z975 * math.sqrt(var)
    ratio = ma / mb
    return (ratio * math.exp(-half), ratio * math.exp(half))


def _signed_rank_exact(n, w):
    """P(W+ <= w) for n untied, non-zero differences under the null (each
    sign equally likely): the count of subsets of the ranks 1..n whose sum
    is at most w, over 2**n."""
    top = n * (n + 1) // 2
    counts = [1] + [0] * top
    for rank in range(1, n + 1):
        for total in range(top, rank - 1, -1):
            counts[total] += counts[total - rank]
    return math.fsum(counts[:w + 1]) / 2.0 ** n


def log_ratios(a_runs, b_runs):
    """Per process i: log(median(a_runs[i]) / median(b_runs[i]))."""
    return [math.log(statistics.median(a) / statistics.median(b))
            for a, b in zip(a_runs, b_runs) if a and b and min(a) > 0 and min(b) > 0]


def wilcoxon_signed_rank(d):
    """The two-sided p-value of the signed-rank test that the differences
    d (e.g. log ratios) are centred on 0."""
    d = [x for x in d if x != 0]
    n = len(d)
    if n == 0:
        return 1.0
    ranks, ties = _ranks([abs(x) for x in d])
    w_plus = sum(r for r, x in zip(ranks, d) if x > 0)
    if ties == 0 and n < 50:
        w = min(w_plus, n * (n + 1) / 2.0 - w_plus)
        return min(1.0, 2 * _signed_rank_exact(n, int(round(w))))
    var = n * (n + 1) * (2 * n + 1) / 24.0 - ties / 48.0
    return _two_sided(abs(w_plus - n * (n + 1) / 4.0), var)


def paired_ratio_ci(d, resamples=2000, seed=1):
    """(low, high): the 95% percentile bootstrap interval of exp(median(d)),
    d the processes' log ratios, resampling processes."""
    rng = random.Random(seed)
    n = len(d)
    medians = sorted(statistics.median([d[rng.randrange(n)] for _ in range(n)])
                     for _ in range(resamples))
    return (math.exp(medians[int(0.025 * resamples)]),
            math.exp(medians[int(0.975 * resamples) - 1]))
