"""The infinity-Wasserstein distance and (W, delta)-closeness, computed exactly.

These are the sensitivities of the Wasserstein Mechanism (Zhang et al. Alg 4;
Chen & Ohrimenko Thm 3.1) and of the Approximate Wasserstein Mechanism (Chen &
Ohrimenko Def 3.2, Thm 3.2-3.3).
"""

from skattr.utils._public import public_dir
from skattr.wasserstein._distance import (
    approximate_wasserstein_bound,
    w_infinity,
    wd_closeness,
)

__all__ = ["w_infinity", "wd_closeness", "approximate_wasserstein_bound"]

__dir__ = public_dir(__all__)
