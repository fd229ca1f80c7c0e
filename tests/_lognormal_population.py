"""A LogNormal population with a binary secret, and its coupled datasets.

Shared by the tests of the bands' joint laws: drawn with numpy alone, so
the truth they simulate shares nothing with the library.
"""

import numpy as np
import pandas as pd

N = 105


def draw(rng, group, size):
    """LogNormal(0.3, 0.5) in the group, LogNormal(0, 1) outside, clipped."""
    return np.clip(rng.lognormal(0.3, 0.5, size) if group
                   else rng.lognormal(0.0, 1.0, size), 0, 20)


def reference(rng, size):
    """``size`` records of each group: column g (1 inside) and x."""
    g = np.repeat([1, 0], size)
    x = np.concatenate([draw(rng, 1, size), draw(rng, 0, size)])
    return pd.DataFrame({"g": g, "x": x})


def coupled_pairs(rng, draws, n=N, comonotone=False):
    """Datasets under a = 0.4 and b = 0.6: the moved records redrawn.

    ``comonotone``: each moved record's value in the group is its value
    outside at the same normal quantile (one uniform per moved record)
    rather than an independent draw.
    """
    k_in, moved = round(0.4 * n), round(0.2 * n)
    a = np.hstack([draw(rng, 1, (draws, k_in)),
                   draw(rng, 0, (draws, n - k_in))])
    b = a.copy()
    if comonotone:
        z = rng.standard_normal((draws, moved))
        a[:, k_in:k_in + moved] = np.clip(np.exp(z), 0, 20)
        b[:, k_in:k_in + moved] = np.clip(np.exp(0.3 + 0.5 * z), 0, 20)
    else:
        b[:, k_in:k_in + moved] = draw(rng, 1, (draws, moved))
    return a, b
