"""The joint certificate of a ledger's releases, from the joint law of their statistics.

Pufferfish privacy does not compose: two statistics each certified alone can
reveal the secret together. The joint release is certified from the joint
law of everything released, under the secret's pairs.

Gaussian-noise releases (:class:`GaussianJoint`). Let F be the d distinct
statistics released so far (a statistic released twice counts once),
Y = A F + N the K released values, A the K x d selection of each value's
statistic and N the independent noises, block-diagonal covariance Sigma_N.
Under each side of a pair, F has the joint Theta's mean and covariance
(cross-covariances included, from the same reference: the newest release's
law refitted for the stacked statistics, :func:`skattr.theta.joint_law`). When
Sigma_N is invertible, the likelihood ratio of Y depends on Y only through
A^T Sigma_N^-1 Y, so the joint release is exactly as private as
F + N(0, M^-1), M = A^T Sigma_N^-1 A (a d-dimensional release: "work in its
span"). Otherwise (some value released without noise) Y's law is taken in K
dimensions and restricted to the span of its covariances: a mean difference
outside it reveals the secret (epsilon infinite). The epsilon at the
budget's delta is the exact profile of the two Gaussians, worst case over
pairs and Theta. Releases of one count or integer sum under its exact law
combine as one release with the precision-weighted noise.

Laplace-noise releases (:class:`LaplaceJoint`, the Wasserstein mechanisms).
Copies of one statistic calibrated from a (W, delta)-closeness share one
coupling of its two laws, so their epsilons add; copies planned under the
records coupling (:func:`records_theta`) are not such a closeness and
compose as different statistics do. Different statistics are certified
from their joint law: over the reference's confidence bands by default,
every value a coordinate of one band law
(:func:`skattr.theta._band.several_statistics_law`), or under the
resampling Theta when the ledger takes it
(:func:`skattr.laws._coupling.joint_closeness`).
Gaussian and Laplace noise on one dataset rest on different models, and no
joint law of both is modelled: every release is then certified again
through the bands' one coupling (:mod:`skattr._ledger._mixed`).
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from skattr._clipping import clip_reference, resolve_clipping
from skattr._ledger._bounds import clipping_policy
from skattr._ledger._composed import composed_epsilon
from skattr._query import Query, StackedQuery
from skattr._random import seed_of
from skattr.calibration._coupled import pairs_coupled_epsilon
from skattr.calibration._exact_noise import exact_leakage
from skattr.calibration._pair_noise import raw_leakage_epsilon
from skattr.exceptions import NotCertifiableError
from skattr.laws import ExactLaw, PairLaws
from skattr.laws._coupling import joint_closeness
from skattr.theta._request import joint_law
from skattr.theta._resample import Resample
from skattr.theta._spec import resolve_theta, theta_reads_reference

__all__ = ["BUDGET_RTOL", "SPAN_RTOL", "GaussianJoint", "LaplaceJoint",
           "laplace_loss", "planned_under_records", "records_theta",
           "single_statistics"]

#: Relative tolerance of the budget check: epsilons are computed to ~1e-9.
BUDGET_RTOL = 1e-9
# Eigenvalues below this fraction of the largest are outside the span.
SPAN_RTOL = 1e-10


def _in_span(mean_diff, cov_a, cov_b) -> tuple | None:
    """Restrict two Gaussians to the span of their covariances.

    Returns (mean_diff, cov_a, cov_b) in an orthonormal basis of the span, or
    None when the mean difference leaves it (the laws are mutually singular:
    the secret is revealed). Laws with different spans are singular too.
    """
    total = cov_a + cov_b
    values, vectors = np.linalg.eigh((total + total.T) / 2)
    keep = values > SPAN_RTOL * max(values.max(initial=0.0), 0.0)
    basis = vectors[:, keep]
    outside = mean_diff - basis @ (basis.T @ mean_diff)
    scale = max(np.abs(mean_diff).max(initial=0.0), 1e-300)
    if np.abs(outside).max(initial=0.0) > 1e-9 * scale:
        return None
    ca, cb = basis.T @ cov_a @ basis, basis.T @ cov_b @ basis
    for c in (ca, cb):
        if c.size and np.linalg.eigvalsh(c)[0] <= SPAN_RTOL * values.max():
            # One side is degenerate where the other is not: singular laws.
            return None
    return basis.T @ mean_diff, ca, cb


def clipped_reference(frame, query, columns, bounds, secret, *, reads: bool):
    """Return the reference clipped as a release of ``query`` clips it.

    ``reads``: Theta reads the reference's rows (otherwise its ranges are
    not read, as a mechanism's ``fit`` does not read them).
    """
    clipping = resolve_clipping(bounds, query, columns, frame,
                                reads_reference=reads, needs_declared=False,
                                secret_columns=[secret.column])
    return clip_reference(frame, clipping, [secret]) if reads else frame


def records_theta(ledger, query, mechanism: str, columns=None):
    """Return the Theta a ledger plans a release with.

    The ledger's own, or the bands' under the coupling of whole records.
    A Laplace release of one sum, mean, median or quantile over the bands
    (a Theta whose laws lie in the reference's bands, as the default's do)
    is planned under the one coupling the ledger composes its releases
    under (the shared records kept, each moved record's two rows
    independent), on the same bands as the statistic alone, so that its
    own certificate composes with the others'
    (:mod:`skattr._ledger._composed`). So is any release of one column's
    medians and quantiles (several levels, or Gaussian noise), whose law
    alone would couple that column's values by one uniform
    (:func:`~skattr.theta._band.column_coupled`). Other releases (stds,
    several columns' values at once) keep the ledger's Theta. ``columns``:
    the columns the release reads (a query naming none reads every column
    but the secret's).
    """
    from skattr.theta import ConfidenceBand
    from skattr.theta._band import column_coupled, records_coupled

    # A spec whose laws lie in the reference's bands (the protocol's
    # band_confidence; the ledger's joint law reads the same bands). A spec
    # GivesLaw takes may answer fit_law alone: the protocol's defaults then.
    # A ConfidenceBand already under the records' coupling is its own answer.
    spec = resolve_theta(ledger.theta)
    confidence = getattr(spec, "band_confidence", None)
    if not (confidence is not None
            and "bands" in (getattr(spec, "law_kinds", None) or ())
            and ((records_coupled(query, columns)
                  and mechanism in ledger.LAPLACE)
                 or column_coupled(query, columns))
            and ledger.reference is not None
            and ledger.secret.property == "proportion"):
        return ledger.theta
    return ConfidenceBand(confidence, coupling="records")


def laplace_loss(bounds: np.ndarray, weights: np.ndarray) -> float:
    """Return sum_j W_j w_j: the most Laplace noise loses when |D_j| <= W_j.

    ``weights`` is the sum of 1 / b over the copies of each value; a value
    that cannot move (W_j = 0) costs nothing, even released without noise.
    """
    with np.errstate(invalid="ignore"):
        moved = np.where(bounds == 0, 0.0, bounds * weights)
    return float(np.sum(moved))


class GaussianJoint:
    """The joint epsilon of Gaussian-noise releases, from their joint law.

    Parameters
    ----------
    ledger : Ledger
        Its secret, Theta, law, clipping, reference (or data, for a stated
        Theta), n and budget's delta.
    """

    def __init__(self, ledger):
        self.ledger = ledger
        self._cache = None

    def epsilon(self, entries, law) -> float:
        """Return the joint epsilon of ``entries`` ((statistics, noise_cov) each).

        ``law`` is the newest release's law of F: the joint law is it,
        refitted for every distinct statistic released.
        """
        released = [s for stats, _ in entries for s in stats]
        distinct = list(dict.fromkeys(base for base, _ in released))
        index = {s: i for i, s in enumerate(distinct)}
        k, d = len(released), len(distinct)
        select = np.zeros((k, d))
        select[np.arange(k), [index[b] for b, _ in released]] = [
            w for _, w in released]
        noise = np.zeros((k, k))
        start = 0
        for stats, cov in entries:
            end = start + len(stats)
            noise[start:end, start:end] = cov
            start = end
        if self.ledger.law != "gaussian":
            return self._exact_epsilon(distinct, select, noise, law)
        return self._epsilon(self._joint_laws(distinct, law), select, noise)

    def _joint_law(self, distinct, law):
        """Return the law of the d distinct statistics (the last set, cached).

        A release of statistics already out reuses it: Theta is fitted once
        per new statistic.
        """
        ledger = self.ledger
        query = distinct[0] if len(distinct) == 1 else StackedQuery.of(
            *distinct)
        frame = ledger._data if ledger.reference is None else ledger.reference
        columns = query.resolve_columns(frame, exclude=[ledger.secret.column])
        query = query.with_columns(columns)
        # The clipping is part of the statistics: a release planned with
        # bounds it then did not make must not leave its law here.
        bounds = clipping_policy(ledger, query, columns)
        key = (tuple(distinct), repr(bounds))
        if self._cache is None or self._cache[0] != key:
            reads = theta_reads_reference(ledger.theta)
            frame = clipped_reference(frame, query, columns, bounds,
                                      ledger.secret, reads=reads)
            self._cache = (key, joint_law(law, query, frame=frame,
                                          columns=columns),
                           query.names(columns))
        return self._cache[1], self._cache[2]

    def _exact_epsilon(self, distinct, select, noise, law) -> float:
        """Return the joint epsilon of releases of one statistic, from its exact law.

        k noisy copies F + N_j (weights w_j) are as private as F + N(0, v),
        v = 1 / sum_j w_j^2 / var_j (the precision-weighted average is
        sufficient); a copy without noise releases F itself (v = 0).
        """
        ledger = self.ledger
        if len(distinct) > 1:
            raise NotCertifiableError(
                "The joint law of several statistics is certified as Gaussian "
                "with Theta's joint moments, which must be stated: open the "
                "ledger with law='gaussian' (the releases record it). With "
                f"law={ledger.law!r} a ledger certifies releases of one "
                "statistic.")
        joint, _ = self._joint_law(distinct, law)
        variances = np.diag(noise)
        variance = (0.0 if np.any(variances <= 0) else
                    1.0 / float(np.sum(select[:, 0] ** 2 / variances)))
        if joint.coupled:
            # A count's default Theta: the swap coupling's bound, for F plus
            # the copies' sufficient noise.
            return pairs_coupled_epsilon(
                joint.coupled_distances(ledger._n, "dataset",
                                        delta=ledger.budget[1]), variance,
                ledger.budget[1])
        if not isinstance(joint, ExactLaw):
            raise NotCertifiableError(
                "This statistic has no exact law here; open the ledger with "
                "law='gaussian' to certify its releases jointly.")
        return exact_leakage(joint.exact_pairs(ledger._n), ledger.budget[1],
                             variance)

    def _joint_laws(self, distinct, law) -> PairLaws:
        """Return the Gaussian laws of the d distinct statistics under every pair."""
        joint, names = self._joint_law(distinct, law)
        laws = PairLaws.concatenate(joint.pair_laws(self.ledger._n))
        # The query orders its columns; map them back to `distinct`.
        wanted = [q.names(q.columns)[0] for q in distinct]
        if list(names) != wanted:
            order = [list(names).index(w) for w in wanted]
            laws = PairLaws(laws.mean_diff[:, order],
                            laws.cov_a[:, order][:, :, order],
                            laws.cov_b[:, order][:, :, order],
                            laws.theta_index, laws.n_theta, laws.assumptions)
        return laws

    def _epsilon(self, laws: PairLaws, select: np.ndarray,
                 noise: np.ndarray) -> float:
        delta = self.ledger.budget[1]
        values = np.linalg.eigvalsh(noise) if noise.size else np.zeros(0)
        if values.size and values[0] > SPAN_RTOL * max(values[-1], 1e-300):
            # Sufficient statistic: F + N(0, M^-1), M = A^T Sigma_N^-1 A.
            precision = select.T @ np.linalg.solve(noise, select)
            extra = np.linalg.inv(precision)
            extra = (extra + extra.T) / 2
            reduced = PairLaws(laws.mean_diff, laws.cov_a + extra,
                               laws.cov_b + extra, laws.theta_index,
                               laws.n_theta, laws.assumptions)
            return float(raw_leakage_epsilon(reduced, delta).max(initial=0.0))
        # Some value released without noise: Y's law in K dimensions, in
        # the span of its covariances.
        worst = 0.0
        for diff, ca, cb in zip(laws.mean_diff, laws.cov_a, laws.cov_b,
                                strict=True):
            spanned = _in_span(select @ diff, select @ ca @ select.T + noise,
                               select @ cb @ select.T + noise)
            if spanned is None:
                return math.inf
            d, a, b = spanned
            if d.size == 0:
                continue
            one = PairLaws(d[None], a[None], b[None], np.zeros(1, dtype=int), 1)
            worst = max(worst, float(raw_leakage_epsilon(one, delta).max()))
        return worst


def planned_under_records(est) -> bool:
    """Whether an estimator was planned under the records coupling (pi)."""
    return getattr(getattr(est, "theta", None), "coupling", None) == "records"


def _coupled_copies(entries: list) -> bool:
    """Whether several releases include one planned under the records coupling."""
    return len(entries) > 1 and any(e.get("coupled") for e in entries)


class LaplaceJoint:
    """The joint guarantee of Laplace-noise releases (the Wasserstein mechanisms).

    Each entry is a dict: the statistic's ``key``, its own ``epsilon`` and
    ``delta``, ``beta`` (the part of delta a drawn law may misjudge), the
    noise's ``scale``, whether it was fitted on the resampling Theta
    (``resample``) and its ``privacy``.
    """

    def __init__(self, ledger):
        self.ledger = ledger
        # Each released statistic's query and its resampling Theta with the
        # ledger's one seed (every statistic on the same datasets).
        self.queries: dict = {}
        self.laws: dict = {}
        # The band law of each set of statistics released together.
        self.banded: dict = {}
        self.seed: int | None = None
        # Which bound gave the last joint epsilon over the bands: "box"
        # (every value at its worst corner) or "composed" (one coupling).
        self.bound: str | None = None

    @staticmethod
    def delta(entries: list) -> float:
        """Return max_j (delta_j - beta_j) + sum_j beta_j (drawn failures add)."""
        return float(max(e["delta"] - e["beta"] for e in entries)
                     + sum(e["beta"] for e in entries))

    def joint_delta(self, entries: list) -> float | None:
        """Return the joint delta of Laplace releases; None means the budget's."""
        if len({e["key"] for e in entries}) > 1 or _coupled_copies(entries):
            return None
        return self.delta(entries)

    def epsilon(self, entries: list) -> float:
        """Return the joint epsilon of Laplace-noise releases.

        One statistic released again and again: k releases of the same
        statistic F under the same Theta, release j with Laplace noise of
        scale b_j = W_j / epsilon_j, W_j its (W, delta_j)-closeness. Take
        delta* = max delta_j and a coupling of the two laws of F moving all
        but delta* of the mass by at most W(delta*) <= W_j for every j (the
        least W is non-increasing in delta). Coupling the k copies along it
        moves the stacked statistic by at most sum_j W_j / b_j = sum_j
        epsilon_j in the noises' metric sum_j |x_j - y_j| / b_j, so the
        joint release is (sum_j epsilon_j, delta*)-private (Chen and
        Ohrimenko, Thm 3.1-3.2). A W_j bounded from drawn laws holds except
        with a chance beta_j (part of delta_j), independent between fits:
        delta* is then max_j (delta_j - beta_j) plus sum_j beta_j. Above the
        budget's delta the joint is refused (epsilon infinite).

        Different statistics: from their joint law, over the reference's
        confidence bands (:meth:`_banded`), or under the resampling Theta
        when the ledger takes it (:func:`~skattr.laws._coupling.joint_closeness`).
        """
        budget_delta = self.ledger.budget[1]
        self.bound = None
        if len({e["key"] for e in entries}) > 1:
            return self._different(entries)
        if _coupled_copies(entries):
            # Copies planned under the records coupling are certified by the
            # expected Laplace profile under it, not by a (W, delta)-
            # closeness: the argument above does not hold for them (a red
            # team's certain population broke it at release deltas of 0.8).
            # Under the one coupling they compose as different statistics
            # do: the box or the composed bound, at the budget's delta.
            return self._banded(entries, self.one_privacy(entries))
        if self.delta(entries) > budget_delta * (1 + BUDGET_RTOL):
            return math.inf
        return float(sum(e["epsilon"] for e in entries))

    def _different(self, entries: list) -> float:
        """Return the joint epsilon of Laplace releases of different statistics.

        Never a sum of epsilons: the laws of each statistic alone can be the
        same under both values while their joint law reveals the secret.
        """
        privacy = self.one_privacy(entries)
        if not all(e.get("resample") for e in entries):
            # Not the resampling model, the explicit choice: the joint law
            # over the reference's confidence bands.
            return self._banded(entries, privacy)
        weights: dict = {}
        for e in entries:
            w = math.inf if e["scale"] == 0 else 1.0 / e["scale"]
            weights[e["key"]] = weights.get(e["key"], 0.0) + w
        ledger = self.ledger
        n = ledger._n
        pairs = ledger.secret.certified_pairs(n, privacy)
        return joint_closeness([self._resampled(key) for key in weights],
                               list(weights.values()), pairs, n, privacy,
                               ledger.budget[1])

    @staticmethod
    def one_privacy(entries: list) -> str:
        """Return the one ``privacy`` of Laplace releases, or refuse two."""
        privacy = {e["privacy"] for e in entries}
        if len(privacy) > 1:
            raise NotCertifiableError(
                "Laplace-noise releases with dataset and distributional privacy "
                "have no joint certificate; keep one privacy= per ledger.")
        return privacy.pop()

    def _banded(self, entries: list, privacy: str) -> float:
        """Return the joint epsilon over the bands: the least of two bounds.

        Every value j of every statistic released is a coordinate of one
        band law (:func:`~skattr.theta._band.several_statistics_law`). The
        box: under its one coupling all |D_j| <= W_j but with chance delta
        (the budget's, split evenly over the values), and the copies of
        value j, with Laplace scales b, lose at most |D_j| sum 1 / b there:
        sum_j W_j sum 1 / b_j. The composition: each value re-certified
        under the same coupling from the law of its move, and the values
        composed per coupled pair (:mod:`skattr._ledger._composed`): never
        above the sum of the releases' epsilons when their re-certified
        deltas add up to at most the budget's. Both valid for the
        population with the bands' confidence; the least is taken and
        :attr:`bound` says which.
        """
        statistics = self.restated(entries)
        keys = list(statistics)
        law, slices = self.band_law(statistics)
        n, delta = self.ledger._n, self.ledger.budget[1]
        bounds = law.per_statistic(n, privacy, delta)
        boxed = laplace_loss(bounds, self.band_weights(entries, keys, slices,
                                                       bounds.size))
        try:
            per_pair = law.coupled_distances(n, privacy)
        except NotCertifiableError:
            # No law of some value's move under the coupling: the box alone
            # (valid by itself).
            per_pair = None
        composed = (math.inf if per_pair is None else composed_epsilon(
            per_pair, self.band_units(entries, keys, slices), delta)[0])
        self.bound = ("composed" if composed < boxed else "box")
        return min(boxed, composed)

    @staticmethod
    def band_units(entries: list, keys: list, slices: list) -> list:
        """Return per released value (its coordinate, Laplace scale, epsilon).

        A release of several values splits its own epsilon evenly among
        them: only the start of the splits :func:`composed_epsilon` tries.
        """
        units = []
        for e in entries:
            index = np.asarray(slices[keys.index(e["key"])], dtype=int)
            scales = e.get("scales") or [e["scale"]] * index.size
            share = float(e["epsilon"]) / index.size
            units += [(int(j), float(b), share)
                      for j, b in zip(index, scales, strict=True)]
        return units

    def restated(self, entries: list) -> dict:
        """Return each released statistic's (query, columns), by key, in order.

        Raises
        ------
        NotCertifiableError
            A release loaded from a file that cannot restate its statistic
            (a function).
        """
        keys = list(dict.fromkeys(e["key"] for e in entries))
        if any(k not in self.queries for k in keys):
            raise NotCertifiableError(
                "A release loaded from a ledger file is a statistic the file "
                "cannot restate (a function); its joint law with a different "
                "statistic cannot be certified after loading.")
        return {k: self.queries[k] for k in keys}

    @staticmethod
    def band_weights(entries: list, keys: list, slices: list,
                     size: int) -> np.ndarray:
        """Return, per band coordinate, the sum of 1 / b over its Laplace copies."""
        weights = np.zeros(size)
        for e in entries:
            index = slices[keys.index(e["key"])]
            scales = np.asarray(e.get("scales") or [e["scale"]] * index.size,
                                dtype=float)
            with np.errstate(divide="ignore"):
                weights[index] += np.where(scales == 0, np.inf, 1.0 / scales)
        return weights

    def band_law(self, statistics: dict) -> tuple:
        """Return the band law of several statistics and each one's coordinates.

        ``statistics`` maps a key to ``(query, columns)``, or to
        ``(query, columns, ranges)`` with the clipping ranges the release
        used; the law (cached per set of keys) is over the ledger's
        reference, clipping and the bands' confidence of its Theta. Returns
        the law and, in the order of ``statistics``, each statistic's
        indices among its coordinates.

        Raises
        ------
        NotCertifiableError
            The ledger's Theta is not the bands', it has no reference, or a
            statistic has no bound over the bands.
        """
        from skattr.mechanisms._fit_cache import computed_once
        from skattr.theta._band import several_statistics_law

        ledger = self.ledger
        theta = ledger.theta
        # The spec says whether its laws lie in the reference's bands, and
        # at which confidence (theta="auto" and the confidence sets do).
        confidence = getattr(resolve_theta(theta), "band_confidence", None)
        if confidence is None:
            # A stated or plug-in Theta is another model: the bands' joint
            # law would rest on one its releases do not record.
            raise NotCertifiableError(
                f"The ledger's Theta ({theta!r}) models each statistic alone; "
                "the joint law of different statistics with Laplace noise is "
                "bounded over the reference's confidence bands (theta='auto', "
                "the default) or under the resampling Theta (theta=skattr."
                "theta.Resample()). Open the ledger with one of them.")
        if ledger.reference is None:
            raise NotCertifiableError(
                "The joint law of different statistics with Laplace noise is "
                "bounded over the reference's confidence bands; open the "
                "ledger with reference=.")
        # Each statistic's clipping (the ranges its release used, or the
        # ledger's) is part of the key: one planned with bounds it then did
        # not release must not leave its law here.
        policies = [given[0] if given else clipping_policy(ledger, query, columns)
                    for query, columns, *given in statistics.values()]
        keys = (tuple(statistics), repr(policies))
        if keys not in self.banded:
            bounded = []
            for (query, columns, *given), policy in zip(
                    statistics.values(), policies, strict=True):
                ranges = given[0] if given else resolve_clipping(
                    policy, query, columns, ledger.reference,
                    reads_reference=True, needs_declared=False,
                    secret_columns=[ledger.secret.column]).as_dict()
                bounded.append((query, columns, ranges))
            try:
                # The same law for every ledger on this reference (each
                # describe() opens one): kept by content, issue 42.
                self.banded[keys] = computed_once(
                    "joint band law", ledger.reference,
                    (bounded, ledger.secret, confidence),
                    lambda: several_statistics_law(
                        ledger.reference, bounded, ledger.secret,
                        confidence=confidence))
            except NotCertifiableError as why:
                raise NotCertifiableError(
                    f"{why} Open the ledger with theta=skattr.theta.Resample() "
                    "to take the reference's records as the population "
                    "(recorded).") from None
        return self.banded[keys]

    def _resampled(self, key):
        """Return a released statistic's resampling Theta, seeded by the ledger."""
        ledger = self.ledger
        if key not in self.laws:
            if key not in self.queries:
                raise NotCertifiableError(
                    "A release loaded from a ledger file is a statistic the file "
                    "cannot restate (a function); its joint law with a different "
                    "statistic cannot be certified after loading. Release only "
                    "that statistic again through this ledger, or keep the "
                    "ledger in one process (and in memory) to release others.")
            if ledger.reference is None:
                raise NotCertifiableError(
                    "The joint law of different Laplace-noise statistics is "
                    "drawn from reference data; open the ledger with "
                    "reference=.")
            # The ledger's resampling Theta's options, when it is one (the
            # spec says), its seed too; the default draws otherwise.
            model = getattr(resolve_theta(ledger.theta), "resampling", None)
            spec = model or Resample()
            if self.seed is None:
                given = (model.random_state if model is not None else
                         getattr(ledger.theta, "random_state", None))
                self.seed = seed_of(given, owner="Resample")
            spec = replace(spec, random_state=self.seed)
            query, columns = self.queries[key]
            frame = clipped_reference(ledger.reference, query, columns,
                                      clipping_policy(ledger, query, columns),
                                      ledger.secret, reads=True)
            self.laws[key] = spec.fit(frame, query, columns, ledger.secret)
        return self.laws[key]


def single_statistics(query, n: int) -> tuple:
    """Split a query into (base statistic, weight) per released value.

    A linear value is w(n) times the sum over records of a contribution h:
    a mean and a sum of one column share h (the column), as do a count and a
    proportion of one value; the base statistic is that sum, so a mean and a
    sum of the same column are one statistic of the joint law. A median,
    quantile or std (apgm's Gaussian noise over the bands) is its own base,
    one column and one level a value, weight 1: a median and the 0.5
    quantile of one column are both that column's order statistic at 0.5.
    """
    if not getattr(query, "is_linear", True):
        from skattr.theta._band import order_outputs

        outputs = order_outputs(query, len(query.columns))
        if outputs is None:
            raise NotCertifiableError(
                f"A ledger composes Gaussian noise on sums, means, counts, "
                f"medians, quantiles and stds; not on a {query.statistic}.")
        several = len(query.q) > 1
        return tuple(
            (replace(query, columns=(query.columns[c],),
                     **({"q": (level,)} if several else {})), 1.0)
            for c, _, level in outputs)
    parts = query.parts if isinstance(query, StackedQuery) else (query,)
    out = []
    for part in parts:
        weight = float(part.weight(n))
        for column in part.columns:
            base = (Query("sum", [column]) if not part.kind.counts
                    else Query("count", [column], part.value))
            out.append((base, weight))
    return tuple(out)
