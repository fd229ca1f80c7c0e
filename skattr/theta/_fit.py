"""Learn theta models from reference data (fast, vectorised moments)."""

from __future__ import annotations

import numpy as np
from scipy import stats

from skattr._data import GroupStatistics, statistics_of
from skattr.exceptions import DataValidationError, NotCertifiableError
from skattr.theta._models import GroupMoments, JointGaussian

__all__ = ["fit_group_moments", "fit_joint_gaussian", "group_moments"]

# Level of the check that the contributions' covariance does not depend on z.
# The check guards a privacy certificate: missing a real difference between the
# groups' covariances certifies a release that leaks, while a false refusal only
# costs the user a switch to theta="moments". So the level is not pushed below
# 0.01 even though it is Bonferroni-corrected over the k(k+1)/2 products.
JOINT_GAUSSIAN_ALPHA = 0.01

# With fewer reference records on either side of a binary z the check has no
# power to see a difference in covariance, so passing it would certify nothing.
JOINT_GAUSSIAN_MIN_RECORDS = 10

# Residuals smaller than this share of h's spread (in sum of squares) are
# rounding noise (h is a function of z), and a product whose variance is this
# small a share of its mean square is constant: neither can vary with z.
_RELATIVE_ZERO = 1e-20
_CONSTANT_PRODUCT = 1e-12


def fit_group_moments(z: np.ndarray, h: np.ndarray, *, sampling: str, columns,
                      secret_label: str) -> GroupMoments:
    """Per-group moments of h, splitting the reference records by z in {0, 1}.

    The moments are those of the reference data itself (ddof = 0), so the
    model's mean and covariance of a statistic are exact for datasets drawn from
    the reference records (with or without replacement).
    """
    return group_moments(statistics_of(h, z), sampling=sampling,
                         columns=columns, secret_label=secret_label)


def group_moments(stats: GroupStatistics, *, sampling: str, columns,
                  secret_label: str) -> GroupMoments:
    """Return the GroupMoments model of per-group sufficient statistics.

    ``stats`` comes from the data seam (:func:`skattr._data.group_statistics`),
    so the reference's rows are read there and nowhere else.
    """
    n_out, n_in = (int(c) for c in stats.count)
    if min(n_in, n_out) < 2:
        which = "matching" if n_in < 2 else "not matching"
        raise DataValidationError(
            f"The reference data has {min(n_in, n_out)} record(s) {which} the secret "
            f"{secret_label}; each secret group needs at least two to estimate its "
            "moments. Use more (or more varied) reference data."
        )
    without = sampling == "without-replacement"
    total = n_in + n_out
    return GroupMoments(
        mean_in=stats.mean[1], mean_out=stats.mean[0],
        cov_in=stats.covariance(1), cov_out=stats.covariance(0),
        p=n_in / total,
        size_in=n_in if without else None, size_out=n_out if without else None,
        columns=tuple(columns),
        description=f"group moments of {total} reference records "
                    f"({n_in} in the secret's group), sampling {sampling}",
    )


def _covariance_dependence(z: np.ndarray, h: np.ndarray):
    """Koenker's Breusch-Pagan LM statistics of every product r_i r_j on z.

    Parameters
    ----------
    z : ndarray of shape (N,)
        The secret's attribute in each reference record (not constant).
    h : ndarray of shape (N, k)
        The records' contributions to the k statistics.

    Returns
    -------
    lm : ndarray of shape (k, k)
        Symmetric; ``lm[i, j] = N corr(z, r_i r_j)^2``, chi-square with one
        degree of freedom when Cov(h | z) does not depend on z.
    residuals : ndarray of shape (N, k)
        r = h - E[h | z], from the least-squares line of h on z.

    Notes
    -----
    For i = j, LM is :func:`statsmodels.stats.diagnostic.het_breuschpagan`
    with ``robust=True`` (N R^2 of the regression of r_i^2 on (1, z)): with one
    regressor R^2 is the squared correlation. The k(k + 1) / 2 correlations
    come from three (k, k) cross-products, so the (N, k(k + 1) / 2) products
    are never formed: with the residuals u scaled to unit mean square,
    cov(z, u_i u_j) = mean(z_c u_i u_j) and var(u_i u_j) = mean(u_i^2 u_j^2) -
    mean(u_i u_j)^2.
    """
    n = z.size
    zc = z - z.mean()
    # Rows of h.T are h's columns, contiguous as a frame's columns reach here
    # (see skattr._data), so every pass below streams through memory.
    r = h.T - h.mean(axis=0)[:, None]
    ss_h = np.einsum("ij,ij->i", r, r)
    szz = zc @ zc
    r -= np.outer(r @ zc / szz, zc)
    ss_r = np.einsum("ij,ij->i", r, r)
    live = ss_r > _RELATIVE_ZERO * ss_h
    scale = np.zeros_like(ss_r)
    scale[live] = np.sqrt(n / ss_r[live])
    u = r * scale[:, None]
    mean_product = u @ u.T / n
    cov_z = (u * zc) @ u.T / n
    u *= u
    mean_square = u @ u.T / n
    var_product = mean_square - mean_product ** 2
    varies = var_product > _CONSTANT_PRODUCT * mean_square
    lm = np.zeros_like(var_product)
    lm[varies] = n * cov_z[varies] ** 2 / (szz / n * var_product[varies])
    residuals = r.T
    return lm, residuals


def _product_label(columns, i: int, j: int) -> str:
    if i == j:
        return f"the variance of {columns[i]!r}"
    return f"the covariance of {columns[i]!r} and {columns[j]!r}"


def _check_constant_covariance(z, h, columns, secret_label, low, high, binary):
    """Refuse (NotCertifiableError) when Cov(h | z) visibly depends on z."""
    proportion = binary and low == 0 and high == 1
    mean_alternative = (
        "use mechanism='approx-wasserstein' with a resampling Theta "
        "(skattr.theta.Resample), or state Theta with an ExpertTheta")
    alternative = (
        "use theta='moments' (per-group moments, which model each group's own "
        "covariance) for a proportion secret; for a mean secret, which has no "
        f"other Theta fit in skattr yet, {mean_alternative}." if proportion else
        f"{mean_alternative} (skattr has no other Theta fit for a mean secret "
        "yet).")
    if binary:
        n_high = int(np.count_nonzero(z == high))
        fewest = min(n_high, z.size - n_high)
        if fewest < JOINT_GAUSSIAN_MIN_RECORDS:
            side = ((f"with z = {high:g}" if n_high == fewest else
                     f"with z = {low:g}") if not proportion else
                    ("matching" if n_high == fewest else "not matching"))
            raise NotCertifiableError(
                f"The reference data has {fewest} record(s) {side} the secret "
                f"{secret_label}; with fewer than {JOINT_GAUSSIAN_MIN_RECORDS} on "
                "either side, the check that the joint Gaussian model "
                "(theta='gaussian') fits (the statistics' covariance is the "
                "same in both groups) has no power. Use more reference data, or "
                + alternative)
    lm, residuals = _covariance_dependence(z, h)
    i, j = np.triu_indices(lm.shape[0])
    tests = i.size
    p_value = np.minimum(1.0, tests * stats.chi2.sf(lm[i, j], 1))
    failing = np.flatnonzero(p_value < JOINT_GAUSSIAN_ALPHA)
    if failing.size == 0:
        return
    worst = failing[np.argsort(p_value[failing])][:3]
    evidence = []
    for t in worst:
        a, b = i[t], j[t]
        what = _product_label(columns, a, b)
        if binary:
            high_rows = z == high
            # For a binary z the fitted line passes through both group means,
            # so these are the groups' own (population) covariances.
            inside = np.mean(residuals[high_rows, a] * residuals[high_rows, b])
            outside = np.mean(residuals[~high_rows, a] * residuals[~high_rows, b])
            groups = (("in the secret's group", "outside it") if proportion else
                      (f"where z = {high:g}", f"where z = {low:g}"))
            what += (f" is {inside:.4g} {groups[0]} and {outside:.4g} "
                     f"{groups[1]}")
        else:
            what += " changes with z"
        evidence.append(f"{what} (p = {p_value[t]:.2g})")
    raise NotCertifiableError(
        f"The joint Gaussian model (theta='gaussian') takes the covariance of "
        f"the statistics to be the same whatever the value of the secret "
        f"{secret_label}, but the reference data contradict it: "
        + "; ".join(evidence)
        + f". (Koenker's Breusch-Pagan test of each product of residuals on z, "
        f"p-values Bonferroni-corrected over {tests} product(s); refused below "
        f"{JOINT_GAUSSIAN_ALPHA}.) A release certified under this model can "
        "leak far more than its certificate says. To release it, "
        + alternative)


def fit_joint_gaussian(z: np.ndarray, h: np.ndarray, *, columns,
                       secret_label: str) -> JointGaussian:
    """Mean and covariance (ddof = 1) of (z, h) for the Sec. 4.2 Gaussian model.

    Conditioning a joint Gaussian on z gives a covariance of h that does not
    depend on z; the fit refuses reference data that visibly contradict this
    (see Notes), since the model would then certify releases that leak.

    Parameters
    ----------
    z : ndarray of shape (N,)
        The secret's attribute in each reference record: a 0/1 indicator for a
        proportion secret, the column's values for a mean secret.
    h : ndarray of shape (N, k)
        The records' contributions to the k released statistics.
    columns : sequence
        Labels of the k statistics.
    secret_label : str
        The secret, as named in messages.

    Returns
    -------
    JointGaussian

    Raises
    ------
    DataValidationError
        Fewer than two records, or z constant.
    NotCertifiableError
        z is binary with fewer than ``JOINT_GAUSSIAN_MIN_RECORDS`` records on either
        side, or Cov(h | z) depends on z (the check in Notes).

    Notes
    -----
    The residuals r = h - E[h | z] are taken from the least-squares line of h
    on z (the joint Gaussian's conditional mean is linear in z; for a binary z
    the line passes through both group means). Under the model every product
    r_i r_j (i <= j) is uncorrelated with z. Each is tested with Koenker's
    studentised Breusch-Pagan LM test, LM = N R^2 of the regression of
    r_i r_j on (1, z) = N corr(z, r_i r_j)^2, chi-square with one degree of
    freedom under the null (for i = j, statsmodels' ``het_breuschpagan`` with
    ``robust=True``). The fit is refused when the smallest p-value times
    k(k + 1) / 2 (Bonferroni) is below ``JOINT_GAUSSIAN_ALPHA`` = 0.01.

    Passing the check is not proof: a difference too small for N records to
    show is still certified as if absent. The check does not test that h is
    Gaussian given z, nor, for a numeric z, that E[h | z] is linear.

    Examples
    --------
    Variances 1 in the secret's group and 25 outside it:

    >>> import numpy as np
    >>> from skattr.theta._fit import fit_joint_gaussian
    >>> rng = np.random.default_rng(0)
    >>> z = (rng.random(2000) < 0.1).astype(float)
    >>> h = np.where(z == 1, rng.normal(1, 1, 2000), rng.normal(0, 5, 2000))
    >>> fit_joint_gaussian(z, h[:, None], columns=["x"],
    ...                    secret_label="g")  # doctest: +ELLIPSIS +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    ...
    skattr.exceptions.NotCertifiableError: ... the variance of 'x' is 1.019 in the
    secret's group and 24.8 outside it (p = 1.9e-22)... use theta='moments' ...
    """
    if z.size < 2:
        raise DataValidationError(
            "The joint Gaussian model needs at least two reference records."
        )
    data = np.column_stack([z, h])
    mean = data.mean(axis=0)
    centred = data - mean
    cov = centred.T @ centred / (z.size - 1)
    if cov[0, 0] <= 0:
        raise DataValidationError(
            f"The secret {secret_label} is constant in the reference data, so the "
            "joint Gaussian model cannot condition on it. Use reference data in "
            "which it varies."
        )
    low, high = float(z.min()), float(z.max())
    binary = bool(np.all((z == low) | (z == high)))
    _check_constant_covariance(z, h, tuple(columns), secret_label, low, high,
                               binary)
    return JointGaussian(
        mean=mean, cov=cov, columns=tuple(columns),
        description=f"joint Gaussian fit on {z.size} reference records",
    )
