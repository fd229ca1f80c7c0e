"""What a certificate rests on and how it was made, as data: the one home of its prose.

A release says *what it assumes* with :class:`Assumption` records and *how it
was certified* with a :class:`Method`, a sequence of :class:`MethodStep`
records. Each record is a ``kind`` and its ``parameters`` (name, value pairs);
its text is rendered from the tables below, keyed by kind, so every sentence a
certificate prints is written here once, and a program asks the records, never
the prose::

    rel.assumes("law.gaussian")              # F taken as Gaussian?
    [a for a in rel.assumed if a.opt_in]     # what the user opted into
    rel.certified_by.uses("secure")          # exact discrete noise?

An assumption is *opt-in* when the user took it with an option whose default
does not (``theta="moments"``, ``law="gaussian"``,
``law=AssumeGaussian(covariances="assume-equal")``, a set reading other than
pointwise, Chen and Ohrimenko's relaxations); ``option`` names that setting.
The others come with the privacy definition chosen (Theta, the mechanism)
and hold by construction or are part of what the guarantee means.

A parameter's value is a number, a string, a tuple of them, or another record
(a step names the laws or the coupling it reads by nesting them): every value
is hashable and saved exactly (:mod:`skattr._persistence`). Floats are kept
unrounded; the templates round them as the text shows them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from skattr._persistence import persistable
from skattr._secret import check_grid_record, grid_text

__all__ = ["ASSUMPTIONS", "STEPS", "Assumption", "Method", "MethodStep",
           "unique"]


@dataclass(frozen=True)
class _Kind:
    """One kind of record: its parameters, its text and (assumptions) the option.

    ``text`` is a ``str.format`` template over the parameters, or a function
    of them for a text that depends on their values; ``option`` (a template
    too) is the setting that opts into the assumption, None when none does;
    ``check`` refuses values the record cannot hold (ValueError), built or loaded.
    """

    parameters: tuple = ()
    text: str | Callable[..., str] = ""
    option: str | None = None
    check: Callable[..., None] | None = None

    def render(self, values: dict) -> str:
        if callable(self.text):
            return self.text(**values)
        return self.text.format_map(values)


def _kind(text, *parameters, option=None, check=None) -> _Kind:
    return _Kind(tuple(parameters), text, option, check)


# ------------------------------------------------------------ texts by value

def _independent(reads: str, privacy: str) -> str:
    how = {"counts": "are counted with the stated probabilities",
           "values": "take the column's values with the stated probabilities",
           "population": "are drawn from their group's law in the population",
           "any law": "are drawn from their group's law, the same under "
                      "both secrets, whatever it is: no model of the columns, "
                      "no reference data"}
    return (f"records are independent given the sensitive attribute and "
            f"{how[reads]} ({privacy} attribute privacy)")


def _group_neighbours(k: int, n: int) -> str:
    text = (f"neighbouring datasets differ by replacing up to k = {k} of the "
            f"n = {n} records (n public)")
    if k == n:
        text += ("; as every record may change, every pair of datasets of n "
                 "records is covered, whatever global property separates them")
    return text


def _declared_bounds(bounds: tuple) -> str:
    return "each record clipped to its declared bounds: " + ", ".join(
        f"{c!s} in [{lo:g}, {hi:g}]" for c, lo, hi in bounds)


def _network_counted(reads: tuple) -> str:
    return ("the attribute parameters follow the stated Bayesian network "
            "(Theta); given them the records are independent and each is "
            f"counted with the stated probability, a function of {list(reads)} "
            "(distributional attribute privacy)")


def _zhang_quilt(scale: float, quilts: tuple) -> str:
    chosen = "; ".join(
        f"{node}: Q = {{{', '.join(quilt)}}}, e = {influence:.4g}, near "
        f"{list(near)}" for node, quilt, influence, near in quilts)
    return (f"Markov quilt (Zhang et al. Alg. 2): Laplace scale {scale:.6g} = max "
            "over sensitive nodes of min over quilts of Delta_(A and N) F / "
            f"(epsilon - e); {chosen}")


def _record_weight(weight: float) -> str:
    """Return a band law's weight of a record's gap: ``1 / 160`` when a reciprocal."""
    share = 1.0 / weight
    if abs(share - round(share)) <= 1e-9 * share:
        return f"1 / {round(share)}"
    return f"{weight:.6g}"


#: Why a band law weighs the moved records' gaps as it does.
_WEIGHT_NOTE = ("the most the statistic moves when one record's value moves by "
                "1; a trimmed mean's, of n records cutting g from each end: "
                "1 / (n - 2g)")


def _band_closeness_weighted(records: int, weight: float) -> str:
    return (_BAND_GAPS.format(records=records) + "; W the upper "
            "delta-quantile of their summed gaps times "
            f"{_record_weight(weight)} ({_WEIGHT_NOTE}; Chen Def 3.2, Thm 3.2)")


def _band_largest_weighted(weight: float) -> str:
    return ("the largest distance of the swap coupling over the groups' "
            "confidence bands: the moved records' largest summed gaps times "
            f"{_record_weight(weight)} ({_WEIGHT_NOTE})")


def _check_weight(weight: float, **_) -> None:
    if (isinstance(weight, bool) or not isinstance(weight, (int, float))
            or not 0.0 < weight < float("inf")):
        raise ValueError(f"a record's weight is a positive finite float; got "
                         f"{weight!r}")


def _check_allocated(by: str) -> None:
    if by not in ("reference", "given"):
        raise ValueError(f"noise allocated by {by!r}: 'reference' or 'given'")


def _boxes(mass: float, faces: str) -> str:
    how = {"exact": "at exact tails",
           "chernoff": "at Chernoff tails of the moment generating function",
           "drawn": "bounded"}
    return f"boxes holding all but {mass:.3g} of each law, faces {how[faces]}"


#: Every kind of assumption: its parameters, text and opting-in setting.
ASSUMPTIONS: dict[str, _Kind] = {
    # Theta and the law of F.
    "theta.plug-in": _kind(
        "ASSUMED (theta='moments'): the reference's group moments or "
        "frequencies are the population's (plug-in), with no allowance for "
        "their estimation error; theta='auto' takes a count's confidence box "
        "(valid for the population) or the worst case over bootstrap "
        "replicates", option="theta='moments'"),
    "theta.bootstrap": _kind(
        "Theta is the worst case over the reference's fit and {replicates} "
        "stratified bootstrap replicates: a measured safeguard against the "
        "reference's sampling error, not a confidence set, so the "
        "certificate is not proven to hold for the population the reference "
        "was sampled from (docs/population.md)", "replicates"),
    "law.gaussian": _kind(
        "ASSUMED (law='gaussian'): F(X) given each secret is Gaussian with the "
        "modelled mean and covariance; the shape of its law is not checked "
        "against the data", option="law='gaussian'"),
    "law.exact": _kind(
        "the law of F(X) given each secret is exact: records are independent "
        "draws from their group's value frequencies, estimated from the "
        "reference data (law='exact')"),
    "records.independent": _kind(_independent, "reads", "privacy"),
    "records.neighbours": _kind(
        "neighbours: one record replaced by any other, its group included, "
        "both datasets holding at least {inside} of the group and {outside} "
        "others (fewer is refused; the refusal not covered)", "inside",
        "outside"),
    "learner.as-stated": _kind(
        "the wrapped learner is differentially private for one record "
        "replaced as its library states it (its optimiser taken as exact), "
        "its bounds stated, not read from the data, its noise unseeded; its "
        "other steps ({steps}) learn nothing from the data{functions}"
        "{classes}; its library's accountant is not spent (this is the "
        "account)", "steps", "functions", "classes"),
    "records.same-group": _kind(
        "ASSUMED (neighbours='same-group'): a record's group is public; "
        "neighbours differ in one record's other values, both holding at "
        "least {inside} of the group and {outside} others",
        "inside", "outside", option="neighbours='same-group'"),
    "reference.sample": _kind(
        "the reference data are a random sample of the population (records "
        "independent given the sensitive attribute); the counting "
        "probabilities lie in their simultaneous Clopper-Pearson intervals, "
        "which holds with probability at least {confidence:g} over the "
        "reference sample", "confidence"),
    "reference.band": _kind(
        "the reference data are a random sample of the population (records "
        "independent given the sensitive attribute); each group's "
        "distribution function lies in its confidence band (Dvoretzky-Kiefer-"
        "Wolfowitz with Massart's constant, narrowed in the tails by the order "
        "statistics' Beta laws), all of them at once with probability at least "
        "{confidence:g} over the reference sample, and every value (clipped) "
        "in the clipping range", "confidence"),
    "resampling-model": _kind(
        "the data are distributed as the resampling model says (datasets drawn "
        "from the reference data; {privacy} privacy)", "privacy"),
    "secret.grid": _kind(grid_text, "secret", "n", "stated", "sides",
                         "certified", check=check_grid_record),
    "secret.set-reading": _kind(
        "set secrets compared by their {reading} reading: F given g in a set "
        "is taken to be Gaussian with the reading's mean and covariance",
        "reading", option="set_reading={reading!r}"),
    # The two secrets' covariances.
    "covariances.equal": _kind(
        "ASSUMED: the laws under the two secrets of a pair are translations of "
        "each other (equal covariances), though the modelled covariances "
        "differ by up to {gap:.2%}, as in the papers' experiments (Chen & "
        "Ohrimenko App. C.1); the guarantee holds only under that assumption",
        "gap", option="law=AssumeGaussian(covariances='assume-equal')"),
    "covariances.certified": _kind(
        "the two sides' covariances differ by up to {gap:.2%} and the "
        "certificate covers that", "gap"),
    "laws.translations": _kind(
        "the laws of F under the two secrets of each pair are translations of "
        "each other (Chen & Ohrimenko Thm 4.1, 4.3)"),
    # Chen and Ohrimenko's relaxations: the model within a stated distance.
    "relaxation.max-divergence": _kind(
        "the modelled law of F(X) given each secret and its true law are "
        "within {eta:g}-approximate max-divergence {lambda_eta:g} of each "
        "other, both ways (Zhang et al. Alg. 2; certificate of Chen & "
        "Ohrimenko Thm 4.6, which corrects Zhang et al. Thm 3)",
        "lambda_eta", "eta",
        option="relaxation=MaxDivergenceGap(lam={lambda_eta!r}, eta={eta!r})"),
    "relaxation.wasserstein": _kind(
        "the modelled laws are within infinity-Wasserstein distance "
        "{wasserstein_w:g} of the true ones (Thm 4.7); the expected error is "
        "then the root-mean-square norm (an upper bound)",
        "wasserstein_w", "wasserstein_lambda",
        option="relaxation=WassersteinGap(w={wasserstein_w!r}, "
               "lam={wasserstein_lambda!r})"),
    # Bayesian networks of the attribute parameters.
    "network.counted": _kind(_network_counted, "reads"),
    "network.parameters": _kind(
        "the attribute parameters follow the stated Bayesian network (Theta); "
        "the columns are independent given the parameters"),
    "network.secret-parameter": _kind(
        "the secret is the sensitive node's parameter: any two values of its "
        "grid are hidden (Def. 7)"),
    "network.entries": _kind("the entries follow the stated Bayesian network"),
    "quilt.declared-bounds": _kind("each record clipped to its declared bounds"),
    "quilt.zero-one": _kind(
        "counts and proportions: each record contributes 0 or 1"),
    # Differential privacy's neighbours and sensitivity.
    "dp.neighbours": _kind(
        "neighbouring datasets differ by replacing one record (n = {n} public); "
        "this does not hide global properties of the data", "n"),
    "dp.group-neighbours": _kind(_group_neighbours, "k", "n"),
    "dp.declared-bounds": _kind(_declared_bounds, "bounds"),
    "dp.zero-one": _kind(
        "each record contributes 0 or 1 to a count or proportion"),
    # Prose with no kind: built by hand, or read from a file skattr 0.2 wrote.
    "stated": _kind("{text}", "text"),
}

_EXACT_PROFILE = ("exact privacy profile of two Gaussians with unequal "
                  "covariances (generalised chi-square, numerical inversion "
                  "rounded up)")

#: The band laws' swap coupling, the words their closeness steps share.
_BAND_GAPS = ("from the swap coupling over the groups' confidence bands: only "
              "the {records} records whose group differs between the two "
              "secrets may differ, each by at most the gap between the groups' "
              "quantile functions over the bands")

#: Every kind of step of a method: its parameters and text.
STEPS: dict[str, _Kind] = {
    # Gaussian noise calibrated to the pairs' Gaussian laws.
    "gaussian.calibration": _kind("{calibration} Gaussian calibration",
                                  "calibration"),
    "gaussian.calibration.mahalanobis": _kind(
        "{calibration} Gaussian calibration (Mahalanobis distance)",
        "calibration"),
    "gaussian.classic-checked": _kind(
        "classic Gaussian calibration on each side's covariance, checked by "
        "the exact privacy profile of the unequal covariances"),
    "profile.two-gaussians": _kind("exact privacy profile of two Gaussians"),
    "profile.unequal-variances": _kind(
        "exact privacy profile of two Gaussians with unequal variances"),
    "profile.unequal-covariances": _kind(_EXACT_PROFILE),
    "exact-laws.gaussian-noise": _kind(
        "exact laws of the statistic plus Gaussian noise: privacy profile "
        "computed numerically, rounded up"),
    "classic.achieved-delta": _kind(
        "the classic constant's noise achieves delta {achieved:.4g} at epsilon "
        "{epsilon:g}, not the requested {requested:g} (exact profile), and "
        "the release states it", "achieved", "epsilon", "requested"),
    # Chen and Ohrimenko's Expected Value family and skattr's optimal.
    "expm.laplace": _kind(
        "Laplace scale Delta_E,1 / epsilon on each statistic (Thm 4.1)"),
    "expm.gaussian": _kind("N(0, (Delta_E,2 / mu)^2 I) (Thm 4.2)"),
    "dirm.laplace": _kind(
        "Laplace noise on the {dimension}-dimensional span of the mean "
        "differences (Thm 4.3)", "dimension"),
    "dirm.gaussian": _kind(
        "N(0, (Delta_E,2 / mu)^2 V V^T) on the {dimension}-dimensional span of "
        "the mean differences (Sec. 4.2)", "dimension"),
    "eigm": _kind("sigma_k^2 = max(0, (Delta_E,2 / mu)^2 - lambda_k) along the "
                  "covariance's eigenvectors (Thm 4.5)"),
    "daum": _kind("sigma^2 = max(0, (alpha / mu)^2 - 1 / (v^T Sigma^-1 v)) "
                  "along v (App. A.2, Alg. 1, closed form)"),
    "no-mean-difference": _kind("no mean difference: no noise"),
    "least-error": _kind(
        "least-error noise covariance certifying every pair (semidefinite "
        "program and the Expected Value shapes)"),
    "least-error.unequal": _kind(
        "least-error noise over rank-one-plus-isotropic and eigen-aligned "
        "covariances and the Expected Value shapes, certified by the {profile}",
        "profile"),
    "zero-noise-replaced": _kind("the formula's zero noise did not certify"),
    "exact-laws.raised": _kind(
        "raised to variance {variance:.4g} to certify the exact laws",
        "variance"),
    "exact-laws.profile": _kind(
        "exact laws of the statistic plus the noise: privacy profile computed "
        "numerically, rounded up"),
    "scaled.unequal-covariances": _kind(
        "scaled by {factor:.4g} to certify unequal covariances ({profile})",
        "factor", "profile"),
    "scaled.every-pair": _kind(
        "scaled by {factor:.4g} to certify every pair (the theorem's "
        "assumptions hold only approximately)", "factor"),
    "relaxation.wasserstein": _kind(
        "plus Laplace({scale:.4g}) on each statistic (Thm 4.7)", "scale"),
    # Differential-privacy baselines.
    "dp.laplace": _kind(
        "Laplace mechanism: scale b = k l1 / epsilon = {k} x {l1:.6g} / "
        "{epsilon:g} on each statistic (Dwork & Roth Thm 3.6)",
        "k", "l1", "epsilon"),
    "dp.gaussian": _kind(
        "Gaussian mechanism, N(0, sigma^2 I) with sigma = {sigma:.6g}", "sigma"),
    "dp.gaussian.analytic": _kind(
        "analytic calibration (Balle & Wang 2018): sigma = k l2 / mu, "
        "mu = {mu:.6g}", "mu"),
    "dp.gaussian.classic": _kind(
        "classic constant: sigma = k l2 sqrt(2 ln(1.25/delta)) / epsilon "
        "(Dwork & Roth Thm A.1), mu = {mu:.6g}", "mu"),
    "dp.achieved-delta": _kind(
        "at epsilon {epsilon:g} this noise achieves delta {achieved:.4g}, not "
        "the requested {requested:g} (exact profile), and the release states "
        "it", "epsilon", "achieved", "requested"),
    # Markov quilts.
    "quilt.zhang": _kind(_zhang_quilt, "scale", "quilts"),
    "quilt.swc": _kind(
        "Markov Quilt Mechanism (Song, Wang and Chaudhuri, Alg. 5): Laplace(L "
        "b_max), L = {lipschitz:.6g}, b_max = {b_max:.6g}", "lipschitz",
        "b_max"),
    # The Wasserstein mechanisms: Laplace(W / epsilon), W a bound on the laws.
    "wasserstein": _kind("Laplace(W / epsilon), W {bound}", "bound"),
    "w-inf.largest": _kind(
        "the largest infinity-Wasserstein distance between {laws} (Zhang "
        "Alg. 4)", "laws"),
    "w-inf": _kind("the infinity-Wasserstein distance between {laws} (Chen "
                   "Thm 3.1)", "laws"),
    "closeness.exact": _kind(
        "the least (W, delta)-closeness of {laws} (Chen Def 3.2, Thm 3.2)",
        "laws"),
    "closeness.band": _kind(
        _BAND_GAPS + "; W the upper delta-quantile of their summed gaps (Chen "
        "Def 3.2, Thm 3.2)", "records"),
    "closeness.band.weighted": _kind(
        _band_closeness_weighted, "records", "weight", check=_check_weight),
    "w-inf.swap": _kind(
        "the swap coupling's bound over Theta's box: only the {records} "
        "records whose group differs between the two secrets may be counted "
        "differently", "records"),
    "closeness.order-band": _kind(
        "from the quantile coupling of the {level:g}-quantile's laws, worst "
        "case over every pair of group laws in the confidence bands that the "
        "two secrets share (its distribution function is monotone in theirs); "
        "W the largest gap on all but delta of the levels (Chen Def 3.2, Thm "
        "3.2)", "level"),
    "w-inf.range": _kind(
        "the clipping range: every released value lies in it"),
    "closeness.joint-band": _kind(
        "per value ({statistics} of them), over the groups' confidence bands: "
        "only the records whose group differs between the two secrets may "
        "differ, each one's two rows drawn independently from the two groups' "
        "laws; W_j bounds value j's move but with chance delta / "
        "{statistics} (a quantile: counting the shared and moved records "
        "around it, or, under distributional privacy, between its two laws' "
        "tails, at the bands' extremes; a std: its centred squares' bound; a "
        "sum: exact sums of the bands' extreme laws, and Chernoff's bound), "
        "and "
        "value j gets Laplace({statistics} W_j / epsilon): the noises' "
        "privacy loss is at most epsilon but with chance delta (a union bound "
        "over the values; Chen Def 3.2, Thm 3.2)", "statistics"),
    "joint-coupled": _kind(
        "per value ({statistics} of them), over the groups' confidence bands: "
        "only the records whose group differs between the two secrets may "
        "differ, each one's two rows drawn independently from the two groups' "
        "laws; each value's move has a law that dominates it, their dependence "
        "unknown; the {noise} noise on each value is certified for every "
        "dependence by joint convexity of the hockey-stick divergence, the "
        "expected divergence bounded from the values' laws alone ({bound} "
        "bound)", "statistics", "noise", "bound"),
    "noise.allocated": _kind(
        lambda by: "the noise shared among the values in proportion to "
        + ("each one's value in the reference data (allocate='relative')"
           if by == "reference" else
           "public numbers the release was given (allocate=[...])")
        + ": where the noise goes, not the guarantee, changes", "by",
        check=_check_allocated),
    "w-inf.joint-band": _kind(
        "per value ({statistics} of them): each anywhere in its range (a "
        "quantile's clipping range, a std's largest, a sum's every moved "
        "record across its range), and value j gets "
        "Laplace({statistics} W_j / epsilon)", "statistics"),
    "closeness.std-band": _kind(
        "from the groups' confidence bands: only the records whose group "
        "differs between the two secrets may differ, each one's two values "
        "drawn independently from the two groups' laws; the variance moves "
        "by at most the moved records' centred squares and their mean's "
        "square, the centre anywhere the dataset's mean may be, and the std "
        "by that over the sum of the two stds, each bounded below; "
        "each part's tail at delta / 12 (Chernoff's bound and exact "
        "sums of the bands' extreme laws; Chen Def 3.2, Thm 3.2)"),
    "w-inf.band": _kind(
        "the largest distance of the swap coupling over the groups' "
        "confidence bands"),
    "w-inf.band.weighted": _kind(_band_largest_weighted, "weight",
                                 check=_check_weight),
    "coupling.gaussian-noise.band": _kind(
        "Gaussian noise through the swap coupling: delta at most the expected "
        "Gaussian delta of the coupled distance (joint convexity), computed "
        "exactly; only the {records} records whose group differs between the "
        "two secrets may differ, each by at most the gap between the two "
        "groups' quantile functions over their confidence bands", "records"),
    "subsample.public-sizes": _kind(
        "each group subsampled at random, independently of the values, to a "
        "public size ({inside} of the group and {outside} others of {n}; "
        "{left_out} unread): one law under every secret, the share moving "
        "nothing released (docs/synthetic.md){failure}", "inside", "outside",
        "n", "left_out", "failure"),
    "learner.differential-privacy": _kind(
        "the wrapped learner's own differential privacy ({learners}), "
        "added over its differentially private steps (basic composition): "
        "({epsilon:.6g}, {delta:.6g}) for one record of the subsample "
        "replaced; {composition}", "learners", "epsilon", "delta",
        "composition"),
    "zcdp.group-histograms": _kind(
        "each group's histograms ({marginals} marginals, {rounds}) with "
        "Gaussian noise for l2 sensitivity sqrt(2) / s a marginal, s its public "
        "size, the subsamples coupled between neighbours; rho "
        "{rho_inside:.6g} and {rho_outside:.6g}, {composition}; converted to "
        "(epsilon, delta) (Bun and Steinke, Prop. 1.3)", "marginals", "rounds",
        "rho_inside", "rho_outside", "composition"),
    "zcdp.group-means": _kind(
        "each group's clipped means of {columns} column(s) with Gaussian noise "
        "for sensitivity (high - low) / s a column, s its public size, the "
        "subsamples coupled between neighbours; rho {rho_inside:.6g} and "
        "{rho_outside:.6g}, {composition}; converted to (epsilon, delta) "
        "(Bun and Steinke, Prop. 1.3)", "columns", "rho_inside",
        "rho_outside", "composition"),
    "closeness.coupled": _kind(
        "W the upper delta-quantile of the coupled distance ((W, "
        "delta)-closeness), for each pair under the better of two couplings "
        "valid over all of Theta's box: the swap coupling (only the {records} "
        "records whose group differs between the two secrets may be counted "
        "differently, each with probability at most {gap:.4g}: at most "
        "Binomial({records}, {gap:.4g})) and the quantile coupling bounded at "
        "the box's corners", "records", "gap"),
    "coupling.gaussian-noise": _kind(
        "Gaussian noise through a coupling: delta at most the expected "
        "Gaussian delta of the coupled distance (joint convexity), computed "
        "exactly, for each pair under the better of two couplings valid over "
        "all of Theta's box: the swap coupling (only the {records} records "
        "whose group differs between the two secrets may be counted "
        "differently, each with probability at most {gap:.4g}) and the "
        "quantile coupling bounded at the box's corners", "records", "gap"),
    "closeness.box": _kind(
        "the supremum over the box of the infinity-Wasserstein distance "
        "between the exact count laws, which bounds (W, delta)-closeness"),
    "closeness.w-inf": _kind(
        "the infinity-Wasserstein distance between {laws}, which bounds (W, "
        "delta)-closeness (Chen Thm 3.1-3.2)", "laws"),
    "closeness.order-statistics": _kind(
        "from {coupling}, read from {laws} (Chen Def 3.2, Thm 3.2); delta = "
        "{delta:.3g} disregarded mass", "coupling", "laws", "delta"),
    "closeness.moments": _kind(
        "from {coupling}, the law of the statistic under the resampling model "
        "bounded from the groups' reference values (Chen Def 3.2, Thm 3.2); "
        "delta = {delta:.3g} disregarded mass", "coupling", "delta"),
    "closeness.drawn": _kind(
        "from {coupling} by order statistics of {draws} drawn datasets per "
        "property value (Chen Thm 3.2 and the remark after it); delta = "
        "{delta:.3g} disregarded mass + {beta:.3g} chance the draws misjudge "
        "a quantile", "coupling", "draws", "delta", "beta"),
    "draws.unused": _kind("{bound} + {beta:.3g} unused for draws", "bound",
                          "beta"),
    "laws.exact-counts": _kind("the exact laws of the count or sum"),
    "laws.network": _kind(
        "the exact laws of the count given the secret node's parameter, "
        "mixtures of binomials over the network"),
    "laws.resampling": _kind(
        "the exact laws of every dataset of the resampling model"),
    "laws.order-statistics": _kind(
        "the exact laws of the order statistics that make up each quantile (or "
        "bracket it), by convolution of the groups' {counts} counts below each "
        "reference value, rounding errors counted", "counts"),
    "upper-bound": _kind("{laws} (an upper bound)", "laws"),
    "coupling.quantile": _kind(
        "the quantile coupling over levels [{low:.3g}, 1 - {low:.3g}]", "low"),
    "coupling.quantile.drawn": _kind(
        "{coupling}, quantiles bounded at {levels} levels", "coupling",
        "levels"),
    "coupling.quantile.moments": _kind(
        "{coupling}, each quantile between its Chernoff and Berry-Esseen "
        "bounds", "coupling"),
    "coupling.boxes": _kind(_boxes, "mass", "faces"),
    "coupling.swap": _kind(
        "the swap coupling: datasets that differ in the swapped group records, "
        "their difference bounded by Chernoff tails of its moment generating "
        "function"),
    # What is done after the certificate: exact sampling, post-processing.
    "secure": _kind(
        "secure: {noise} (Canonne, Kamath and Steinke 2020), the statistic "
        "rounded to the grid, the guarantee widened from ({epsilon:.6g}, "
        "{delta:.6g}) by eta = {eta:.3g} per statistic (Mironov 2012)",
        "noise", "epsilon", "delta", "eta"),
    "post-processed.clamped": _kind(
        "post-processed: each value clamped to what its statistic can take "
        "(the clipping range, 0 to n for a count, 0 to 1 for a proportion; "
        "free: post-processing, and never further from the true value)"),
    "post-processed.monotone": _kind(
        "post-processed: each column's quantiles sorted into the order of "
        "their levels (free: post-processing)"),
    "stated": _kind("{text}", "text"),
}


class _Record:
    """A kind and its parameters, rendered from the table of its class."""

    _TABLE: ClassVar[dict[str, _Kind]] = {}
    kind: str
    parameters: tuple

    def __post_init__(self):
        what = type(self).__name__
        entry = self._TABLE.get(self.kind) if isinstance(self.kind, str) else None
        if entry is None:
            raise ValueError(f"{what} kind {self.kind!r} is unknown; the kinds "
                             f"are {sorted(self._TABLE)}.")
        try:
            values = dict(self.parameters)
        except (TypeError, ValueError):
            raise ValueError(f"{what} parameters must be (name, value) pairs; "
                             f"got {self.parameters!r}.") from None
        if len(values) != len(self.parameters) or set(values) != set(
                entry.parameters):
            raise ValueError(
                f"{what} {self.kind!r} takes the parameters "
                f"{list(entry.parameters)}; got {[k for k, _ in self.parameters]}.")
        # One order (the table's), so that equal records compare equal.
        object.__setattr__(self, "parameters", tuple(
            (name, values[name]) for name in entry.parameters))
        try:
            hash(self.parameters)
        except TypeError:
            raise ValueError(f"{what} {self.kind!r} takes hashable parameter "
                             f"values (numbers, strings, tuples, records); got "
                             f"{self.parameters!r}.") from None
        if entry.check is not None:
            try:
                entry.check(**values)
            except ValueError as exc:
                raise ValueError(f"{what} {self.kind!r} does not hold together: "
                                 f"{exc}") from None
        try:
            str(self)
        except (TypeError, ValueError, KeyError, IndexError) as exc:
            raise ValueError(f"{what} {self.kind!r} cannot be rendered with "
                             f"{self.parameters!r} ({exc!r}).") from None

    @classmethod
    def of(cls, kind: str, **parameters):
        """Return the record of ``kind`` with these parameters."""
        return cls(kind, tuple(parameters.items()))

    @property
    def params(self) -> dict:
        """The parameters as a dict (a copy)."""
        return dict(self.parameters)

    @property
    def text(self) -> str:
        """The prose a certificate shows."""
        return self._TABLE[self.kind].render(dict(self.parameters))

    def __str__(self) -> str:
        return self.text

    def __format__(self, spec: str) -> str:
        return format(self.text, spec)

    def _records(self):
        """Yield this record and every record among its parameters."""
        yield self
        for _, value in self.parameters:
            if isinstance(value, _Record):
                yield from value._records()


@persistable
@dataclass(frozen=True)
class Assumption(_Record):
    """One thing a certificate takes for granted.

    Parameters
    ----------
    kind : str
        What is assumed: a key of :data:`ASSUMPTIONS` (``"law.gaussian"``,
        ``"theta.plug-in"``, ``"covariances.equal"``, ...).
    parameters : tuple of (str, object)
        Its parameters, in the order the table declares (``(("gap",
        0.0276),)``); :meth:`of` takes them by keyword.

    Attributes
    ----------
    opt_in : bool
        The user took it with an option whose default does not.
    option : str or None
        That option's setting (``"law='gaussian'"``); None when not opt-in.
    params : dict
        The parameters by name.
    text : str
        The prose a certificate shows (also ``str(assumption)``).

    Examples
    --------
    >>> from skattr import Assumption
    >>> gap = Assumption.of("covariances.equal", gap=0.0276)
    >>> gap.opt_in, gap.option, gap.params
    (True, "law=AssumeGaussian(covariances='assume-equal')", {'gap': 0.0276})
    >>> str(gap)[:60]
    'ASSUMED: the laws under the two secrets of a pair are transl'
    """

    _TABLE: ClassVar[dict[str, _Kind]] = ASSUMPTIONS

    kind: str
    parameters: tuple = ()

    @property
    def opt_in(self) -> bool:
        """Whether the user took it with an option whose default does not."""
        return ASSUMPTIONS[self.kind].option is not None

    @property
    def option(self) -> str | None:
        """The setting that opted into it (``"theta='moments'"``), or None."""
        option = ASSUMPTIONS[self.kind].option
        return None if option is None else option.format_map(self.params)

    @classmethod
    def from_text(cls, text: str) -> Assumption:
        """Return the record of a prose assumption (a 0.2 file's, one's own).

        The text of a kind without parameters gives that kind; any other
        text is kept as a ``"stated"`` assumption, its prose alone (not
        opt-in: skattr cannot tell).
        """
        return _PLAIN_ASSUMPTIONS.get(text) or cls.of("stated", text=str(text))


#: The texts of the kinds with no parameters, for prose read back.
_PLAIN_ASSUMPTIONS = {entry.render({}): Assumption(kind)
                      for kind, entry in ASSUMPTIONS.items()
                      if not entry.parameters}


@persistable
@dataclass(frozen=True)
class MethodStep(_Record):
    """One step of how a certificate was made (a key of :data:`STEPS`).

    A step's parameters may be other steps: a Wasserstein bound names the
    laws it was read from (``"laws.order-statistics"``) and the coupling.
    ``str(step)`` is its prose.
    """

    _TABLE: ClassVar[dict[str, _Kind]] = STEPS

    kind: str
    parameters: tuple = ()


@persistable
@dataclass(frozen=True)
class Method:
    """How a certificate was made: its steps, in order.

    ``str(method)`` is the prose a release shows ("certified by"): the steps'
    texts joined by "; ". The first step is the calibration (``kind``); later
    ones adjust it (noise scaled to certify unequal covariances, the exact
    laws, Thm 4.7's extra noise, exact sampling, post-processing).

    Parameters
    ----------
    steps : tuple of MethodStep

    Examples
    --------
    >>> from skattr import Method
    >>> method = Method.of("expm.gaussian").then("scaled.every-pair", factor=1.2)
    >>> method.kind, method.uses("scaled.every-pair")
    ('expm.gaussian', True)
    >>> str(method)[:47]
    'N(0, (Delta_E,2 / mu)^2 I) (Thm 4.2); scaled by'
    """

    steps: tuple = ()

    def __post_init__(self):
        steps = tuple(self.steps)
        if not all(isinstance(s, MethodStep) for s in steps):
            raise ValueError(f"A Method's steps are MethodStep records; got "
                             f"{steps!r}.")
        object.__setattr__(self, "steps", steps)

    @classmethod
    def of(cls, kind: str, **parameters) -> Method:
        """Return the method of one step."""
        return cls((MethodStep.of(kind, **parameters),))

    @classmethod
    def from_text(cls, text: str) -> Method:
        """Return the record of a prose method (a 0.2 file's, one's own).

        The text of one step without parameters gives that step; any other
        text is kept as one ``"stated"`` step, its prose alone.
        """
        if not text:
            return cls()
        return cls((_PLAIN_STEPS.get(text) or MethodStep.of("stated",
                                                            text=str(text)),))

    def then(self, step: str | MethodStep, **parameters) -> Method:
        """Return this method followed by ``step`` (a record, or its kind)."""
        if not isinstance(step, MethodStep):
            step = MethodStep.of(step, **parameters)
        elif parameters:
            raise TypeError("Give a step's parameters with its kind, not with "
                            "a MethodStep.")
        return Method(self.steps + (step,))

    @property
    def kind(self) -> str:
        """The first step's kind: how the noise was calibrated ("" if none)."""
        return self.steps[0].kind if self.steps else ""

    def find(self, kind: str) -> MethodStep | None:
        """Return the first step of ``kind``, nested ones included, or None."""
        for step in self.steps:
            for record in step._records():
                if record.kind == kind:
                    return record
        return None

    def uses(self, kind: str) -> bool:
        """Whether a step of ``kind`` (nested ones included) made it."""
        return self.find(kind) is not None

    @property
    def text(self) -> str:
        """The prose a certificate shows (also ``str(method)``)."""
        return "; ".join(step.text for step in self.steps)

    def __str__(self) -> str:
        return self.text

    def __format__(self, spec: str) -> str:
        return format(self.text, spec)


#: The texts of the steps with no parameters, for prose read back.
_PLAIN_STEPS = {entry.render({}): MethodStep(kind)
                for kind, entry in STEPS.items() if not entry.parameters}


def unique(records) -> tuple:
    """Return ``records`` without repeated texts, in order (the first kept)."""
    seen = {}
    for record in records:
        seen.setdefault(str(record), record)
    return tuple(seen.values())
