"""The Gaussian model of F, as a mechanism's ``law=`` choice with its options."""

from __future__ import annotations

from dataclasses import dataclass

from skattr._persistence import persistable
from skattr.exceptions import InvalidParameterError

__all__ = ["AssumeGaussian"]

SAMPLINGS = ("without-replacement", "with-replacement")
COVARIANCES = ("certify", "assume-equal")


@persistable
@dataclass(frozen=True)
class AssumeGaussian:
    """Take F(X) given each secret as Gaussian with the modelled moments.

    Pass as ``law=`` to the Attribute-Private Gaussian Mechanism or an
    Expected Value mechanism; ``law="gaussian"`` is ``AssumeGaussian()``.
    The theorems of both papers assume it (the release records the
    assumption): it holds approximately for means over many records, and
    never certifies a noiseless release of fewer than 30 records. Its two
    options shape the moments and exist for the Gaussian model only (the
    exact laws draw records with replacement and are not summarised by
    covariances).

    Parameters
    ----------
    sampling : {"without-replacement", "with-replacement"}, \
default="without-replacement"
        How a private dataset of n records is modelled as drawn from the
        reference records (for every ``theta`` but ``"gaussian"`` and an
        ExpertTheta): it sets the variance of the moments (the finite
        population correction, or none).
    covariances : {"certify", "assume-equal"}, default="certify"
        The theorems assume the laws under the two secrets are translations
        (equal covariances). ``"certify"``: when the modelled covariances
        differ, the noise is certified by the exact privacy profile of two
        Gaussians with unequal covariances. ``"assume-equal"``: take the
        assumption as the papers' experiments do (Chen & Ohrimenko App. C.1);
        the release records it with the size of the difference.

    Examples
    --------
    >>> import skattr
    >>> from skattr.datasets import make_hospital
    >>> from skattr.laws import AssumeGaussian
    >>> secret = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])
    >>> mech = skattr.mechanisms.ExpectedValueGaussian(
    ...     query=skattr.Query.mean(["weight", "height"]), secret=secret,
    ...     law=AssumeGaussian(covariances="assume-equal"), theta="moments",
    ... ).fit(make_hospital(2000, random_state=0))
    >>> for a in mech.plan(n=50).assumed:
    ...     if a.opt_in:
    ...         print(a.option)
    law=AssumeGaussian(covariances='assume-equal')
    theta='moments'
    law='gaussian'
    """

    sampling: str = "without-replacement"
    covariances: str = "certify"

    def __post_init__(self):
        for name, allowed in (("sampling", SAMPLINGS),
                              ("covariances", COVARIANCES)):
            value = getattr(self, name)
            if not isinstance(value, str) or value not in allowed:
                raise InvalidParameterError(
                    f"AssumeGaussian({name}=...) must be one of "
                    f"{', '.join(map(repr, allowed))}; got {value!r}.")

    def __repr__(self) -> str:
        # Only what differs from the defaults, as scikit-learn prints estimators.
        shown = [f"{name}={getattr(self, name)!r}"
                 for name, default in (("sampling", SAMPLINGS[0]),
                                       ("covariances", COVARIANCES[0]))
                 if getattr(self, name) != default]
        return f"AssumeGaussian({', '.join(shown)})"
