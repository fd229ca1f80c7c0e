"""The trimmed mean of a bounded column over the reference's confidence bands.

The trimmed mean T of n values cuts g = int(proportiontocut * n) from each
end and averages the n - 2g others. One value moving by d >= 0 moves every
order statistic up by 0 to d, and all n of them by d in total (their sum is
the values'), so the n - 2g kept ones by d at most in total: T moves by
d / (n - 2g) at most, whatever the other values
(:meth:`~skattr._kinds.TrimmedMean.record_weight`). Under the swap coupling
(:mod:`skattr.laws._band`) only the moved records' values differ, each pair
by U(u) at most, so |T(X) - T(X')| <= sum of the moved records' U / (n - 2g):
the mean's bound with its weight 1 / n replaced by 1 / (n - 2g). The
:class:`~skattr.laws._band.BandLaw` computes it, and everything it certifies
for a mean (W-infinity, (W, delta)-closeness, Gaussian noise through the
coupling) holds for the trimmed mean with that weight.

That sum may exceed the clipping range's width, high - low (each of the
moved records up to the width, over n - 2g that may be far fewer), where
no trimmed mean of values in [low, high] moves further: both coupled
values lie in the range. The band law's W-infinity and (W, delta)-closeness
take the smaller of the two (:class:`~skattr.laws._band.BandLaw`, Notes;
the kind's ``output_range`` is the clipping range).
"""

from __future__ import annotations

from skattr._kinds import TrimmedMean, register_law
from skattr.laws._band import BandLaw

__all__ = ["trimmed_band_law"]


@register_law("band", TrimmedMean)
def trimmed_band_law(stat, fields: dict) -> BandLaw:
    """Return the band law of one trimmed mean: the mean's, weighted 1 / (n - 2g)."""
    return BandLaw(**fields)
