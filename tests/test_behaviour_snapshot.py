"""What a user sees is unchanged: the behaviour snapshot replayed.

``tests/data/behaviour_snapshot.json`` records, for about 150 calls a user
could make (every verb, named mechanisms, Theta choices, secrets, plans, a
ledger, ``describe``, bare estimators, the command line and about 30
refusals), the release's ``to_dict()`` and summary, the plan, or the error's
class and message, and every warning. It was written before issue 45's
refactoring (statistic kinds and Theta as types) by
``tests/_snapshot_cases.py``; a refactoring that changes any of it changes
behaviour. Numbers are compared to 1e-9 relative (the same arithmetic in
another order may round differently); words exactly.

A change of behaviour made on purpose rewrites the cases it changes
(``python tests/_snapshot_cases.py --write NAME ...``), named in its commit.
"""

from __future__ import annotations

import json
import math

import pytest
from _snapshot_cases import SNAPSHOT, _run, cases

#: Cases over about 1 s of CPU (an exact order law of the resampling Theta,
#: a search over expected-value mechanisms, describe's ledger).
SLOW = {"theta.resample.median", "mechanism.expm-gaussian.law-gaussian",
        "describe", "ledger.mixed"}

_EXPECTED = json.loads(SNAPSHOT.read_text())
_CALLS = None


def _call(name):
    global _CALLS
    if _CALLS is None:
        _CALLS = cases()
    return _CALLS[name]


def _differences(expected, got, where="") -> list[str]:
    if isinstance(expected, dict) and isinstance(got, dict):
        out = [f"{where}: keys {sorted(set(expected) ^ set(got))} differ"] \
            if set(expected) != set(got) else []
        for key in sorted(set(expected) & set(got)):
            out += _differences(expected[key], got[key], f"{where}.{key}")
        return out
    if isinstance(expected, list) and isinstance(got, list):
        if len(expected) != len(got):
            return [f"{where}: {len(expected)} items, now {len(got)}"]
        return [d for i, (e, g) in enumerate(zip(expected, got, strict=True))
                for d in _differences(e, g, f"{where}[{i}]")]
    if (isinstance(expected, float) and isinstance(got, (int, float))
            and not isinstance(got, bool)):
        if math.isclose(expected, got, rel_tol=1e-9, abs_tol=1e-12):
            return []
    elif expected == got and type(expected) is type(got):
        return []
    return [f"{where}: was {expected!r}, now {got!r}"]


def test_snapshot_covers_at_least_a_hundred_cases():
    assert len(_EXPECTED) >= 100
    assert set(cases()) == set(_EXPECTED), (
        "the cases and the snapshot differ: rewrite the snapshot for new "
        "cases only (tests/_snapshot_cases.py --write NAME)")
    refusals = [v for v in _EXPECTED.values() if "error" in v]
    releases = [v for v in _EXPECTED.values() if "release" in v]
    assert len(refusals) >= 30 and len(releases) >= 60


@pytest.mark.parametrize("name", [
    pytest.param(name, marks=pytest.mark.slow) if name in SLOW else name
    for name in sorted(_EXPECTED)])
def test_behaviour_is_unchanged(name):
    got = json.loads(json.dumps(_run(_call(name))))
    differences = _differences(_EXPECTED[name], got)
    assert not differences, "\n".join(differences[:20])


def test_the_comparison_can_fail():
    case = _EXPECTED["verb.mean.eps0.5.n50"]
    moved = json.loads(json.dumps(case))
    moved["release"]["values"]["weight"] *= 1 + 1e-6
    assert _differences(case, moved)
    reworded = json.loads(json.dumps(_EXPECTED["refusal.large-delta"]))
    reworded["message"] += "."
    assert _differences(_EXPECTED["refusal.large-delta"], reworded)
