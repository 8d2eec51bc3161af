"""Wrong answers to solutions/08_choosing_exercises.py."""

ALWAYS_MINIMUM = """
def pad_to_pow2(tokens, minimum=8):
    batch, n = tokens.shape
    padded = np.zeros((batch, minimum), tokens.dtype)  # fine while n <= minimum only
    padded[:, :n] = tokens[:, :minimum]
    mask = np.zeros((batch, minimum), bool)
    mask[:, :n] = True
    return padded, mask
"""

STRICTLY_GREATER = """
def pad_to_pow2(tokens, minimum=8):
    batch, n = tokens.shape
    size = max(minimum, 1 << n.bit_length())  # 8 tokens become 16
    padded = np.zeros((batch, size), tokens.dtype)
    padded[:, :n] = tokens
    mask = np.zeros((batch, size), bool)
    mask[:, :n] = True
    return padded, mask
"""

NO_MINIMUM = """
def pad_to_pow2(tokens, minimum=8):
    batch, n = tokens.shape
    size = 1 << max(0, n - 1).bit_length()  # forgets the minimum
    padded = np.zeros((batch, size), tokens.dtype)
    padded[:, :n] = tokens
    mask = np.zeros((batch, size), bool)
    mask[:, :n] = True
    return padded, mask
"""

CALLS_THE_RULE = """
def decide(samples, threshold, contended=None):
    return claims.rule(samples, threshold, contended=contended)[0]
"""

QUARTILES = """
def decide(samples, threshold, contended=None):
    if not samples:
        raise ValueError("no samples")
    if len(samples) < MIN_RATIOS or contended:
        return "inconclusive"
    q1, q3 = claims.quartiles(samples)
    if (q3 - q1) / float(np.median(samples)) > MAX_SPREAD:
        return "inconclusive"
    if q1 >= threshold:
        return "holds"
    return "does not hold" if q3 < threshold else "inconclusive"
"""

NO_CAP = """
def max_new_shapes(n_requests, compile_s, jax_s, torch_s):
    spare = n_requests * (torch_s - jax_s)
    if spare < 0:
        return None
    return math.floor(spare / compile_s)  # more shapes than requests
"""

CEIL = """
def max_new_shapes(n_requests, compile_s, jax_s, torch_s):
    spare = n_requests * (torch_s - jax_s)
    if spare < 0:
        return None
    return min(n_requests, math.ceil(spare / compile_s))  # one shape too many
"""

ZERO_NOT_NONE = """
def max_new_shapes(n_requests, compile_s, jax_s, torch_s):
    spare = n_requests * (torch_s - jax_s)
    return min(n_requests, max(0, math.floor(spare / compile_s)))  # 0 when even K = 0 loses
"""

RATIOS_REVERSED = """
def measure_ratio(slow, fast, *, target_s=0.2):
    cmp = timing.compare({"slow": slow, "fast": fast}, target_s=target_s)
    samples = claims.paired_ratios(cmp.measurements["fast"].times, cmp.measurements["slow"].times)
    return claims.Measured(samples, "fast over slow", contention=cmp.contention)
"""

NO_CONTENTION = """
def measure_ratio(slow, fast, *, target_s=0.2):
    cmp = timing.compare({"slow": slow, "fast": fast}, target_s=target_s)
    samples = claims.paired_ratios(cmp.measurements["slow"].times, cmp.measurements["fast"].times)
    return claims.Measured(samples, "slow over fast")  # the contention is dropped
"""

RATIO_OF_MEDIANS = """
def measure_ratio(slow, fast, *, target_s=0.2):
    cmp = timing.compare({"slow": slow, "fast": fast}, target_s=target_s)
    ratio = cmp.measurements["slow"].median / cmp.measurements["fast"].median
    return claims.Measured([ratio], "slow over fast", contention=cmp.contention)  # one sample
"""

WRONG = {
    "judge-claim": [
        (
            "calls claims.rule instead of writing it",
            CALLS_THE_RULE,
            "interval widened by 15 %",
        ),
        (
            "the quartiles instead of the median's interval",
            QUARTILES,
            "not the quartiles",
        ),
    ],
    "pad-pow2": [
        ("always pads to the minimum", ALWAYS_MINIMUM, "next power of two"),
        ("next power strictly above n", STRICTLY_GREATER, "next power of two >= n"),
        ("forgets the minimum", NO_MINIMUM, "max(minimum"),
    ],
    "shape-budget": [
        ("no cap at n_requests", NO_CAP, "cap at n_requests"),
        ("rounds up", CEIL, "each shape costs compile_s"),
        ("0 instead of None when JAX loses", ZERO_NOT_NONE, "None (not 0)"),
    ],
    "measure-claim": [
        (
            "ratios fast / slow",
            RATIOS_REVERSED,
            "paired_ratios(slow times, fast times)",
        ),
        (
            "drops the contention",
            NO_CONTENTION,
            "contention = the comparison's contention",
        ),
        (
            "one ratio of medians",
            RATIO_OF_MEDIANS,
            "paired_ratios(slow times, fast times)",
        ),
    ],
}
