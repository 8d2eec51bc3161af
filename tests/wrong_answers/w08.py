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

WRONG = {
    "judge-claim": [
        (
            "calls claims.rule instead of writing it",
            CALLS_THE_RULE,
            "interval widened by 5 %",
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
}
