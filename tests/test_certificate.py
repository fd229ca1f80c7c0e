"""Typed certificates: assumptions and methods as records, their prose rendered.

The prose of every kind is pinned here, word for word as skattr 0.2 printed
it (certificates are compared bit for bit), so a text cannot drift silently;
every kind in the tables renders and is produced somewhere in skattr.
"""

import ast
import hashlib
import json
import string
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import skattr
from skattr import Assumption, Method, MethodStep
from skattr._certificate import ASSUMPTIONS, STEPS, unique
from skattr._persistence import canonical
from skattr._release import Certificate, Plan, Release
from skattr.datasets import make_hospital
from skattr.exceptions import PersistenceError
from skattr.laws import AssumeGaussian
from skattr.noise import GaussianNoise, LaplaceNoise

DATA = Path(__file__).parent / "data"
SECRET = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])

ASSUMED_GAP = (
    "ASSUMED: the laws under the two secrets of a pair are translations of each "
    "other (equal covariances), though the modelled covariances differ by up to "
    "2.76%, as in the papers' experiments (Chen & Ohrimenko App. C.1); the "
    "guarantee holds only under that assumption")

#: kind -> (parameters, the text skattr 0.2 printed).
ASSUMPTION_TEXTS = {
    "theta.bootstrap": ({"replicates": 50}, (
        "Theta is the worst case over the reference's fit and 50 stratified "
        "bootstrap replicates: a measured safeguard against the reference's "
        "sampling error, not a confidence set, so the certificate is not "
        "proven to hold for the population the reference was sampled from "
        "(docs/population.md)")),
    "theta.plug-in": ({}, (
        "ASSUMED (theta='moments'): the reference's group moments or "
        "frequencies are the population's (plug-in), with no allowance for "
        "their estimation error; theta='auto' takes a count's confidence box "
        "(valid for the population) or the worst case over bootstrap "
        "replicates")),
    "law.gaussian": ({}, (
        "ASSUMED (law='gaussian'): F(X) given each secret is Gaussian with the "
        "modelled mean and covariance; the shape of its law is not checked "
        "against the data")),
    "law.exact": ({}, (
        "the law of F(X) given each secret is exact: records are independent "
        "draws from their group's value frequencies, estimated from the "
        "reference data (law='exact')")),
    "reference.sample": ({"confidence": 0.999}, (
        "the reference data are a random sample of the population (records "
        "independent given the sensitive attribute); the counting "
        "probabilities lie in their simultaneous Clopper-Pearson intervals, "
        "which holds with probability at least 0.999 over the reference "
        "sample")),
    "records.neighbours": ({"inside": 298, "outside": 298}, (
        'neighbours: one record replaced by any other, its group included, '
        'both datasets holding at least 298 of the group and 298 others '
        '(fewer is refused; the refusal not covered)')),
    "learner.as-stated": ({"steps": "ColumnTransformer", "functions": "",
                           "classes": ""}, (
        "the wrapped learner is differentially private for one record "
        "replaced as its library states it (its optimiser taken as exact), "
        "its bounds stated, not read from the data, its noise unseeded; its "
        "other steps (ColumnTransformer) learn nothing from the data; its "
        "library's accountant is not spent (this is the account)")),
    "records.same-group": ({"inside": 298, "outside": 298}, (
        "ASSUMED (neighbours='same-group'): a record's group is public; "
        "neighbours differ in one record's other values, both holding at "
        'least 298 of the group and 298 others')),
    "records.independent": ({"reads": "values", "privacy": "distributional"}, (
        "records are independent given the sensitive attribute and take the "
        "column's values with the stated probabilities (distributional "
        "attribute privacy)")),
    "reference.band": ({"confidence": 0.999}, (
        "the reference data are a random sample of the population (records "
        "independent given the sensitive attribute); each group's distribution "
        "function lies in its confidence band (Dvoretzky-Kiefer-Wolfowitz with "
        "Massart's constant, narrowed in the tails by the order statistics' "
        "Beta laws), all of them at once with probability at least 0.999 over the "
        "reference sample, and every value (clipped) in the clipping range")),
    "resampling-model": ({"privacy": "dataset"}, (
        "the data are distributed as the resampling model says (datasets drawn "
        "from the reference data; dataset privacy)")),
    "secret.grid": ({"secret": "proportion(g == 1): pairs 0.4 vs 0.6",
                     "n": 747, "stated": ((0.4, 0.6),),
                     "sides": (((298, 299), (448, 449)),),
                     "certified": ((298, 448), (298, 449), (299, 448),
                                   (299, 449))}, (
        "proportion(g == 1): on n = 747 records a share is a whole number of "
        "records, so the stated pairs are read as the datasets around them: "
        "0.4 vs 0.6 as 298 or 299 vs 448 or 449 records, each of the 4 pairs "
        "certified")),
    "secret.set-reading": ({"reading": "conditional-mean"}, (
        "set secrets compared by their conditional-mean reading: F given g in a "
        "set is taken to be Gaussian with the reading's mean and covariance")),
    "covariances.equal": ({"gap": 0.027612}, ASSUMED_GAP),
    "covariances.certified": ({"gap": 0.2227}, (
        "the two sides' covariances differ by up to 22.27% and the certificate "
        "covers that")),
    "laws.translations": ({}, (
        "the laws of F under the two secrets of each pair are translations of "
        "each other (Chen & Ohrimenko Thm 4.1, 4.3)")),
    "relaxation.max-divergence": ({"lambda_eta": 0.05, "eta": 1e-5}, (
        "the modelled law of F(X) given each secret and its true law are within "
        "1e-05-approximate max-divergence 0.05 of each other, both ways (Zhang "
        "et al. Alg. 2; certificate of Chen & Ohrimenko Thm 4.6, which corrects "
        "Zhang et al. Thm 3)")),
    "relaxation.wasserstein": ({"wasserstein_w": 0.3, "wasserstein_lambda": 0.1}, (
        "the modelled laws are within infinity-Wasserstein distance 0.3 of the "
        "true ones (Thm 4.7); the expected error is then the root-mean-square "
        "norm (an upper bound)")),
    "network.counted": ({"reads": ("height", "sat")}, (
        "the attribute parameters follow the stated Bayesian network (Theta); "
        "given them the records are independent and each is counted with the "
        "stated probability, a function of ['height', 'sat'] (distributional "
        "attribute privacy)")),
    "network.parameters": ({}, (
        "the attribute parameters follow the stated Bayesian network (Theta); "
        "the columns are independent given the parameters")),
    "network.secret-parameter": ({}, (
        "the secret is the sensitive node's parameter: any two values of its "
        "grid are hidden (Def. 7)")),
    "network.entries": ({}, "the entries follow the stated Bayesian network"),
    "quilt.declared-bounds": ({}, "each record clipped to its declared bounds"),
    "quilt.zero-one": ({}, "counts and proportions: each record contributes 0 or 1"),
    "dp.neighbours": ({"n": 120}, (
        "neighbouring datasets differ by replacing one record (n = 120 public); "
        "this does not hide global properties of the data")),
    "dp.group-neighbours": ({"k": 50, "n": 50}, (
        "neighbouring datasets differ by replacing up to k = 50 of the n = 50 "
        "records (n public); as every record may change, every pair of datasets "
        "of n records is covered, whatever global property separates them")),
    "dp.declared-bounds": ({"bounds": (("weight", 50.0, 350.0), (3, -1.5, 2))}, (
        "each record clipped to its declared bounds: weight in [50, 350], 3 in "
        "[-1.5, 2]")),
    "dp.zero-one": ({}, "each record contributes 0 or 1 to a count or proportion"),
    "stated": ({"text": "x < y"}, "x < y"),
}

_COUNTS = MethodStep.of("laws.exact-counts")
_ORDER = MethodStep.of("laws.order-statistics", counts="hypergeometric")
_QUANTILE = MethodStep.of("coupling.quantile", low=0.0005)
_ORDER_TEXT = (
    "the exact laws of the order statistics that make up each quantile (or "
    "bracket it), by convolution of the groups' hypergeometric counts below "
    "each reference value, rounding errors counted")
_TWO_GAUSSIANS = MethodStep.of("profile.two-gaussians")

#: kind -> (parameters, the text skattr 0.2 printed).
STEP_TEXTS = {
    "gaussian.calibration": ({"calibration": "classic"},
                             "classic Gaussian calibration"),
    "gaussian.calibration.mahalanobis": (
        {"calibration": "analytic"},
        "analytic Gaussian calibration (Mahalanobis distance)"),
    "gaussian.classic-checked": ({}, (
        "classic Gaussian calibration on each side's covariance, checked by the "
        "exact privacy profile of the unequal covariances")),
    "profile.two-gaussians": ({}, "exact privacy profile of two Gaussians"),
    "profile.unequal-variances": ({}, (
        "exact privacy profile of two Gaussians with unequal variances")),
    "profile.unequal-covariances": ({}, (
        "exact privacy profile of two Gaussians with unequal covariances "
        "(generalised chi-square, numerical inversion rounded up)")),
    "exact-laws.gaussian-noise": ({}, (
        "exact laws of the statistic plus Gaussian noise: privacy profile "
        "computed numerically, rounded up")),
    "classic.achieved-delta": (
        {"achieved": 0.0034123456, "epsilon": 10.0, "requested": 1e-3}, (
            "the classic constant's noise achieves delta 0.003412 at epsilon "
            "10, not the requested 0.001 (exact profile), and the release "
            "states it")),
    "expm.laplace": ({}, (
        "Laplace scale Delta_E,1 / epsilon on each statistic (Thm 4.1)")),
    "expm.gaussian": ({}, "N(0, (Delta_E,2 / mu)^2 I) (Thm 4.2)"),
    "dirm.laplace": ({"dimension": 2}, (
        "Laplace noise on the 2-dimensional span of the mean differences "
        "(Thm 4.3)")),
    "dirm.gaussian": ({"dimension": 1}, (
        "N(0, (Delta_E,2 / mu)^2 V V^T) on the 1-dimensional span of the mean "
        "differences (Sec. 4.2)")),
    "eigm": ({}, ("sigma_k^2 = max(0, (Delta_E,2 / mu)^2 - lambda_k) along the "
                  "covariance's eigenvectors (Thm 4.5)")),
    "daum": ({}, ("sigma^2 = max(0, (alpha / mu)^2 - 1 / (v^T Sigma^-1 v)) "
                  "along v (App. A.2, Alg. 1, closed form)")),
    "no-mean-difference": ({}, "no mean difference: no noise"),
    "least-error": ({}, (
        "least-error noise covariance certifying every pair (semidefinite "
        "program and the Expected Value shapes)")),
    "least-error.unequal": (
        {"profile": MethodStep.of("profile.unequal-covariances")}, (
            "least-error noise over rank-one-plus-isotropic and eigen-aligned "
            "covariances and the Expected Value shapes, certified by the exact "
            "privacy profile of two Gaussians with unequal covariances "
            "(generalised chi-square, numerical inversion rounded up)")),
    "zero-noise-replaced": ({}, "the formula's zero noise did not certify"),
    "exact-laws.raised": ({"variance": 3819.4}, (
        "raised to variance 3819 to certify the exact laws")),
    "exact-laws.profile": ({}, (
        "exact laws of the statistic plus the noise: privacy profile computed "
        "numerically, rounded up")),
    "scaled.unequal-covariances": (
        {"factor": 1.72512, "profile": _TWO_GAUSSIANS}, (
            "scaled by 1.725 to certify unequal covariances (exact privacy "
            "profile of two Gaussians)")),
    "scaled.every-pair": ({"factor": 1.0312}, (
        "scaled by 1.031 to certify every pair (the theorem's assumptions hold "
        "only approximately)")),
    "relaxation.wasserstein": ({"scale": 3.0}, (
        "plus Laplace(3) on each statistic (Thm 4.7)")),
    "dp.laplace": ({"k": 50, "l1": 6.0, "epsilon": 1}, (
        "Laplace mechanism: scale b = k l1 / epsilon = 50 x 6 / 1 on each "
        "statistic (Dwork & Roth Thm 3.6)")),
    "dp.gaussian": ({"sigma": 15.447912}, (
        "Gaussian mechanism, N(0, sigma^2 I) with sigma = 15.4479")),
    "dp.gaussian.analytic": ({"mu": 0.3884012}, (
        "analytic calibration (Balle & Wang 2018): sigma = k l2 / mu, "
        "mu = 0.388401")),
    "dp.gaussian.classic": ({"mu": 0.2617}, (
        "classic constant: sigma = k l2 sqrt(2 ln(1.25/delta)) / epsilon (Dwork "
        "& Roth Thm A.1), mu = 0.2617")),
    "dp.achieved-delta": ({"epsilon": 20, "achieved": 0.09712, "requested": 1e-3}, (
        "at epsilon 20 this noise achieves delta 0.09712, not the requested "
        "0.001 (exact profile), and the release states it")),
    "quilt.zhang": (
        {"scale": 1235.0, "quilts": (("income", (), 0.0, ("height", "sat")),
                                     ("age", ("height", "sat"), 0.27031, ()))}, (
            "Markov quilt (Zhang et al. Alg. 2): Laplace scale 1235 = max over "
            "sensitive nodes of min over quilts of Delta_(A and N) F / (epsilon "
            "- e); income: Q = {}, e = 0, near ['height', 'sat']; age: Q = "
            "{height, sat}, e = 0.2703, near []")),
    "quilt.swc": ({"lipschitz": 0.005, "b_max": 31.73781}, (
        "Markov Quilt Mechanism (Song, Wang and Chaudhuri, Alg. 5): Laplace(L "
        "b_max), L = 0.005, b_max = 31.7378")),
    "wasserstein": (
        {"bound": MethodStep.of("w-inf.largest", laws=_COUNTS)}, (
            "Laplace(W / epsilon), W the largest infinity-Wasserstein distance "
            "between the exact laws of the count or sum (Zhang Alg. 4)")),
    "w-inf.largest": ({"laws": MethodStep.of("laws.network")}, (
        "the largest infinity-Wasserstein distance between the exact laws of "
        "the count given the secret node's parameter, mixtures of binomials "
        "over the network (Zhang Alg. 4)")),
    "w-inf": ({"laws": MethodStep.of("upper-bound", laws=_ORDER)}, (
        f"the infinity-Wasserstein distance between {_ORDER_TEXT} (an upper "
        "bound) (Chen Thm 3.1)")),
    "closeness.exact": ({"laws": _COUNTS}, (
        "the least (W, delta)-closeness of the exact laws of the count or sum "
        "(Chen Def 3.2, Thm 3.2)")),
    "closeness.band": ({"records": 20}, (
        "from the swap coupling over the groups' confidence bands: only the 20 "
        "records whose group differs between the two secrets may differ, each "
        "by at most the gap between the groups' quantile functions over the "
        "bands; W the upper delta-quantile of their summed gaps (Chen Def 3.2, "
        "Thm 3.2)")),
    "closeness.band.weighted": ({"records": 20, "weight": 1 / 160}, (
        "from the swap coupling over the groups' confidence bands: only the 20 "
        "records whose group differs between the two secrets may differ, each "
        "by at most the gap between the groups' quantile functions over the "
        "bands; W the upper delta-quantile of their summed gaps times 1 / 160 "
        "(the most the statistic moves when one record's value moves by 1; a "
        "trimmed mean's, of n records cutting g from each end: 1 / (n - 2g); "
        "Chen Def 3.2, Thm 3.2)")),
    "w-inf.swap": ({"records": 20}, (
        "the swap coupling's bound over Theta's box: only the 20 records whose "
        "group differs between the two secrets may be counted differently")),
    "closeness.order-band": ({"level": 0.5}, (
        "from the quantile coupling of the 0.5-quantile's laws, worst case over "
        "every pair of group laws in the confidence bands that the two secrets "
        "share (its distribution function is monotone in theirs); W the "
        "largest gap on all but delta of the levels (Chen Def 3.2, Thm 3.2)")),
    "w-inf.range": ({}, (
        "the clipping range: every released value lies in it")),
    "closeness.joint-band": ({"statistics": 3}, (
        "per value (3 of them), over the groups' confidence bands: only the "
        "records whose group differs between the two secrets may differ, each "
        "one's two rows drawn independently from the two groups' laws; W_j "
        "bounds value j's move but with chance delta / 3 (a quantile: "
        "counting the shared and moved records around it, or, under "
        "distributional privacy, between its two laws' tails, at the bands' "
        "extremes; a std: its centred squares' bound; a sum: exact sums of "
        "the bands' extreme laws, and Chernoff's bound), and value j gets "
        "Laplace(3 W_j / epsilon): the noises' privacy loss is at most "
        "epsilon but with chance delta (a union bound over the values; Chen "
        "Def 3.2, Thm 3.2)")),
    "joint-coupled": ({"statistics": 3, "noise": "Gaussian", "bound": "jensen"}, (
        "per value (3 of them), over the groups' confidence bands: only the "
        "records whose group differs between the two secrets may differ, each "
        "one's two rows drawn independently from the two groups' laws; each "
        "value's move has a law that dominates it, their dependence unknown; "
        "the Gaussian noise on each value is certified for every dependence "
        "by joint convexity of the hockey-stick divergence, the expected "
        "divergence bounded from the values' laws alone (jensen bound)")),
    "noise.allocated": ({"by": "reference"}, (
        "the noise shared among the values in proportion to each one's value "
        "in the reference data (allocate='relative'): where the noise goes, "
        "not the guarantee, changes")),
    "w-inf.joint-band": ({"statistics": 3}, (
        "per value (3 of them): each anywhere in its range (a quantile's "
        "clipping range, a std's largest, a sum's every moved record across "
        "its range), and value j gets Laplace(3 W_j / epsilon)")),
    "closeness.std-band": ({}, (
        "from the groups' confidence bands: only the records whose group "
        "differs between the two secrets may differ, each one's two values "
        "drawn independently from the two groups' laws; the variance moves by "
        "at most the moved records' centred squares and their mean's square, "
        "the centre anywhere the dataset's mean may be, and the std by that "
        "over the sum of the two stds, each bounded below; each "
        "part's tail at delta / 12 (Chernoff's bound and exact sums of the "
        "bands' extreme laws; Chen Def 3.2, Thm 3.2)")),
    "w-inf.band": ({}, (
        "the largest distance of the swap coupling over the groups' confidence "
        "bands")),
    "w-inf.band.weighted": ({"weight": 0.3}, (
        "the largest distance of the swap coupling over the groups' confidence "
        "bands: the moved records' largest summed gaps times 0.3 (the most the "
        "statistic moves when one record's value moves by 1; a trimmed mean's, "
        "of n records cutting g from each end: 1 / (n - 2g))")),
    "coupling.gaussian-noise.band": ({"records": 20}, (
        "Gaussian noise through the swap coupling: delta at most the expected "
        "Gaussian delta of the coupled distance (joint convexity), computed "
        "exactly; only the 20 records whose group differs between the two "
        "secrets may differ, each by at most the gap between the two groups' "
        "quantile functions over their confidence bands")),
    "zcdp.group-means": ({"columns": 2, "rho_inside": 0.01,
                          "rho_outside": 0.01, "composition": "added"}, (
        "each group's clipped means of 2 column(s) with Gaussian noise for "
        "sensitivity (high - low) / s a column, s its public size, the "
        "subsamples coupled between neighbours; rho 0.01 and 0.01, added; "
        "converted to (epsilon, delta) (Bun and Steinke, Prop. 1.3)")),
    "closeness.coupled": ({"records": 20, "gap": 0.3}, (
        "W the upper delta-quantile of the coupled distance ((W, "
        "delta)-closeness), for each pair under the better of two couplings "
        "valid over all of Theta's box: the swap coupling (only the 20 records "
        "whose group differs between the two secrets may be counted "
        "differently, each with probability at most 0.3: at most Binomial(20, "
        "0.3)) and the quantile coupling bounded at the box's corners")),
    "subsample.public-sizes": ({"inside": 298, "outside": 298, "n": 747,
                                "left_out": 151, "failure": ""}, (
        'each group subsampled at random, independently of the values, to a'
        ' public size (298 of the group and 298 others of 747; 151 unread):'
        ' one law under every secret, the share moving nothing released '
        '(docs/synthetic.md)')),
    "learner.differential-privacy": ({
        "learners": "diffprivlib LogisticRegression epsilon 1",
        "epsilon": 1.0, "delta": 0.0,
        "composition": "a record's group public"}, (
        "the wrapped learner's own differential privacy (diffprivlib "
        "LogisticRegression epsilon 1), added over its differentially "
        "private steps (basic composition): (1, 0) for one record of the "
        "subsample replaced; a record's group public")),
    "zcdp.group-histograms": ({"marginals": 64, "rounds": "one round",
                               "rho_inside": 0.01, "rho_outside": 0.01,
                               "composition": "added"}, (
        "each group's histograms (64 marginals, one round) with Gaussian "
        'noise for l2 sensitivity sqrt(2) / s a marginal, s its public '
        'size, the subsamples coupled between neighbours; rho 0.01 and '
        '0.01, added; converted to (epsilon, delta) (Bun and Steinke, Prop.'
        ' 1.3)')),
    "coupling.gaussian-noise": ({"records": 20, "gap": 0.3}, (
        "Gaussian noise through a coupling: delta at most the expected "
        "Gaussian delta of the coupled distance (joint convexity), computed "
        "exactly, for each pair under the better of two couplings valid over "
        "all of Theta's box: the swap coupling (only the 20 records whose "
        "group differs between the two secrets may be counted differently, "
        "each with probability at most 0.3) and the quantile coupling bounded "
        "at the box's corners")),
    "closeness.box": ({}, (
        "the supremum over the box of the infinity-Wasserstein distance between "
        "the exact count laws, which bounds (W, delta)-closeness")),
    "closeness.w-inf": ({"laws": MethodStep.of("laws.resampling")}, (
        "the infinity-Wasserstein distance between the exact laws of every "
        "dataset of the resampling model, which bounds (W, delta)-closeness "
        "(Chen Thm 3.1-3.2)")),
    "closeness.order-statistics": (
        {"coupling": _QUANTILE, "laws": _ORDER, "delta": 0.001}, (
            "from the quantile coupling over levels [0.0005, 1 - 0.0005], read "
            f"from {_ORDER_TEXT} (Chen Def 3.2, Thm 3.2); delta = 0.001 "
            "disregarded mass")),
    "closeness.moments": ({"coupling": MethodStep.of("coupling.swap"),
                           "delta": 0.0009}, (
        "from the swap coupling: datasets that differ in the swapped group "
        "records, their difference bounded by Chernoff tails of its moment "
        "generating function, the law of the statistic under the resampling "
        "model bounded from the groups' reference values (Chen Def 3.2, Thm "
        "3.2); delta = 0.0009 disregarded mass")),
    "closeness.drawn": (
        {"coupling": MethodStep.of("coupling.boxes", mass=0.225, faces="drawn"),
         "draws": 20000, "delta": 0.45, "beta": 0.05}, (
            "from boxes holding all but 0.225 of each law, faces bounded by "
            "order statistics of 20000 drawn datasets per property value (Chen "
            "Thm 3.2 and the remark after it); delta = 0.45 disregarded mass + "
            "0.05 chance the draws misjudge a quantile")),
    "draws.unused": (
        {"bound": MethodStep.of("closeness.moments", coupling=MethodStep.of(
            "coupling.boxes", mass=0.0009, faces="chernoff"), delta=0.0009),
         "beta": 0.0001}, (
            "from boxes holding all but 0.0009 of each law, faces at Chernoff "
            "tails of the moment generating function, the law of the statistic "
            "under the resampling model bounded from the groups' reference "
            "values (Chen Def 3.2, Thm 3.2); delta = 0.0009 disregarded mass + "
            "0.0001 unused for draws")),
    "laws.exact-counts": ({}, "the exact laws of the count or sum"),
    "laws.network": ({}, (
        "the exact laws of the count given the secret node's parameter, "
        "mixtures of binomials over the network")),
    "laws.resampling": ({}, (
        "the exact laws of every dataset of the resampling model")),
    "laws.order-statistics": ({"counts": "hypergeometric"}, _ORDER_TEXT),
    "upper-bound": ({"laws": _ORDER}, f"{_ORDER_TEXT} (an upper bound)"),
    "coupling.quantile": ({"low": 0.00045}, (
        "the quantile coupling over levels [0.00045, 1 - 0.00045]")),
    "coupling.quantile.drawn": ({"coupling": _QUANTILE, "levels": 65}, (
        "the quantile coupling over levels [0.0005, 1 - 0.0005], quantiles "
        "bounded at 65 levels")),
    "coupling.quantile.moments": ({"coupling": _QUANTILE}, (
        "the quantile coupling over levels [0.0005, 1 - 0.0005], each quantile "
        "between its Chernoff and Berry-Esseen bounds")),
    "coupling.boxes": ({"mass": 0.005, "faces": "exact"}, (
        "boxes holding all but 0.005 of each law, faces at exact tails")),
    "coupling.swap": ({}, (
        "the swap coupling: datasets that differ in the swapped group records, "
        "their difference bounded by Chernoff tails of its moment generating "
        "function")),
    "secure": (
        {"noise": "discrete Laplace(0, 24) on the grid 2^-36 on each statistic, "
                  "sampled exactly", "epsilon": 1.0, "delta": 0.0,
         "eta": 6.0633e-13}, (
            "secure: discrete Laplace(0, 24) on the grid 2^-36 on each "
            "statistic, sampled exactly (Canonne, Kamath and Steinke 2020), the "
            "statistic rounded to the grid, the guarantee widened from (1, 0) by "
            "eta = 6.06e-13 per statistic (Mironov 2012)")),
    "post-processed.clamped": ({}, (
        "post-processed: each value clamped to what its statistic can take "
        "(the clipping range, 0 to n for a count, 0 to 1 for a proportion; "
        "free: post-processing, and never further from the true value)")),
    "post-processed.monotone": ({}, (
        "post-processed: each column's quantiles sorted into the order of their "
        "levels (free: post-processing)")),
    "stated": ({"text": "test plan"}, "test plan"),
}

#: The opt-in assumptions and the settings that take them.
OPT_IN = {
    "theta.plug-in": "theta='moments'",
    "law.gaussian": "law='gaussian'",
    "covariances.equal": "law=AssumeGaussian(covariances='assume-equal')",
    "secret.set-reading": "set_reading='conditional-mean'",
    "relaxation.max-divergence": "relaxation=MaxDivergenceGap(lam=0.05, eta=1e-05)",
    "relaxation.wasserstein": "relaxation=WassersteinGap(w=0.3, lam=0.1)",
    "records.same-group": "neighbours='same-group'",
}


# -------------------------------------------------------- every kind, its text


def test_every_kind_has_its_text_pinned():
    assert set(ASSUMPTION_TEXTS) == set(ASSUMPTIONS)
    assert set(STEP_TEXTS) == set(STEPS)


@pytest.mark.parametrize("kind", sorted(ASSUMPTION_TEXTS))
def test_each_assumption_renders_its_text(kind):
    params, text = ASSUMPTION_TEXTS[kind]
    record = Assumption.of(kind, **params)
    assert str(record) == record.text == f"{record}" == text
    assert record.kind == kind and record.params == params


@pytest.mark.parametrize("kind", sorted(STEP_TEXTS))
def test_each_method_step_renders_its_text(kind):
    params, text = STEP_TEXTS[kind]
    step = MethodStep.of(kind, **params)
    assert str(step) == step.text == text
    assert str(Method((step,))) == text
    assert Method((step,)).kind == kind and step.params == params


def _produced_kinds() -> set:
    """The kinds skattr's modules build: ``X.of("kind", ...)``, ``then("kind")``."""
    root = Path(skattr.__file__).parent
    kinds = set()
    for path in root.rglob("*.py"):
        if path.name == "_certificate.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("of", "then") and node.args
                    and isinstance(node.args[0], ast.Constant)
                    and isinstance(node.args[0].value, str)):
                kinds.add(node.args[0].value)
    return kinds


@pytest.mark.slow
def test_every_kind_is_produced_by_skattr():
    # "stated" is what prose becomes (from_text); every other kind has a
    # producer, and no producer names a kind the tables lack.
    produced = _produced_kinds()
    assert set(ASSUMPTIONS) - {"stated"} <= produced
    assert set(STEPS) - {"stated"} <= produced
    assert produced <= set(ASSUMPTIONS) | set(STEPS)


@pytest.mark.parametrize("table", [ASSUMPTIONS, STEPS], ids=["assumptions",
                                                              "steps"])
def test_every_declared_parameter_is_read(table):
    # A parameter the text never shows is allowed only where the option does
    # (Thm 4.7's lambda).
    for kind, entry in table.items():
        if callable(entry.text):
            continue
        read = {name for _, name, _, _ in string.Formatter().parse(entry.text)
                if name}
        option = set() if entry.option is None else {
            name for _, name, _, _ in string.Formatter().parse(entry.option)
            if name}
        assert read <= set(entry.parameters), kind
        assert read | option == set(entry.parameters), kind


# ------------------------------------------------------------------ the records


def test_opt_in_is_what_an_option_took():
    got = {kind: Assumption.of(kind, **ASSUMPTION_TEXTS[kind][0]).option
           for kind in ASSUMPTIONS}
    assert {k: v for k, v in got.items() if v is not None} == OPT_IN
    for kind, (params, text) in ASSUMPTION_TEXTS.items():
        record = Assumption.of(kind, **params)
        assert record.opt_in is (kind in OPT_IN)
        # The prose marks the options the user took: every "ASSUMED" is one.
        if text.startswith("ASSUMED"):
            assert record.opt_in


def test_parameters_are_kept_in_one_order_and_exactly():
    a = Assumption.of("records.independent", privacy="dataset", reads="counts")
    b = Assumption("records.independent", (("reads", "counts"),
                                           ("privacy", "dataset")))
    assert a == b and hash(a) == hash(b)
    assert a.parameters == (("reads", "counts"), ("privacy", "dataset"))
    gap = Assumption.of("covariances.equal", gap=0.027612)
    assert gap.params["gap"] == 0.027612     # the text rounds, the record not
    assert gap != Assumption.of("covariances.equal", gap=0.0276)


@pytest.mark.parametrize("build, match", [
    (lambda: Assumption.of("law.gausian"), "kind 'law.gausian' is unknown"),
    (lambda: Assumption.of("covariances.equal"), r"takes the parameters \['gap'\]"),
    (lambda: Assumption.of("law.exact", gap=0.1), r"takes the parameters \[\]"),
    (lambda: Assumption.of("records.independent", reads="rows",
                           privacy="dataset"), "cannot be rendered"),
    (lambda: Assumption.of("stated", text=["a"]), "hashable parameter values"),
    (lambda: Assumption.of("covariances.equal", gap="wide"), "cannot be rendered"),
    (lambda: Assumption("stated", ("text",)), r"\(name, value\) pairs"),
    (lambda: MethodStep.of("secure"), "takes the parameters"),
    (lambda: MethodStep.of("w-inf.band.weighted", weight=0.0),
     "weight is a positive finite float"),
    (lambda: MethodStep.of("closeness.band.weighted", records=2,
                           weight=float("nan")), "positive finite"),
    (lambda: Method(("expm.gaussian",)), "MethodStep records"),
])
def test_records_are_checked_when_built(build, match):
    with pytest.raises(ValueError, match=match):
        build()


def test_a_method_is_its_steps():
    method = (Method.of("expm.gaussian").then("zero-noise-replaced")
              .then(MethodStep.of("scaled.unequal-covariances", factor=1.72512,
                                  profile=_TWO_GAUSSIANS)))
    assert method.kind == "expm.gaussian"
    assert [s.kind for s in method.steps] == [
        "expm.gaussian", "zero-noise-replaced", "scaled.unequal-covariances"]
    assert str(method) == (
        "N(0, (Delta_E,2 / mu)^2 I) (Thm 4.2); the formula's zero noise did not "
        "certify; scaled by 1.725 to certify unequal covariances (exact privacy "
        "profile of two Gaussians)")
    # Nested steps are found too.
    assert method.find("profile.two-gaussians") == _TWO_GAUSSIANS
    assert method.uses("profile.two-gaussians") and not method.uses("secure")
    assert method.find("secure") is None
    assert Method().kind == "" and str(Method()) == ""
    with pytest.raises(TypeError, match="with its kind"):
        method.then(_TWO_GAUSSIANS, factor=2.0)


def test_unique_drops_repeated_texts_in_order():
    a, b = Assumption.of("law.exact"), Assumption.of("theta.plug-in")
    # Two gaps that print alike are one line, as they were one string.
    g1 = Assumption.of("covariances.equal", gap=0.027612)
    g2 = Assumption.of("covariances.equal", gap=0.027614)
    assert unique([a, b, a, g1, g2]) == (a, b, g1)


def test_prose_becomes_records():
    assert Assumption.from_text(ASSUMPTION_TEXTS["law.gaussian"][1]) == (
        Assumption.of("law.gaussian"))
    assert Assumption.from_text(ASSUMED_GAP) == Assumption.of("stated",
                                                              text=ASSUMED_GAP)
    assert not Assumption.from_text(ASSUMED_GAP).opt_in
    assert Method.from_text("exact privacy profile of two Gaussians") == (
        Method.of("profile.two-gaussians"))
    assert Method.from_text("my own proof") == Method.of("stated",
                                                         text="my own proof")
    assert Method.from_text("") == Method()


# ------------------------------------------------------ certificates and plans


def _plan(cls=Plan, **fields):
    base = dict(mechanism="apgm", statistics=("x",), n=100, epsilon=1.0,
                delta=1e-5, calibration="analytic", secrets=(), theta="",
                sensitivity=0.5, inherent_variance=(0.1,),
                noise_law=GaussianNoise(np.eye(1)))
    return cls(**{**base, **fields})


def test_a_plan_answers_what_it_assumes_and_how_it_was_made():
    assumed = (Assumption.of("theta.plug-in"), Assumption.of("law.gaussian"))
    plan = _plan(certified_by=Method.of("profile.unequal-variances"),
                 assumed=assumed)
    assert plan.assumed == assumed
    assert plan.assumes("law.gaussian") and not plan.assumes("law.exact")
    assert [a.option for a in plan.assumed if a.opt_in] == [
        "theta='moments'", "law='gaussian'"]
    assert plan.assumptions == tuple(ASSUMPTION_TEXTS[k][1]
                                     for k in ("theta.plug-in", "law.gaussian"))
    assert plan.method == STEP_TEXTS["profile.unequal-variances"][1]
    rows = plan.summary().certificate
    assert [v for k, v in rows if k == "assumes"] == list(plan.assumptions)
    assert dict(rows)["certified by"] == plan.method
    with pytest.raises(ValueError, match="not a kind of assumption"):
        plan.assumes("law='gaussian'")


def test_prose_arguments_build_records():
    # What skattr 0.2 called the fields, and what its files hold.
    text = ASSUMPTION_TEXTS["law.gaussian"][1]
    plan = _plan(method="exact privacy profile of two Gaussians with unequal "
                        "variances", assumptions=(text, "x < y"))
    assert plan.certified_by == Method.of("profile.unequal-variances")
    assert plan.assumed == (Assumption.of("law.gaussian"),
                            Assumption.of("stated", text="x < y"))
    assert plan.assumptions == (text, "x < y")
    release = _plan(Release, values=pd.Series([1.0], index=["x"]),
                    method=Method.of("expm.gaussian"), assumptions=())
    assert release.certified_by == Method.of("expm.gaussian")
    assert release.assumed == ()
    with pytest.raises(TypeError, match="not both"):
        _plan(method="a", certified_by=Method.of("expm.gaussian"))
    with pytest.raises(TypeError, match="not both"):
        _plan(assumptions=("a",), assumed=())


def test_a_certificate_holds_records_only():
    cert = Certificate(epsilon=1.0, delta=0.0, sensitivity=1.0,
                       certified_by=Method.of("expm.laplace"),
                       assumed=[Assumption.of("laws.translations")])
    assert cert.assumed == (Assumption.of("laws.translations"),)
    assert cert.method == STEP_TEXTS["expm.laplace"][1]
    with pytest.raises(TypeError, match="certified_by is a Method"):
        Certificate(epsilon=1.0, delta=0.0, sensitivity=1.0,
                    assumed=("records are independent",))
    with pytest.raises(TypeError, match="certified_by is a Method"):
        Certificate(epsilon=1.0, delta=0.0, sensitivity=1.0,
                    certified_by="Laplace mechanism")


@pytest.mark.slow
def test_a_release_records_the_options_taken():
    reference = make_hospital(2000, random_state=0)
    private = make_hospital(120, random_state=1)
    rel = private.attrpriv.mean(["weight"], secret=SECRET, reference=reference,
                                mechanism="expm-gaussian",
                                law=AssumeGaussian(covariances="assume-equal"),
                                theta="moments", random_state=0)
    assert [a.kind for a in rel.assumed] == [
        "covariances.equal", "theta.plug-in", "law.gaussian"]
    assert all(a.opt_in for a in rel.assumed)
    (gap,) = [a for a in rel.assumed if a.kind == "covariances.equal"]
    assert 0 < gap.params["gap"] < 0.1 and gap.option == (
        "law=AssumeGaussian(covariances='assume-equal')")
    assert rel.certified_by.kind == "expm.gaussian"
    assert rel.to_dict()["assumptions"] == list(rel.assumptions)
    assert rel.to_dict()["method"] == rel.method
    # The records round-trip exactly, nested steps included.
    back = Release.from_json(rel.to_json())
    assert back.assumed == rel.assumed and back.certified_by == rel.certified_by
    median = private.attrpriv.median(["height"], secret=SECRET,
                                     reference=reference.iloc[:400],
                                     theta=skattr.theta.Resample(),
                                     random_state=0)
    assert not any(a.opt_in for a in median.assumed)
    assert median.assumed == (Assumption.of("resampling-model",
                                            privacy="dataset"),)
    # The default: the reference's confidence bands (issue 27).
    default = private.attrpriv.median(["height"], secret=SECRET,
                                      reference=reference.iloc[:400],
                                      random_state=0)
    assert [a.kind for a in default.assumed] == ["reference.band",
                                                 "records.independent"]
    assert default.certified_by.uses("closeness.order-band")
    back = Release.from_json(median.to_json())
    assert back.certified_by == median.certified_by
    assert back.certified_by.find("laws.order-statistics") == _ORDER


@pytest.mark.parametrize("name, kinds", [
    ("apgm", ["law.gaussian"]), ("median", ["stated"])])
def test_a_release_skattr_0_2_saved_still_loads(name, kinds):
    text = (DATA / f"release_schema1_{name}.json").read_text()
    rel = Release.from_json(text)
    saved = json.loads(text)["skattr"]["object"]["init"]
    assert rel.method == saved["method"]
    assert list(rel.assumptions) == saved["assumptions"]["items"]
    assert [a.kind for a in rel.assumed] == kinds
    if name == "apgm":
        assert rel.certified_by == Method.of("profile.unequal-variances")
    else:
        assert rel.certified_by.kind == "stated"


def test_an_edited_kind_is_refused_on_loading():
    rel = _plan(Release, values=pd.Series([1.0], index=["x"]),
                assumed=(Assumption.of("law.gaussian"),))
    outer = json.loads(rel.to_json())
    payload = json.loads(json.dumps(outer["skattr"]).replace(
        '"law.gaussian"', '"law.gaussiann"'))
    # A consistent file (its hash recomputed) naming an unknown kind.
    text = json.dumps({"sha256": hashlib.sha256(canonical(payload).encode(
        "ascii")).hexdigest(), "skattr": payload})
    with pytest.raises(PersistenceError, match="law.gaussiann"):
        Release.from_json(text)


def test_the_records_are_public_and_saved():
    from skattr._persistence import allowed_types

    assert {"Assumption", "Method", "MethodStep"} <= set(skattr.__all__)
    table = allowed_types()
    for cls in (Assumption, Method, MethodStep):
        assert table[cls.__qualname__] is cls
    plan = _plan(noise_law=LaplaceNoise.on_each(1.0, 1),
                 certified_by=Method.of("wasserstein", bound=STEP_TEXTS[
                     "wasserstein"][0]["bound"]),
                 assumed=(Assumption.of("dp.declared-bounds",
                                        bounds=(("x", 0.0, 1.0),)),))
    back = Plan.from_json(plan.to_json())
    assert back.certified_by == plan.certified_by and back.assumed == plan.assumed
