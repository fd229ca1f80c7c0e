"""Which mechanism a ledger's release takes: the ledger's noise, or the one named.

A ledger is opened with ``noise=`` (:data:`NOISES`): the noise of every
release that names no mechanism. ``"auto"`` is the accessor's default
(Laplace noise over the reference's bands), unless the ledger's law is a
stated model of Gaussian-noise laws or the statistic was released with
Gaussian noise before; ``"laplace"`` and ``"gaussian"`` fix it for every
release. A release's own ``mechanism=`` is always taken (a ledger mixing the
two kinds certifies both through the bands' one coupling,
:mod:`skattr._ledger._mixed`).
"""

from __future__ import annotations

import difflib

from skattr.exceptions import InvalidParameterError, NotCertifiableError

__all__ = ["NOISES", "check_noise", "release_mechanism"]

#: A ledger's ``noise=`` choices.
NOISES = ("auto", "laplace", "gaussian")
#: The mechanism each noise names (apgm: Gaussian noise on several values
#: with each its own scale; approx-wasserstein: Laplace noise on each).
_NAMED = {"laplace": "approx-wasserstein", "gaussian": "apgm"}


def check_noise(noise) -> str:
    """Return ``noise`` checked (one of :data:`NOISES`), else refuse naming them."""
    if isinstance(noise, str) and noise in NOISES:
        return noise
    close = difflib.get_close_matches(str(noise), NOISES, n=1)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    raise InvalidParameterError(
        f"The 'noise' parameter of Ledger must be 'auto', 'laplace' or "
        f"'gaussian'. Got {noise!r} instead.{hint} 'gaussian' composes "
        "better over many releases, 'laplace' is the less noisy for a few "
        "(docs/many_releases.rst, 'Laplace or Gaussian noise in a ledger').")


def release_mechanism(ledger, query, params: dict) -> str:
    """Return the mechanism of a release (``params`` loses ``mechanism``).

    ``params["allocate"]`` of ``"error"`` (every mechanism's way) is dropped;
    any other allocation shares Gaussian noise, apgm's.

    Raises
    ------
    InvalidParameterError
        An unknown mechanism, naming the closest.
    NotCertifiableError
        Gaussian noise on a median, quantile or std in a ledger that does not
        compose it (a stated law or Theta), saying what to do.
    """
    from skattr.mechanisms import MECHANISMS

    linear = getattr(query, "is_linear", False)
    if isinstance(params.get("allocate"), str) and params["allocate"] == "error":
        del params["allocate"]
    shared = "allocate" in params
    named = "mechanism" in params
    noise = ledger.noise
    if noise == "auto":
        # Laplace noise, unless the ledger's law is a stated model of
        # Gaussian-noise laws or the statistic was already released with
        # Gaussian noise (a file written before 0.4, or an explicit
        # choice): then apgm for linear statistics, certified jointly with
        # them from their law rather than through the dearer coupling of a
        # mix (skattr._ledger._mixed).
        gaussian = linear and (ledger.law != "auto"
                               or ledger._released_with_gaussian(query))
        noise = "gaussian" if gaussian or shared else "laplace"
    elif shared:
        noise = "gaussian"
    mechanism = params.pop("mechanism", _NAMED[noise])
    if mechanism == "auto" and not linear:
        # On a median, quantile or std, Laplace noise: apgm (the one
        # Gaussian-noise mechanism releasing them) is noisier for a
        # release alone (weight's 0.25 and 0.75 quantiles at epsilon 8:
        # sds 10.4 and 11.0 against 7.0 and 7.5), and saves only on the
        # releases that follow; asked by name, by the ledger's noise, or for
        # an allocation of its noise.
        mechanism = _NAMED["gaussian" if shared or ledger.noise == "gaussian"
                           else "laplace"]
    if mechanism not in MECHANISMS and mechanism != "auto":
        close = difflib.get_close_matches(str(mechanism), ledger.GAUSSIAN, n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise InvalidParameterError(
            f"Unknown mechanism {mechanism!r}.{hint} The ledger releases "
            f"through {', '.join(ledger.GAUSSIAN + ledger.LAPLACE)}.")
    if (not linear and mechanism in ledger.GAUSSIAN
            and MECHANISMS[mechanism].releases_statistic(query)
            and not ledger.gaussian_over_bands):
        if named or shared:
            drop = "drop mechanism=" + (" and allocate=" if shared else "")
        else:
            drop = ("pass mechanism='approx-wasserstein' to this release, or "
                    "open the ledger with noise='laplace'")
        raise NotCertifiableError(
            f"A ledger of law={ledger.law!r} and theta={ledger.theta!r} "
            f"composes Gaussian noise on sums, means and counts only; "
            f"mechanism={mechanism!r} on a {query.statistic} is composed "
            "in a ledger of the default law and Theta (the reference's "
            "bands) hiding a proportion, or certified for a release "
            "alone (df.attrpriv."
            f"{query.statistic}(..., mechanism={mechanism!r})). In this "
            f"ledger, {drop} (Laplace noise, approx-wasserstein).")
    return mechanism
