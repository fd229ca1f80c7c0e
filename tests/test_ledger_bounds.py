"""A ledger's bounds: where they go, and a later release's for a new column."""

import numpy as np
import pytest

import skattr
from skattr.datasets import make_hospital
from skattr.exceptions import InvalidParameterError

SECRET = skattr.Secret.proportion("gender", "female", pairs=[(0.4, 0.6)])
WEIGHT = (30.0, 200.0)


@pytest.fixture(scope="module")
def frames():
    data = make_hospital(100, random_state=1)
    reference = make_hospital(1000, random_state=0)
    # Data-entry codes in the public table: clipping weight matters.
    reference.loc[reference.index[:10], "weight"] = 999.0
    return data, reference


def _ledger(frames, **kw):
    data, reference = frames
    # The plug-in Theta keeps the fits fast; the clipping is what is tested.
    return data.attrpriv.ledger(secret=SECRET, reference=reference,
                                budget=(10.0, 1e-3), law="gaussian",
                                theta="moments", random_state=0, **kw)


def _clipped(release) -> dict:
    return release.clipping.as_dict()


def test_a_release_names_bounds_for_a_column_not_released_yet(frames):
    # It read "bounds= is the ledger's own" without saying where they go.
    ledger = _ledger(frames)
    height = ledger.mean(["height"], epsilon=1.0)       # the reference's range
    first = ledger.mean(["weight"], epsilon=1.0, bounds={"weight": WEIGHT})
    assert _clipped(first) == {"weight": WEIGHT}
    # Fixed from then on: a release without bounds= keeps them, one with the
    # same passes, and both columns together take each its own.
    assert _clipped(ledger.mean(["weight"], epsilon=1.0)) == {"weight": WEIGHT}
    assert _clipped(ledger.mean(["weight"], epsilon=1.0,
                                bounds=WEIGHT)) == {"weight": WEIGHT}
    both = ledger.mean(["weight", "height"], epsilon=1.0)
    assert _clipped(both) == {"weight": WEIGHT, **_clipped(height)}
    # A column released already keeps its range, and the message says why.
    for column, other in (("weight", (0.0, 300.0)), ("height", (100.0, 200.0))):
        with pytest.raises(InvalidParameterError) as caught:
            ledger.mean([column], epsilon=1.0, bounds={column: other})
        message = str(caught.value)
        assert f"Column {column!r} was released through this ledger" in message
        assert "joint certificate takes each column as one statistic" in message
    assert len(ledger.releases) == 5


def test_a_dict_ledger_says_where_a_new_columns_bounds_go(frames):
    ledger = _ledger(frames, bounds={"weight": WEIGHT})
    with pytest.raises(InvalidParameterError) as caught:
        ledger.mean(["height"], epsilon=1.0)
    message = str(caught.value)
    assert "The ledger's bounds name no (low, high) for column(s) ['height']" \
        in message
    assert "bounds={'height': (low, high)}" in message
    assert "df.attrpriv.ledger(..., bounds={...})" in message
    rel = ledger.mean(["height"], epsilon=1.0, bounds={"height": (100, 220)})
    assert _clipped(rel) == {"height": (100.0, 220.0)}
    assert _clipped(ledger.mean(["height", "weight"], epsilon=1.0)) == {
        "height": (100.0, 220.0), "weight": WEIGHT}


@pytest.mark.parametrize("bounds, says", [
    ("reference", "a clipping policy, which a ledger sets for every column"),
    (None, "a clipping policy"),
    ({"height": (100, 220)}, "which this release does not clip"),
    ({"wieght": WEIGHT}, "which this release does not clip"),
])
def test_bad_release_bounds(frames, bounds, says):
    ledger = _ledger(frames)
    with pytest.raises(InvalidParameterError, match=says):
        ledger.mean(["weight"], epsilon=1.0, bounds=bounds)
    assert ledger.releases == []


@pytest.mark.slow
def test_the_joint_certificate_reads_each_columns_bounds(frames):
    # The same releases through a ledger opened with every range declared
    # (the path that existed before): the same joint epsilon at every step.
    data, reference = frames
    height = (float(reference["height"].min()), float(reference["height"].max()))
    later = _ledger(frames)
    declared = _ledger(frames, bounds={"weight": WEIGHT, "height": height})
    steps = [(["height"], {}), (["weight"], {"bounds": {"weight": WEIGHT}}),
             (["weight", "height"], {})]
    for columns, kw in steps:
        a = later.mean(columns, epsilon=0.5, **kw)
        b = declared.mean(columns, epsilon=0.5)
        assert _clipped(a) == _clipped(b)
        np.testing.assert_allclose(a.noise_std, b.noise_std, rtol=1e-9)
        assert later.spent[0] == pytest.approx(declared.spent[0], rel=1e-9)
    # It fails if the fixed range were not read: weight clipped to the
    # reference's whole range (the 999 codes) gives another joint epsilon.
    # (The default robust range cuts the codes too, so it is not the contrast.)
    plain = _ledger(frames, bounds="reference")
    for columns, _ in steps:
        plain.mean(columns, epsilon=0.5)
    assert abs(plain.spent[0] - later.spent[0]) > 1e-3


def test_a_plan_with_bounds_leaves_nothing_behind(frames):
    # A plan (or a refused release) with bounds= fixes nothing, and leaves no
    # law clipped so in the ledger's caches.
    ledger, fresh = _ledger(frames), _ledger(frames)
    ledger.mean(["height"], epsilon=0.5)
    fresh.mean(["height"], epsilon=0.5)
    plan, joint = ledger.plan(["height", "weight"], epsilon=0.5,
                              bounds={"weight": WEIGHT})
    assert _clipped(plan)["weight"] == WEIGHT
    rel = ledger.mean(["height", "weight"], epsilon=0.5)
    assert _clipped(rel)["weight"] != WEIGHT
    again = fresh.mean(["height", "weight"], epsilon=0.5)
    assert ledger.spent == pytest.approx(fresh.spent, rel=1e-12)
    assert _clipped(rel) == _clipped(again)
    assert joint != pytest.approx(ledger.spent[0], rel=1e-6)


def test_fixed_bounds_are_kept_by_json_and_the_store(frames, tmp_path):
    data, reference = frames
    ledger = _ledger(frames)
    ledger.mean(["weight"], epsilon=1.0, bounds={"weight": WEIGHT})
    loaded = skattr.Ledger.from_json(ledger.to_json(), data,
                                     reference=reference, random_state=0)
    path = tmp_path / "hospital.ledger"
    stored = skattr.Ledger.open(path, data, secret=SECRET, reference=reference,
                                budget=(10.0, 1e-3), law="gaussian",
                                theta="moments", random_state=0)
    stored.mean(["weight"], epsilon=1.0, bounds={"weight": WEIGHT})
    reopened = skattr.Ledger.open(path, data, reference=reference,
                                  random_state=0)
    for again in (loaded, reopened):
        assert _clipped(again.mean(["weight"], epsilon=1.0)) == {
            "weight": WEIGHT}
        with pytest.raises(InvalidParameterError, match="was released"):
            again.mean(["weight"], epsilon=1.0, bounds={"weight": (0, 300)})


def test_the_command_line_passes_bounds_to_a_later_release(frames, tmp_path,
                                                           capsys):
    from skattr.cli import main

    data, reference = frames
    private, public = tmp_path / "private.csv", tmp_path / "public.csv"
    data.to_csv(private, index=False)
    reference.to_csv(public, index=False)
    common = [str(private), "--secret-column", "gender", "--secret-value",
              "female", "--pairs", "0.4,0.6", "--reference", str(public),
              "--law", "gaussian", "--theta", "moments", "--seed", "0",
              "--ledger", str(tmp_path / "hospital.ledger")]
    assert main(["release", *common, "--columns", "height",
                 "--budget", "10,1e-3"]) == 0
    out_json = tmp_path / "weight.json"
    assert main(["release", *common, "--columns", "weight", "--bounds",
                 "weight=30,200", "--output", str(out_json)]) == 0
    import json

    ranges = json.loads(out_json.read_text())["clipping"]["ranges"]
    assert ranges == [["weight", 30.0, 200.0]]
    assert main(["release", *common, "--columns", "height", "--bounds",
                 "height=100,200"]) == 2
    assert "Column 'height' was released through this ledger" in \
        capsys.readouterr().err


def test_a_ledger_that_clips_nothing_refuses_a_releases_bounds(frames):
    ledger = _ledger(frames, bounds=None)
    with pytest.raises(InvalidParameterError, match="This ledger clips nothing"):
        ledger.mean(["weight"], epsilon=1.0, bounds={"weight": WEIGHT})
