"""The Wasserstein Mechanism on exact count laws (Zhang et al. Sec. 6)."""

import numpy as np
import pandas as pd
import pytest

import skattr
from skattr.exceptions import InvalidParameterError, NotCertifiableError
from skattr.mechanisms import (
    ApproximateWassersteinMechanism,
    GroupDPLaplace,
    WassersteinMechanism,
)
from skattr.theta import count_pmf

FRAME = pd.DataFrame({"x1": [1, 0, 1, 1, 0, 1, 0, 0],
                      "x2": [1, 0, 0, 1, 1, 0, 1, 0]})
# Example 2: four people, every pair of shares of X2 in {0, 1/4, ..., 1}, and p in
# [0.4, 0.6]^2 (here its corners and centre: the worst case is at a corner).
SECRET = skattr.Secret.proportion("x2", 1, window=1.0, support=(0.0, 1.0))
CORNERS = [[0.4, 0.4], [0.4, 0.6], [0.6, 0.4], [0.6, 0.6], [0.5, 0.5]]


def _mech(**kw):
    kw = {"query": skattr.Query.count("x1", 1), "secret": SECRET,
          "theta": CORNERS, "epsilon": 1.0, **kw}
    return WassersteinMechanism(**kw).fit(FRAME)


def test_example_2_beats_group_privacy():
    plan = _mech().plan(n=4)
    assert plan.sensitivity == pytest.approx(1.0)     # Zhang et al.: W = 1
    assert plan.noise == "laplace" and plan.delta == 0.0
    assert plan.noise_scale == pytest.approx(1.0)     # Lap(1 / epsilon)
    # Group privacy over all four records: Lap(4 / epsilon) (Example 2).
    group = GroupDPLaplace(query=skattr.Query.count("x1", 1), epsilon=1.0).fit(
        FRAME).plan(n=4)
    assert group.noise_scale == pytest.approx(4.0)
    assert plan.expected_error < group.expected_error


def test_wider_theta_needs_more_noise():
    # Theta = [0.3, 0.7]^2 gives W = 2 and [0, 1]^2 gives W = 4 (issue 4).
    assert _mech(theta=[[0.3, 0.7], [0.7, 0.3]]).plan(n=4).sensitivity == 2.0
    assert _mech(theta=[[0.0, 1.0], [1.0, 0.0]]).plan(n=4).sensitivity == 4.0


def test_distributional_privacy_and_proportions():
    secret = skattr.Secret.proportion("x2", 1, pairs=[(0.2, 0.8)])
    plan = WassersteinMechanism(query=skattr.Query.count("x1", 1), secret=secret,
                                theta=[[0.6, 0.4]], privacy="distributional").fit(
        FRAME).plan(n=4)
    assert plan.sensitivity == pytest.approx(1.0)     # Example 3: W = 1
    prop = _mech(query=skattr.Query.proportion("x1", 1)).plan(n=4)
    assert prop.sensitivity == pytest.approx(0.25)    # a count's W over n


@pytest.mark.slow
def test_theta_from_reference_and_release_law():
    rng = np.random.default_rng(0)
    ref = pd.DataFrame({"x2": (rng.random(4000) < 0.5).astype(int)})
    ref["x1"] = (rng.random(4000) < np.where(ref.x2 == 1, 0.7, 0.3)).astype(int)
    secret = skattr.Secret.proportion("x2", 1, pairs=[(0.4, 0.6)])
    # theta="moments": W_inf between the exact laws at the reference's
    # frequencies (the default takes the worst case over their confidence box).
    mech = WassersteinMechanism(query=skattr.Query.count("x1", 1), secret=secret,
                                theta="moments",
                                random_state=np.random.default_rng(1)).fit(ref)
    p_out, p_in = mech.law_.thetas[0][0]
    assert p_in == pytest.approx(ref.x1[ref.x2 == 1].mean())
    plan = mech.plan(n=50)
    # Independent: W_inf between the two exact laws by their quantile functions.
    u = np.cumsum(count_pmf(0.4, 50, [p_out, p_in])[1])
    v = np.cumsum(count_pmf(0.6, 50, [p_out, p_in])[1])
    levels = np.linspace(1e-9, 1 - 1e-9, 20001)
    w = np.abs(np.searchsorted(u, levels) - np.searchsorted(v, levels)).max()
    assert plan.sensitivity == pytest.approx(w)
    private = ref.iloc[:50]
    draws = np.array([mech.release(private).values.iloc[0] for _ in range(3000)])
    truth = float((private.x1 == 1).sum())
    assert draws.mean() == pytest.approx(truth, abs=4 * plan.noise_scale * 1.5 / 55)
    assert draws.var() == pytest.approx(2 * plan.noise_scale**2, rel=0.1)


def test_refusals():
    with pytest.raises(InvalidParameterError, match="one count or proportion"):
        _mech(query=skattr.Query.mean(["x1"]))
    with pytest.raises(NotCertifiableError, match="at least 1/4 apart"):
        WassersteinMechanism(query=skattr.Query.count("x1", 1),
                             secret=skattr.Secret.proportion(
                                 "x2", 1, pairs=[(0.5, 0.5 + 1e-12)]),
                             theta=[[0.5, 0.6]]).fit(FRAME).plan(n=4)
    with pytest.raises(InvalidParameterError, match="finite set of pairs"):
        _mech(theta=[[0.5, 1.5]])


def test_a_pair_off_the_grid_is_its_neighbours():
    # 0.3 and 0.6 of 4 records are 1.2 and 2.4: 1 or 2 against 2 or 3 (issue
    # 42; refused before).
    def plan(pairs):
        return WassersteinMechanism(
            query=skattr.Query.count("x1", 1),
            secret=skattr.Secret.proportion("x2", 1, pairs=pairs),
            theta=[[0.5, 0.6]]).fit(FRAME).plan(n=4)

    off = plan([(0.3, 0.6)])
    stated = plan([(0.25, 0.5), (0.25, 0.75), (0.5, 0.75)])
    assert off.sensitivity == stated.sensitivity == plan([(0.25, 0.75)]
                                                         ).sensitivity
    grid = next(a for a in off.assumed if a.kind == "secret.grid")
    assert grid.params["certified"] == ((1, 2), (1, 3), (2, 3))


def test_auto_means_the_reference_confidence_box_for_a_count():
    # "auto" of a count is one model across mechanisms: every counting
    # probability in the reference's simultaneous 0.999 Clopper-Pearson box
    # (the population's, at that confidence); "moments" is the plug-in alone,
    # a point of the box.
    rng = np.random.default_rng(3)
    s = rng.random(300) < 0.5
    c = np.where(s, rng.random(300) < 0.6, rng.random(300) < 0.3)
    reference = pd.DataFrame({"s": s, "c": c})
    secret = skattr.Secret.proportion("s", True, pairs=[(0.4, 0.6)])
    query = skattr.Query.count(["c"], True)
    auto = WassersteinMechanism(query=query, secret=secret).fit(reference)
    plugin = WassersteinMechanism(query=query, secret=secret,
                                  theta="moments").fit(reference)
    from statsmodels.stats.proportion import proportion_confint

    assert auto.law_.kind == "box"
    point = plugin.law_.thetas[0][0]
    assert np.all(np.asarray(auto.law_.box.low) <= point)
    assert np.all(point <= np.asarray(auto.law_.box.high))
    # Each interval is the exact one at 1 - 0.001 / 2 (two groups).
    low, high = proportion_confint(c[s].sum(), s.sum(), alpha=0.0005,
                                   method="beta")
    assert (auto.law_.box.low[1], auto.law_.box.high[1]) == pytest.approx(
        (low, high), rel=1e-12)
    w_auto, w_plugin = auto.plan(n=50).sensitivity, plugin.plan(n=50).sensitivity
    assert w_auto >= w_plugin
    assert "Clopper-Pearson" in auto.plan(n=50).theta
    assert auto.plan(n=50).assumes("reference.sample")
    with pytest.raises(NotCertifiableError, match="at least 10 in each group"):
        WassersteinMechanism(query=query, secret=secret).fit(reference.iloc[:12])


@pytest.mark.parametrize("name", ["wasserstein", "approx-wasserstein"])
@pytest.mark.filterwarnings(
    "ignore:delta=.* is at least 1/n:skattr.exceptions.PrivacyLeakWarning")
def test_the_plug_in_theta_is_recorded_as_an_assumption(name):
    # theta="moments" takes the reference's frequencies as the population's:
    # an explicit opt-in the release must record, as the Gaussian
    # mechanisms' releases do; "auto" (the reference's confidence box) assumes
    # no such thing: it states the confidence its certificate holds with.
    from skattr.datasets import make_hospital
    reference = make_hospital(2000, random_state=0)
    secret = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])
    kw = dict(query=skattr.Query.count(["gender"], "other"), secret=secret,
              **({"delta": 0.01} if name == "approx-wasserstein" else {}))
    cls = skattr.mechanisms.MECHANISMS[name]
    plug_in = cls(theta="moments", **kw).fit(reference).plan(n=100)
    assert plug_in.assumed[0] == skattr.Assumption.of("theta.plug-in")
    assert plug_in.assumed[0].option == "theta='moments'"
    auto = cls(**kw).fit(reference).plan(n=100)
    assert not any(a.opt_in for a in auto.assumed)
    assert auto.assumes("reference.sample")
    # The rest of the certificate is the same model's.
    assert plug_in.assumed[1:] == tuple(a for a in auto.assumed
                                        if a.kind != "reference.sample")


def test_a_default_count_with_two_secrets_takes_the_hull_of_their_boxes():
    # Each secret's groups get their own Clopper-Pearson intervals, the four
    # at once (each at 1 - 0.001 / 4); the count is certified over the
    # smallest box that holds both secrets' boxes.
    from statsmodels.stats.proportion import proportion_confint

    rng = np.random.default_rng(4)
    s, t = rng.random(600) < 0.5, rng.random(600) < 0.3
    c = rng.random(600) < np.where(s, 0.5, 0.3)
    reference = pd.DataFrame({"s": s, "t": t, "c": c})
    secrets = [skattr.Secret.proportion("s", True, pairs=[(0.4, 0.6)]),
               skattr.Secret.proportion("t", True, pairs=[(0.2, 0.4)])]
    mech = ApproximateWassersteinMechanism(
        query=skattr.Query.count(["c"], True), secret=secrets).fit(reference)
    intervals = [proportion_confint([c[~g].sum(), c[g].sum()],
                                    [(~g).sum(), g.sum()], alpha=0.00025,
                                    method="beta") for g in (s, t)]
    low = np.min([lo for lo, _ in intervals], axis=0)
    high = np.max([hi for _, hi in intervals], axis=0)
    np.testing.assert_allclose(mech.law_.box.low, low, rtol=1e-12)
    np.testing.assert_allclose(mech.law_.box.high, high, rtol=1e-12)
    plan = mech.plan(n=100)
    assert plan.assumes("reference.sample") and plan.noise_scale > 0
