"""course_utils.claims.transforms: the third-derivative oracle."""

import numpy as np

from course_utils.claims import transforms


def test_third_derivative_oracle_matches_finite_differences():
    x = np.linspace(-2, 2, 41)
    h = 1e-3

    def f(x):
        return np.sin(x**2) + np.exp(np.cos(x))

    fd = (f(x + 2 * h) - 2 * f(x + h) + 2 * f(x - h) - f(x - 2 * h)) / (2 * h**3)
    np.testing.assert_allclose(
        transforms.third_derivative_analytic(x), fd, rtol=1e-4, atol=1e-4
    )
