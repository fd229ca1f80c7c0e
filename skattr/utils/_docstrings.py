"""Docstring sections several estimators share, and the helper that fills them.

A docstring names a shared section by a placeholder line, ``%(name)s`` alone
on its line; :func:`fill_doc` replaces the line by the section's text indented
as the placeholder is. A section used by one family of mechanisms only lives in
that family's module and is passed to :func:`fill_doc`; a section used across
families lives in :data:`SECTIONS` below. Sections may themselves hold
placeholders, so a family can assemble a whole Parameters block from shared
entries.

A placeholder that names no section, or any ``%(`` left after filling, raises
when the class is defined, so a misspelt name fails at import and never ships
as a broken docstring.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable
from typing import TypeVar

__all__ = ["SECTIONS", "fill_doc"]

_T = TypeVar("_T")

_PLACEHOLDER = re.compile(r"^(?P<indent>[ ]*)%\((?P<name>\w+)\)s[ ]*$",
                          re.MULTILINE)

#: Sections documented identically by several families of mechanisms, written
#: as they read in a docstring at the usual indentation (a description four
#: spaces in, lines of at most 84 characters).
SECTIONS: dict[str, str] = {
    # ------------------------------------------------------------ parameters
    "query": """\
query : Query or None, default=None
    The statistic; None is the mean of every column but the secrets'.""",
    "epsilon": """\
epsilon : float, default=1.0
    Privacy loss bound, > 0.""",
    "gaussian_delta": """\
delta : float, default=1e-3
    Failure probability, in (0, 1).""",
    "gaussian_calibration": """\
calibration : {"analytic", "classic"}, default="analytic"
    ``"analytic"``: the exact Gaussian calibration of Balle and Wang (valid
    for every epsilon). ``"classic"``: c = sqrt(2 ln(1.25/delta)) as in the
    papers (proven for epsilon < 1 only; a warning says so otherwise).""",
    "allow_large_delta": """\
allow_large_delta : bool, default=False
    A delta above 0.1 is refused (the guarantee may fail with that chance,
    so it says next to nothing) unless this is True. A delta at 1/n or more
    of the n records released, and an epsilon above 10, warn
    (``PrivacyLeakWarning``).""",
    "random_state": """\
random_state : None, int, Generator or RandomState, default=None
    None draws the noise from the operating system's entropy. A seed makes
    the noise reproducible, for experiments only: anyone who knows it can
    remove the noise.""",
    "secure": """\
secure : bool, default=False
    Draw the noise exactly on a power-of-two grid (discrete Laplace) instead
    of from floating-point samplers, closing Mironov's (2012) floating-point
    attack; see the user guide's Randomness section. Laplace-noise mechanisms
    only; Gaussian ones raise.""",
    "theta_bounds": """\
bounds : "robust", "reference", dict, sequence of (low, high), (low, high) \
or None, default="robust"
    The range each released column's values are clipped to, on the private
    data and on the reference data Theta is fitted on alike, so the
    certificate is that of the clipped statistic; one outlier moves a mean
    by at most the range / n. ``"robust"``: each column's range in the
    reference data within Tukey's far-out fences [Q1 - 3 IQR, Q3 + 3 IQR],
    cutting at most 1% of the reference's records at either end, so that a
    data-entry code such as 999 does not set the range (public data:
    deriving it spends nothing; cut records warn, ``ClippingWarning``).
    ``"reference"``: each column's least and largest value in the reference
    data; data that follows the resampling Theta lies in them and is
    released unchanged. Declared ranges: ``{column: (low, high)}``, one pair
    per column in order, or one pair for every column; narrower than the
    reference's, they clip the reference too. A Theta stated without
    reference records (an ExpertTheta, stated laws) gives ``"robust"`` and
    ``"reference"`` no range, so nothing is clipped unless ranges are
    declared. None clips nothing. Counts and proportions are never clipped
    (0 or 1 per record); a non-linear statistic's numeric columns are. The
    release records the ranges (``clipping``), never how many private
    records were clipped; see the user guide's "Outliers and clipping".""",
    # The Gaussian pair-law mechanisms: the Attribute-Private Gaussian
    # Mechanism and the Expected Value family.
    "pair_law_secret": """\
secret : Secret or list of Secret
    What to hide: the pairs of property values (distributions theta) Psi;
    with several secrets, the worst case over them.""",
    "pair_law_theta": """\
theta : {"auto", "moments", "gaussian"}, ExpertTheta, MonteCarlo or \
Bootstrap, default="auto"
    How the laws of F given each secret are obtained. ``"auto"``: per-group
    moments (exact mixture formulas for linear queries) or value frequencies
    (exact laws) of the reference data, worst case over them and 50
    stratified bootstrap replicates, so the guarantee allows for the
    estimation error of a finite reference (measured in
    ``docs/small_reference.md``); it needs at least 10 reference records in
    each secret group. ``"moments"``: the plug-in fit alone, as in the papers
    (recorded as an assumption). ``"gaussian"``: the joint Gaussian model of
    Zhang et al. (Sec. 4.2), checked against the reference. An
    :class:`~skattr.theta.ExpertTheta`: a set stated by an expert, worst
    case over it. A :class:`~skattr.theta.MonteCarlo` or
    :class:`~skattr.theta.Bootstrap`: moments estimated from datasets drawn
    from the reference.""",
    "law": """\
law : {"auto", "exact", "gaussian"} or AssumeGaussian, default="auto"
    The law of F given each secret that the noise is certified against.
    ``"exact"``: the exact pmf of a count, proportion, or sum or mean of one
    integer-valued column (records independent draws from their group's
    value frequencies in the reference data); the privacy profile of the
    pmfs plus the noise is computed numerically. ``"gaussian"``: F given a
    secret is Gaussian with the modelled moments (the theorems' assumption),
    recorded on the release; it never certifies a noiseless release of
    fewer than 30 records; it is ``AssumeGaussian()``, whose options
    (:class:`~skattr.laws.AssumeGaussian`) set how datasets are drawn from
    the reference records (``sampling``) and whether the two secrets'
    covariances are certified or taken as equal (``covariances``). ``"auto"``:
    the exact law where it exists; otherwise fit refuses, naming the two
    alternatives (``law="gaussian"`` or ``mechanism="approx-wasserstein"``).
    0.2's ``sampling`` and ``covariances`` keywords are taken until 0.4, with
    a FutureWarning naming the ``AssumeGaussian`` to pass.""",
    "max_divergence": """\
relaxation : MaxDivergenceGap or None, default=None
    For non-Gaussian data (Zhang et al.'s Algorithm 2):
    :class:`~skattr.mechanisms.MaxDivergenceGap` ``(lam, eta)`` bounds the
    approximate max-divergence between the true law of F given a secret and
    the modelled one (its Gaussian approximation), both ways, up to ``eta``.
    The certificate becomes (epsilon + 2 lam, (1 + e^(epsilon + lam)) eta +
    e^lam delta), Chen and Ohrimenko's Thm 4.6; Zhang et al.'s Thm 3 states
    e^lam delta + eta, which does not hold (see
    :func:`~skattr.mechanisms._relaxations.relaxed_certificate`). Replaces
    0.2's ``lambda_eta`` and ``eta`` (still taken, with a FutureWarning,
    until 0.4).""",
    # ------------------------------------------------------------ attributes
    "query_attributes": """\
columns_ : tuple
    The released columns.
query_ : Query, StackedQuery or Statistic
    The ``query`` with its columns resolved.
clipping_ : skattr._clipping.Clipping
    The ranges a release clips the released columns to (``bounds=``).""",
    "pair_law_attributes": """\
%(query_attributes)s
%(pair_law_fitted)s
%(input_attributes)s""",
    "pair_law_fitted": """\
secrets_ : tuple of Secret
    The secrets.
theta_spec_ : object
    What ``theta`` names (the spec that fitted the law).
law_ : GaussianLaw or ExactLaw
    The law of F the noise is certified against
    (:class:`~skattr.laws.GaussianLaw`: the models' moments, taken as
    Gaussian; :class:`~skattr.laws.ExactLaw`: the exact pmfs of a count or
    an integer sum, with their moments).""",
    "input_attributes": """\
n_features_in_ : int
    Number of columns seen in ``fit``.
feature_names_in_ : ndarray of str
    Column names seen in ``fit`` (DataFrames with string columns only).""",
    # ------------------------------------------------------------ references
    # The body of a footnote: ``.. [n]`` alone on the line above, then the
    # placeholder and what the docstring cites from the paper, three spaces in.
    "chen_ohrimenko": """\
M. Chen and O. Ohrimenko. "Protecting Global Properties of Datasets with
Distribution Privacy Mechanisms." AISTATS 2023.""",
    "zhang_ohrimenko_cummings": """\
W. Zhang, O. Ohrimenko and R. Cummings. "Attribute Privacy: Framework and
Mechanisms." ACM FAccT 2022.""",
    "balle_wang": """\
B. Balle and Y.-X. Wang. "Improving the Gaussian Mechanism for
Differential Privacy: Analytical Calibration and Optimal Denoising."
ICML 2018.""",
}


def fill_doc(**sections: str) -> Callable[[_T], _T]:
    r"""Return a decorator that fills the shared sections of a docstring.

    Each line holding only ``%(name)s`` is replaced by the section ``name``,
    dedented, its own placeholders filled, and indented as the placeholder
    line is. The sections are :data:`SECTIONS` and the keyword arguments (a
    family's own sections), which may not reuse a name of :data:`SECTIONS`.

    Parameters
    ----------
    **sections : str
        The family's own sections, by name.

    Returns
    -------
    callable
        Decorator of a class or function; it fills ``__doc__`` in place and
        returns the object (a docstring stripped by ``python -OO`` stays None).

    Raises
    ------
    ValueError
        When the keyword arguments reuse a name of :data:`SECTIONS`; and, from
        the decorator, when a placeholder names no section, when sections
        include each other in a cycle, or when a ``%(`` is left after filling
        (a placeholder that does not stand alone on its line).

    Examples
    --------
    >>> @fill_doc(answer="answer : int\n    Always 42.")
    ... def oracle(answer=42):
    ...     '''Answer.
    ...
    ...     Parameters
    ...     ----------
    ...     %(answer)s
    ...     '''
    >>> oracle.__doc__.splitlines()[-3:-1]
    ['    answer : int', '        Always 42.']
    """
    reused = sorted(set(sections) & set(SECTIONS))
    if reused:
        raise ValueError(
            f"The section(s) {reused} are already shared sections of "
            "skattr.utils._docstrings.SECTIONS; use the shared text or another "
            "name.")
    known = {**SECTIONS, **sections}

    def decorate(obj: _T) -> _T:
        if obj.__doc__ is not None:
            obj.__doc__ = _fill(obj.__doc__, known, obj.__qualname__, ())
        return obj

    return decorate


def _fill(text: str, sections: dict[str, str], owner: str,
          within: tuple[str, ...]) -> str:
    """Fill the placeholder lines of ``text``; refuse what cannot be filled."""

    def section(match: re.Match) -> str:
        name = match["name"]
        if name not in sections:
            raise ValueError(
                f"The docstring of {owner} has the placeholder %({name})s, which "
                f"names no section; the sections are {sorted(sections)}.")
        if name in within:
            raise ValueError(
                f"The docstring sections of {owner} include each other: "
                f"{' -> '.join((*within, name))}.")
        body = textwrap.dedent(sections[name]).strip("\n")
        body = _fill(body, sections, owner, (*within, name))
        return textwrap.indent(body, match["indent"])

    filled = _PLACEHOLDER.sub(section, text)
    left = filled.find("%(")
    if left >= 0:
        line = filled[filled.rfind("\n", 0, left) + 1:].split("\n", 1)[0]
        raise ValueError(
            f"The docstring of {owner} keeps an unfilled placeholder in "
            f"{line.strip()!r}: a placeholder must stand alone on its line.")
    return filled
