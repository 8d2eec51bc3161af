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

MINIMUM_GREW = """
def pad_to_pow2(tokens, minimum=8):
    batch, n = tokens.shape
    size = 1 << max(n, minimum).bit_length()  # a minimum of 8 becomes 16
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

CALLS_THE_RULE_ALIAS = """
from course_utils.claims.verdict_rule import rule as _course_rule  # bound before the test runs


def decide(samples, threshold, contended=None):
    return _course_rule(samples, threshold, contended=contended)[0]
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

SHAPES_NEGATIVE = """
def max_new_shapes(n_requests, compile_s, jax_s, torch_s):
    spare = n_requests * (torch_s - jax_s)
    if compile_s <= 0:
        return n_requests
    return min(n_requests, spare // compile_s)  # -1.0 when even K = 0 loses
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

DECIDE_NO_EMPTY_ERROR = """
def decide(samples, threshold, contended=None):
    if len(samples) < MIN_RATIOS or contended:
        return "inconclusive"
    q1, q3 = claims.quartiles(samples)
    if (q3 - q1) / statistics.median(samples) > MAX_SPREAD:
        return "inconclusive"
    lo, hi = claims.median_interval(samples)
    if lo / (1 + RUN_TO_RUN) >= threshold:
        return "holds"
    if hi * (1 + RUN_TO_RUN) < threshold:
        return "does not hold"
    return "inconclusive"
"""

DECIDE_TIMES_085 = """
def decide(samples, threshold, contended=None):
    if not samples:
        raise ValueError("no samples")
    if len(samples) < MIN_RATIOS or contended:
        return "inconclusive"
    q1, q3 = claims.quartiles(samples)
    if (q3 - q1) / statistics.median(samples) > MAX_SPREAD:
        return "inconclusive"
    lo, hi = claims.median_interval(samples)
    if lo * (1 - RUN_TO_RUN) >= threshold:
        return "holds"
    if hi / (1 - RUN_TO_RUN) < threshold:
        return "does not hold"
    return "inconclusive"
"""

DECIDE_HI_NOT_WIDENED = """
def decide(samples, threshold, contended=None):
    if not samples:
        raise ValueError("no samples")
    if len(samples) < MIN_RATIOS or contended:
        return "inconclusive"
    q1, q3 = claims.quartiles(samples)
    if (q3 - q1) / statistics.median(samples) > MAX_SPREAD:
        return "inconclusive"
    lo, hi = claims.median_interval(samples)
    if lo / (1 + RUN_TO_RUN) >= threshold:
        return "holds"
    if hi < threshold:
        return "does not hold"
    return "inconclusive"
"""

SHAPES_ROUND = """
def max_new_shapes(n_requests, compile_s, jax_s, torch_s):
    spare = n_requests * (torch_s - jax_s)
    if spare < 0:
        return None
    return min(n_requests, round(spare / compile_s))  # to the nearest shape
"""

SHAPES_NONE_AT_TIE = """
def max_new_shapes(n_requests, compile_s, jax_s, torch_s):
    spare = n_requests * (torch_s - jax_s)
    if spare <= 0:  # a tie is not a loss
        return None
    return min(n_requests, math.floor(spare / compile_s + 1e-12))
"""

SHAPES_FLOOR_DIVISION = """
def max_new_shapes(n_requests, compile_s, jax_s, torch_s):
    spare = n_requests * (torch_s - jax_s)
    if spare < 0:
        return None
    return min(n_requests, (spare + 1e-12) // compile_s)  # a float: 6.0
"""

PAD_FLOAT_TOKENS = """
def pad_to_pow2(tokens, minimum=8):
    batch, n = tokens.shape
    size = max(minimum, 1 << max(0, n - 1).bit_length())
    padded = np.zeros((batch, size))  # float64, whatever the tokens were
    padded[:, :n] = tokens
    mask = np.zeros((batch, size), bool)
    mask[:, :n] = True
    return padded, mask
"""

PAD_INT_MASK = """
def pad_to_pow2(tokens, minimum=8):
    batch, n = tokens.shape
    size = max(minimum, 1 << max(0, n - 1).bit_length())
    padded = np.zeros((batch, size), tokens.dtype)
    padded[:, :n] = tokens
    mask = np.zeros((batch, size), np.int32)  # 0/1, not a boolean mask
    mask[:, :n] = 1
    return padded, mask
"""

PAD_WITH_ONES = """
def pad_to_pow2(tokens, minimum=8):
    batch, n = tokens.shape
    size = max(minimum, 1 << max(0, n - 1).bit_length())
    padded = np.ones((batch, size), tokens.dtype)  # a pad id of 1; the mask hides it
    padded[:, :n] = tokens
    mask = np.zeros((batch, size), bool)
    mask[:, :n] = True
    return padded, mask
"""

PAD_MASK_FROM_VALUES = """
def pad_to_pow2(tokens, minimum=8):
    batch, n = tokens.shape
    size = max(minimum, 1 << max(0, n - 1).bit_length())
    padded = np.zeros((batch, size), tokens.dtype)
    padded[:, :n] = tokens
    return padded, padded != 0  # a real token 0 reads as padding
"""

PAD_TORCH = """
def pad_to_pow2(tokens, minimum=8):
    batch, n = tokens.shape
    size = max(minimum, 1 << max(0, n - 1).bit_length())
    padded = torch.zeros((batch, size), dtype=torch.int32)  # PyTorch, not NumPy
    padded[:, :n] = torch.from_numpy(tokens)
    mask = torch.zeros((batch, size), dtype=torch.bool)
    mask[:, :n] = True
    return padded, mask
"""

MEASURE_SORTED = """
def measure_ratio(slow, fast, *, target_s=0.2):
    cmp = timing.compare({"slow": slow, "fast": fast}, target_s=target_s)
    samples = claims.paired_ratios(  # each side sorted: the rounds' pairs are lost
        sorted(cmp.measurements["slow"].times), sorted(cmp.measurements["fast"].times)
    )
    return claims.Measured(samples, "slow over fast", contention=cmp.contention)
"""

MEASURE_OWN_TIMER = """
def measure_ratio(slow, fast, *, target_s=0.2):
    def clock(fn):
        start = time.perf_counter()
        fn()
        return time.perf_counter() - start

    rounds = [(clock(slow), clock(fast)) for _ in range(10)]  # a timer of its own
    samples = [s / f for s, f in rounds]
    return claims.Measured(samples, "slow over fast", contention={"reason": None})
"""

MEASURE_NO_TARGET = """
def measure_ratio(slow, fast, *, target_s=0.2):
    cmp = timing.compare({"slow": slow, "fast": fast})  # target_s not passed on
    samples = claims.paired_ratios(cmp.measurements["slow"].times, cmp.measurements["fast"].times)
    return claims.Measured(samples, "slow over fast", contention=cmp.contention)
"""

MEASURE_NO_WHAT = """
def measure_ratio(slow, fast, *, target_s=0.2):
    cmp = timing.compare({"slow": slow, "fast": fast}, target_s=target_s)
    samples = claims.paired_ratios(cmp.measurements["slow"].times, cmp.measurements["fast"].times)
    return claims.Measured(samples, "", contention=cmp.contention)
"""

PAD_LEFT = """
def pad_to_pow2(tokens, minimum=8):
    batch, n = tokens.shape
    size = max(minimum, 1 << max(0, n - 1).bit_length())
    padded = np.zeros((batch, size), tokens.dtype)
    padded[:, size - n :] = tokens  # zeros first, the tokens at the end
    mask = np.zeros((batch, size), bool)
    mask[:, size - n :] = True
    return padded, mask
"""

SHAPES_PER_REQUEST = """
def max_new_shapes(n_requests, compile_s, jax_s, torch_s):
    spare = torch_s - jax_s  # the saving of one request, not of all of them
    if spare < 0:
        return None
    return min(n_requests, math.floor(spare / compile_s))
"""

MEASURE_MADE_UP_CONTENTION = """
def measure_ratio(slow, fast, *, target_s=0.2):
    cmp = timing.compare({"slow": slow, "fast": fast}, target_s=target_s)
    samples = claims.paired_ratios(cmp.measurements["slow"].times, cmp.measurements["fast"].times)
    return claims.Measured(samples, "slow over fast", contention={"reason": None})  # not the comparison's
"""


def _decide(
    few="len(samples) < MIN_RATIOS", centre="statistics.median", holds=None, fails=None
):
    """The master's decide with one step changed: the count, the spread's centre or a test."""
    holds = holds or "lo / (1 + RUN_TO_RUN) >= threshold"
    fails = fails or "hi * (1 + RUN_TO_RUN) < threshold"
    return f"""
def decide(samples, threshold, contended=None):
    if not samples:
        raise ValueError("no samples")
    if {few} or contended:
        return "inconclusive"
    q1, q3 = claims.quartiles(samples)
    if (q3 - q1) / {centre}(samples) > MAX_SPREAD:
        return "inconclusive"
    lo, hi = claims.median_interval(samples)
    if {holds}:
        return "holds"
    if {fails}:
        return "does not hold"
    return "inconclusive"
"""


DECIDE_SIX_TOO_FEW = _decide(few="len(samples) <= MIN_RATIOS")
DECIDE_MEDIAN_ONLY = _decide(
    holds="statistics.median(samples) >= threshold",
    fails="statistics.median(samples) < threshold",
)
DECIDE_STRICT_HOLDS = _decide(holds="lo / (1 + RUN_TO_RUN) > threshold")
DECIDE_NOT_HOLD_AT_BAR = _decide(fails="hi * (1 + RUN_TO_RUN) <= threshold")
DECIDE_WIDEN_BY_ADDING = _decide(
    holds="lo - RUN_TO_RUN >= threshold", fails="hi + RUN_TO_RUN < threshold"
)
DECIDE_SPREAD_OVER_MEAN = _decide(centre="statistics.mean")

# The IQR itself, not over the median: a centre of 1 leaves the spread in x.
DECIDE_SPREAD_IN_X = _decide(centre="(lambda samples: 1.0)")
# torch.median returns the lower of the two middle values for an even count.
DECIDE_TORCH_MEDIAN = _decide(
    centre="(lambda samples: torch.tensor(samples).median().item())"
)
# "Below 1 is the opposite" read as a test of its own, whatever the bar.
DECIDE_BELOW_ONE_FAILS = _decide(
    fails="hi * (1 + RUN_TO_RUN) < threshold or hi * (1 + RUN_TO_RUN) < 1"
)
# A spread of exactly MAX_SPREAD counted as noisy: >= where the rule says above.
DECIDE_SPREAD_AT_MAX = _decide().replace("> MAX_SPREAD", ">= MAX_SPREAD")
# "Does not hold" read as "the opposite happened" only: short of the bar stays undecided.
DECIDE_OPPOSITE_ONLY = _decide(fails="hi * (1 + RUN_TO_RUN) < 1")
# "Holds" read as "the interval reaches the bar": its high end held against it.
DECIDE_HIGH_END_HOLDS = _decide(holds="hi * (1 + RUN_TO_RUN) >= threshold")
# The interval's ends swapped: holds from the high end, does not hold from the low end.
DECIDE_ENDS_SWAPPED = _decide(
    holds="hi * (1 + RUN_TO_RUN) >= threshold",
    fails="lo / (1 + RUN_TO_RUN) < threshold",
)

SHAPES_DIVIDES_BY_ZERO = """
def max_new_shapes(n_requests, compile_s, jax_s, torch_s):
    spare = n_requests * (torch_s - jax_s)
    if spare < 0:
        return None
    return min(n_requests, math.floor(spare / compile_s))  # ZeroDivisionError at compile_s 0
"""

SHAPES_STRICT = """
def max_new_shapes(n_requests, compile_s, jax_s, torch_s):
    if jax_s > torch_s:
        return None
    k = 0
    while k < n_requests and (k + 1) * compile_s + n_requests * jax_s < n_requests * torch_s:
        k += 1  # < where the task says <=: an exact fit is left out
    return k
"""

PAD_MASK_ON_PADDING = """
def pad_to_pow2(tokens, minimum=8):
    batch, n = tokens.shape
    size = max(minimum, 1 << max(0, n - 1).bit_length())
    padded = np.zeros((batch, size), tokens.dtype)
    padded[:, :n] = tokens
    mask = np.ones((batch, size), bool)
    mask[:, :n] = False  # True on the padding, as torch's key_padding_mask
    return padded, mask
"""

MEASURE_CONTENTION_FLAG = """
def measure_ratio(slow, fast, *, target_s=0.2):
    cmp = timing.compare({"slow": slow, "fast": fast}, target_s=target_s)
    samples = claims.paired_ratios(cmp.measurements["slow"].times, cmp.measurements["fast"].times)
    return claims.Measured(samples, "slow over fast", contention=cmp.contention.contended)  # a bool
"""

DECIDE_MEAN_INTERVAL = """
def decide(samples, threshold, contended=None):
    if not samples:
        raise ValueError("no samples")
    if len(samples) < MIN_RATIOS or contended:
        return "inconclusive"
    q1, q3 = claims.quartiles(samples)
    if (q3 - q1) / statistics.median(samples) > MAX_SPREAD:
        return "inconclusive"
    mean = statistics.mean(samples)  # a t-style interval of the mean, not the median's
    half = 1.96 * statistics.stdev(samples) / len(samples) ** 0.5
    lo, hi = mean - half, mean + half
    if lo / (1 + RUN_TO_RUN) >= threshold:
        return "holds"
    if hi * (1 + RUN_TO_RUN) < threshold:
        return "does not hold"
    return "inconclusive"
"""

PAD_ADDITIVE_MASK = """
def pad_to_pow2(tokens, minimum=8):
    batch, n = tokens.shape
    size = max(minimum, 1 << max(0, n - 1).bit_length())
    padded = np.zeros((batch, size), tokens.dtype)
    padded[:, :n] = tokens
    mask = np.full((batch, size), -np.inf, np.float32)  # PyTorch's additive attn_mask
    mask[:, :n] = 0.0
    return padded, mask
"""

SHAPES_FREE_COMPILE_FIRST = """
def max_new_shapes(n_requests, compile_s, jax_s, torch_s):
    if compile_s == 0:
        return n_requests  # decided before asking whether JAX is faster at all
    spare = n_requests * (torch_s - jax_s)
    if spare < 0:
        return None
    return min(n_requests, math.floor(spare / compile_s + 1e-12))
"""

PAD_MINIMUM_AS_IS = """
def pad_to_pow2(tokens, minimum=8):
    batch, n = tokens.shape
    size = max(minimum, 1 << max(0, n - 1).bit_length())  # a minimum of 6 stays 6
    padded = np.zeros((batch, size), tokens.dtype)
    padded[:, :n] = tokens
    mask = np.zeros((batch, size), bool)
    mask[:, :n] = True
    return padded, mask
"""

MEASURE_CHECK_OFF = """
def measure_ratio(slow, fast, *, target_s=0.2):
    cmp = timing.compare({"slow": slow, "fast": fast}, check=False, target_s=target_s)
    samples = claims.paired_ratios(cmp.measurements["slow"].times, cmp.measurements["fast"].times)
    return claims.Measured(samples, "slow over fast", contention=cmp.contention)
"""

# The spread as the standard deviation over the median: an outlier round inflates it.
DECIDE_SPREAD_STDEV = _decide().replace(
    "(q3 - q1) / statistics.median(samples)",
    "statistics.stdev(samples) / statistics.median(samples)",
)
# statistics.quantiles' default method (exclusive), not claims.quartiles' (inclusive).
DECIDE_QUARTILES_EXCLUSIVE = _decide().replace(
    "q1, q3 = claims.quartiles(samples)",
    "q1, _, q3 = statistics.quantiles(samples, n=4)",
)

SHAPES_COMPILE_REPLACES_CALL = """
def max_new_shapes(n_requests, compile_s, jax_s, torch_s):
    # a request that compiles costs compile_s instead of jax_s
    spare = n_requests * (torch_s - jax_s)
    if spare < 0:
        return None
    if compile_s <= jax_s:
        return n_requests
    return min(n_requests, math.floor(spare / (compile_s - jax_s) + 1e-12))
"""

SHAPES_COMPILE_REPLACES_CALL_UNGUARDED = """
def max_new_shapes(n_requests, compile_s, jax_s, torch_s):
    spare = n_requests * (torch_s - jax_s)
    if spare < 0:
        return None
    return min(n_requests, int(spare // (compile_s - jax_s)))  # negative when compile_s < jax_s
"""

PAD_MASK_FIRST = """
def pad_to_pow2(tokens, minimum=8):
    batch, n = tokens.shape
    size = 1 << max(0, max(n, minimum) - 1).bit_length()
    padded = np.zeros((batch, size), tokens.dtype)
    padded[:, :n] = tokens
    mask = np.zeros((batch, size), bool)
    mask[:, :n] = True
    return mask, padded
"""

PAD_SEQUENCE_FIRST = """
def pad_to_pow2(tokens, minimum=8):
    n, batch = tokens.shape  # nn.Transformer's default (sequence, batch) layout
    size = 1 << max(0, max(n, minimum) - 1).bit_length()
    padded = np.zeros((size, batch), tokens.dtype)
    padded[:n] = tokens
    mask = np.zeros((size, batch), bool)
    mask[:n] = True
    return padded, mask
"""

PAD_MASK_ONE_ROW = """
def pad_to_pow2(tokens, minimum=8):
    batch, n = tokens.shape
    size = 1 << max(0, max(n, minimum) - 1).bit_length()
    padded = np.zeros((batch, size), tokens.dtype)
    padded[:, :n] = tokens
    return padded, np.arange(size) < n  # (size,): no batch axis
"""

MEASURE_COMPARE_EACH = """
def measure_ratio(slow, fast, *, target_s=0.2):
    a = timing.compare({"slow": slow}, target_s=target_s)
    b = timing.compare({"fast": fast}, target_s=target_s)
    samples = claims.paired_ratios(a.measurements["slow"].times, b.measurements["fast"].times)
    return claims.Measured(samples, "slow over fast", contention=a.contention)
"""


# The whole range, lowest to highest ratio, as the interval: right only for few ratios.
DECIDE_RANGE_INTERVAL = _decide().replace(
    "lo, hi = claims.median_interval(samples)", "lo, hi = min(samples), max(samples)"
)

SHAPES_FLOOR_UNROUNDED = """
def max_new_shapes(n_requests, compile_s, jax_s, torch_s):
    spare = n_requests * (torch_s - jax_s)
    if spare < 0:
        return None
    if compile_s == 0:
        return n_requests
    return min(n_requests, math.floor(spare / compile_s))  # 9.999999999999996 floors to 9
"""


PAD_MASK_SHARED_ROW = """
def pad_to_pow2(tokens, minimum=8):
    batch, n = tokens.shape
    size = 1 << max(0, max(n, minimum) - 1).bit_length()
    padded = np.zeros((batch, size), tokens.dtype)
    padded[:, :n] = tokens
    mask = (np.arange(size) < n)[None, :]  # one row, left to broadcast over the batch
    return padded, mask
"""

SHAPES_NOT_FLOORED = """
def max_new_shapes(n_requests, compile_s, jax_s, torch_s):
    spare = n_requests * (torch_s - jax_s)
    if spare < 0:
        return None
    if compile_s == 0:
        return n_requests
    return min(n_requests, spare / compile_s)  # not rounded down: 6.25 shapes
"""

SHAPES_LOOP_CAPPED_AFTER = """
def max_new_shapes(n_requests, compile_s, jax_s, torch_s):
    if jax_s > torch_s:
        return None
    k = 0
    while (k + 1) * compile_s + n_requests * jax_s <= n_requests * torch_s:
        k += 1  # never stops when compile_s is 0
    return min(k, n_requests)  # the cap comes after the loop
"""


DECIDE_RETURNS_TUPLE = _decide().replace(
    'return "holds"', 'return "holds", (lo, hi)'
)  # the interval returned with the word, as claims.rule does

SHAPES_NUMPY_FLOOR = """
def max_new_shapes(n_requests, compile_s, jax_s, torch_s):
    spare = n_requests * (torch_s - jax_s)
    if spare < 0:
        return None
    if compile_s <= 0:
        return n_requests
    return min(n_requests, np.floor(spare / compile_s + 1e-12))  # a numpy.float64
"""

SHAPES_NUMPY_INT = """
def max_new_shapes(n_requests, compile_s, jax_s, torch_s):
    spare = n_requests * (torch_s - jax_s)
    if spare < 0:
        return None
    if compile_s <= 0:
        return n_requests
    return min(n_requests, np.floor(spare / compile_s + 1e-12).astype(int))  # a numpy.int64
"""

SHAPES_TORCH_FLOOR = """
def max_new_shapes(n_requests, compile_s, jax_s, torch_s):
    spare = n_requests * (torch_s - jax_s)
    if spare < 0:
        return None
    if compile_s <= 0:
        return n_requests
    return min(n_requests, torch.floor(torch.tensor(spare / compile_s + 1e-12)).int())  # a tensor
"""

PAD_JAX_ARRAYS = """
def pad_to_pow2(tokens, minimum=8):
    batch, n = tokens.shape
    size = 1 << max(0, max(n, minimum) - 1).bit_length()
    padded = jnp.zeros((batch, size), tokens.dtype).at[:, :n].set(tokens)  # JAX arrays out
    mask = jnp.zeros((batch, size), bool).at[:, :n].set(True)
    return padded, mask
"""

PAD_JAX_ITEM_ASSIGNMENT = """
def pad_to_pow2(tokens, minimum=8):
    batch, n = tokens.shape
    size = 1 << max(0, max(n, minimum) - 1).bit_length()
    padded = jnp.zeros((batch, size), tokens.dtype)
    padded[:, :n] = tokens  # NumPy's (and PyTorch's) item assignment on a JAX array
    mask = jnp.zeros((batch, size), bool)
    mask[:, :n] = True
    return padded, mask
"""

PAD_IN_PLACE = """
def pad_to_pow2(tokens, minimum=8):
    batch, n = tokens.shape
    size = 1 << max(0, max(n, minimum) - 1).bit_length()
    tokens.resize((batch, size), refcheck=False)  # grows the caller's array in place
    mask = np.zeros((batch, size), bool)
    mask[:, :n] = True
    return tokens, mask
"""

PAD_BATCH_AXIS = """
def pad_to_pow2(tokens, minimum=8):
    batch, n = tokens.shape
    size = 1 << max(0, max(n, minimum) - 1).bit_length()
    padded = np.pad(tokens, ((0, size - n), (0, 0)))  # pads axis 0, the batch
    mask = np.pad(np.ones_like(tokens, bool), ((0, size - n), (0, 0)))
    return padded, mask
"""

MEASURE_NUMPY_SAMPLES = """
def measure_ratio(slow, fast, *, target_s=0.2):
    cmp = timing.compare({"slow": slow, "fast": fast}, target_s=target_s)
    s, f = np.array(cmp.measurements["slow"].times), np.array(cmp.measurements["fast"].times)
    return claims.Measured(s / f, "slow over fast", contention=cmp.contention)  # an ndarray
"""

MEASURE_TORCH_SAMPLES = """
def measure_ratio(slow, fast, *, target_s=0.2):
    cmp = timing.compare({"slow": slow, "fast": fast}, target_s=target_s)
    s = torch.tensor(cmp.measurements["slow"].times)
    f = torch.tensor(cmp.measurements["fast"].times)
    return claims.Measured(s / f, "slow over fast", contention=cmp.contention)  # a tensor
"""

WRONG = {
    "judge-claim": [
        (
            "calls claims.rule instead of writing it",
            CALLS_THE_RULE,
            "must apply the rule itself",
        ),
        (
            "calls the course's rule under another name",
            CALLS_THE_RULE_ALIAS,
            "must apply the rule itself",
        ),
        (
            "the quartiles instead of the median's interval",
            QUARTILES,
            "read off the quartiles",
        ),
        (
            "no ValueError for no samples",
            DECIDE_NO_EMPTY_ERROR,
            "that is an error (ValueError)",
        ),
        (
            "widens by * (1 - 15 %) and / (1 - 15 %)",
            DECIDE_TIMES_085,
            "the low end was widened by too much",
        ),
        ("widens lo only", DECIDE_HI_NOT_WIDENED, "the high end was not widened"),
        (
            "six ratios taken for too few",
            DECIDE_SIX_TOO_FEW,
            "MIN_RATIOS ratios are enough",
        ),
        (
            "the median alone against the bar",
            DECIDE_MEDIAN_ONLY,
            "the median alone was held",
        ),
        ("> instead of >= for holds", DECIDE_STRICT_HOLDS, "exactly at the bar holds"),
        (
            "<= instead of < for does not hold",
            DECIDE_NOT_HOLD_AT_BAR,
            "exactly at the bar is not short",
        ),
        ("widens by adding 0.15", DECIDE_WIDEN_BY_ADDING, "not 0.15 added"),
        (
            "the spread over the mean",
            DECIDE_SPREAD_OVER_MEAN,
            "the IQR over the median",
        ),
        ("the spread as the IQR in x", DECIDE_SPREAD_IN_X, "the IQR itself, in x"),
        (
            "torch.median's lower middle value as the spread's centre",
            DECIDE_TORCH_MEDIAN,
            "what torch.median returns",
        ),
        (
            "an interval below 1 fails whatever the bar",
            DECIDE_BELOW_ONE_FAILS,
            "a bar of 1x or more",
        ),
        (
            "a spread of exactly MAX_SPREAD taken for noisy",
            DECIDE_SPREAD_AT_MAX,
            "exactly MAX_SPREAD is not above it",
        ),
        (
            "does not hold only when the interval is below 1",
            DECIDE_OPPOSITE_ONLY,
            "not only one entirely below 1",
        ),
        (
            "a mean's interval instead of the median's",
            DECIDE_MEAN_INTERVAL,
            "the interval was the mean's",
        ),
        (
            "the spread as the standard deviation over the median",
            DECIDE_SPREAD_STDEV,
            "not the standard deviation",
        ),
        (
            "statistics.quantiles' exclusive quartiles",
            DECIDE_QUARTILES_EXCLUSIVE,
            "are not claims.quartiles'",
        ),
        (
            "the whole range as the median's interval",
            DECIDE_RANGE_INTERVAL,
            "the interval was the whole range",
        ),
        (
            "holds when the interval's high end reaches the bar",
            DECIDE_HIGH_END_HOLDS,
            "the interval's high end was held",
        ),
        (
            "the interval's ends swapped",
            DECIDE_ENDS_SWAPPED,
            "the interval's high end was held",
        ),
        (
            "the verdict returned with its interval",
            DECIDE_RETURNS_TUPLE,
            "the verdict is one string alone",
        ),
    ],
    "pad-pow2": [
        (
            "always pads to the minimum",
            ALWAYS_MINIMUM,
            "tokens were cut off",
        ),
        (
            "next power strictly above n",
            STRICTLY_GREATER,
            "already a power of two grew",
        ),
        (
            "next power strictly above the larger of n and the minimum",
            MINIMUM_GREW,
            "a minimum already a power of two grew",
        ),
        ("forgets the minimum", NO_MINIMUM, "came out below minimum"),
        (
            "float64 tokens (np.zeros' default)",
            PAD_FLOAT_TOKENS,
            "the padded tokens are float64, the request int32",
        ),
        ("a 0/1 integer mask", PAD_INT_MASK, "not boolean"),
        ("pads with ones", PAD_WITH_ONES, "not zeros"),
        (
            "the mask read off the values (padded != 0)",
            PAD_MASK_FROM_VALUES,
            "padding cannot be told by its value",
        ),
        ("returns torch tensors", PAD_TORCH, "returns NumPy arrays"),
        ("pads on the left", PAD_LEFT, "the real tokens sit at the end"),
        (
            "the mask True on the padding",
            PAD_MASK_ON_PADDING,
            "key_padding_mask convention",
        ),
        (
            "an additive float mask (0 and -inf)",
            PAD_ADDITIVE_MASK,
            "PyTorch's additive attn_mask",
        ),
        (
            "a minimum that is not a power of two kept as the length",
            PAD_MINIMUM_AS_IS,
            "next power of two at or above it",
        ),
        ("returns (mask, padded)", PAD_MASK_FIRST, "returned the mask first"),
        (
            "tokens read as (sequence, batch)",
            PAD_SEQUENCE_FIRST,
            "the first axis grew",
        ),
        ("a mask without the batch axis", PAD_MASK_ONE_ROW, "one row per request"),
        (
            "one mask row shared by the batch",
            PAD_MASK_SHARED_ROW,
            "one row shared by the batch",
        ),
        ("JAX arrays returned", PAD_JAX_ARRAYS, "returns NumPy arrays"),
        (
            "item assignment on a JAX array",
            PAD_JAX_ITEM_ASSIGNMENT,
            "JAX arrays are immutable",
        ),
        (
            "the caller's tokens grown in place",
            PAD_IN_PLACE,
            "changed the caller's tokens",
        ),
        ("np.pad on the batch axis", PAD_BATCH_AXIS, "the first axis grew"),
    ],
    "shape-budget": [
        ("no cap at n_requests", NO_CAP, "K cannot exceed it"),
        ("rounds up", CEIL, "one shape too many"),
        ("0 instead of None when JAX loses", ZERO_NOT_NONE, "got 0. JAX is slower"),
        ("a negative count when JAX loses", SHAPES_NEGATIVE, "got -1.0. JAX is slower"),
        ("rounds to the nearest shape", SHAPES_ROUND, "rounded up to 3"),
        ("None at a tie", SHAPES_NONE_AT_TIE, "a tie was taken for a loss"),
        ("a float from //", SHAPES_FLOOR_DIVISION, "a plain int"),
        (
            "the saving of one request only",
            SHAPES_PER_REQUEST,
            "counted on every one of the requests",
        ),
        ("< for <=: an exact fit left out", SHAPES_STRICT, "fits exactly"),
        (
            "divides by a compile_s of 0",
            SHAPES_DIVIDES_BY_ZERO,
            "dividing by compile_s fails when it is 0",
        ),
        (
            "compile_s == 0 decided before JAX's saving",
            SHAPES_FREE_COMPILE_FIRST,
            "decided before the saving was",
        ),
        (
            "a compiling request costs compile_s instead of jax_s",
            SHAPES_COMPILE_REPLACES_CALL,
            "counted as one of JAX's n_requests calls",
        ),
        (
            "a compiling request costs compile_s instead of jax_s, with no guard for cheap compilations",
            SHAPES_COMPILE_REPLACES_CALL_UNGUARDED,
            "counted as one of JAX's n_requests calls",
        ),
        (
            "floors a quotient float rounding left under a whole number",
            SHAPES_FLOOR_UNROUNDED,
            "float rounding cut a shape",
        ),
        (
            "a part of a shape, not rounded down",
            SHAPES_NOT_FLOORED,
            "a part of a shape",
        ),
        (
            "a counting loop capped after it ends",
            SHAPES_LOOP_CAPPED_AFTER,
            "a cap applied after the loop comes too late",
        ),
        ("numpy.floor's float64", SHAPES_NUMPY_FLOOR, "NumPy or PyTorch floor"),
        ("numpy.floor as an int64", SHAPES_NUMPY_INT, "numpy.int64"),
        ("a torch.floor tensor", SHAPES_TORCH_FLOOR, "torch.Tensor"),
    ],
    "measure-claim": [
        (
            "ratios fast / slow",
            RATIOS_REVERSED,
            "the wrong way up",
        ),
        (
            "drops the contention",
            NO_CONTENTION,
            "carries no contention record",
        ),
        (
            "one ratio of medians",
            RATIO_OF_MEDIANS,
            "one number in all",
        ),
        ("target_s not passed on", MEASURE_NO_TARGET, "did not pass it on"),
        ("an empty description", MEASURE_NO_WHAT, "`what` is empty"),
        ("each side sorted before pairing", MEASURE_SORTED, "same round's fast time"),
        ("a timer of its own", MEASURE_OWN_TIMER, "timing.compare was never called"),
        (
            "a contention record made up",
            MEASURE_MADE_UP_CONTENTION,
            "not the one the comparison made",
        ),
        (
            "the contended flag as the record",
            MEASURE_CONTENTION_FLAG,
            "contention is a bool",
        ),
        (
            "timing.compare's check turned off",
            MEASURE_CHECK_OFF,
            "was turned off",
        ),
        (
            "one timing.compare per variant",
            MEASURE_COMPARE_EACH,
            "one comparison times both variants",
        ),
        ("samples as a NumPy array", MEASURE_NUMPY_SAMPLES, "a list of floats"),
        ("samples as a torch tensor", MEASURE_TORCH_SAMPLES, "a list of floats"),
    ],
}
