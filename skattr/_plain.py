"""A certificate in plain words: the opening of every ``summary()``.

What is hidden, the odds factor e^epsilon an observer's beliefs can move by,
the probability delta it may fail, what the guarantee rests on and that it
covers one release alone (issue 28: the demo's words, for a privacy officer).
The technical certificate follows it under its own heading.
"""

from __future__ import annotations

import math
import re

__all__ = ["plain_guarantee", "plain_ledger", "plain_secret"]

_PROPORTION = re.compile(r"^proportion\((?P<column>.+?)(?: == (?P<value>.+))?\)$")
_PREDICATE = re.compile(r"^proportion\((?P<column>.+?): (?P<name>.+)\)$")
_MEAN = re.compile(r"^mean\((?P<column>.+)\)$")
_PAIR = re.compile(r"^(?P<a>\S+) vs (?P<b>\S+)$")
_WINDOW = re.compile(r"^every pair within (?P<w>\S+) in (?P<support>.+)$")


def plain_secret(label: str) -> str:
    """Return a secret's label (``Secret.label``) as a phrase of plain words.

    Examples
    --------
    >>> plain_secret("proportion(gender == 'female'): pairs 0.4 vs 0.6")
    "whether the share of records with gender = 'female' is 0.4 or 0.6"
    >>> plain_secret("mean(income): pairs 40000 vs 60000, 50000 vs 70000")
    'whether the mean of income is 40000 or 60000 (and likewise 50000 or 70000)'
    >>> plain_secret("something new")
    'something new'
    """
    end = label.find("): ")
    if end < 0:
        return label
    what, how = label[:end + 1], label[end + 3:]
    predicate = _PREDICATE.match(what)
    proportion = _PROPORTION.match(what)
    mean = _MEAN.match(what)
    if predicate and " == " not in what:
        subject = (f"the share of records whose {predicate['column']} "
                   f"satisfies {predicate['name']}")
    elif proportion:
        value = proportion["value"]
        subject = (f"the share of records with {proportion['column']} = {value}"
                   if value is not None else
                   f"the share of records with {proportion['column']} true")
    elif mean:
        subject = f"the mean of {mean['column']}"
    else:
        return label
    if how.startswith("pairs "):
        pairs = [_PAIR.match(p.strip()) for p in how[len("pairs "):].split(",")]
        if not all(pairs):
            return label
        first, *rest = pairs
        text = f"whether {subject} is {first['a']} or {first['b']}"
        if rest:
            text += " (and likewise " + ", ".join(
                f"{p['a']} or {p['b']}" for p in rest) + ")"
        return text
    window = _WINDOW.match(how)
    if window:
        return (f"{subject} (any two of its values within {window['w']} of "
                f"each other, in {window['support']})")
    if " vs " in how:
        sets = how.split(" (")[0].split(" vs ")
        return f"whether {subject} lies in " + " or ".join(sets)
    return label


def _rests_on(assumed, where: str = "below") -> str:
    """Say what the guarantee rests on: a chosen model, or the reference sample."""
    chosen = list(dict.fromkeys(a.option for a in assumed if a.opt_in))
    if any(a.kind == "resampling-model" for a in assumed):
        chosen.append("the reference's records taken as the population")
    confidence = [a.params["confidence"] for a in assumed
                  if a.kind in ("reference.band", "reference.sample")]
    if chosen:
        return ("It rests on a model you chose (" + "; ".join(chosen) + "), "
                "which skattr does not check against the data: see "
                f"\"assumes\" {where}.")
    if confidence:
        return ("It holds for the population the reference data were "
                "sampled from, with probability at least "
                f"{min(confidence):g} over that sample.")
    return f"It holds under the assumptions listed {where} (\"assumes\")."


def _odds(epsilon: float) -> str:
    factor = math.exp(epsilon) if epsilon < 700 else math.inf
    return f"e^{epsilon:.4g} = {factor:.3g}" if factor < 1e6 else f"e^{epsilon:.4g}"


def plain_guarantee(certified, *, planned: bool = False) -> str:
    """Return the guarantee of a plan or release in a few plain sentences.

    Parameters
    ----------
    certified : Plan or Release
        Reads its ``epsilon``, ``delta``, ``guarantee``, ``secrets`` and
        ``assumed``.
    planned : bool, default=False
        Worded for a plan (nothing released yet).
    """
    epsilon, delta = float(certified.epsilon), float(certified.delta)
    this = "a release by this plan" if planned else "this release"
    seeing = f"seeing {this}"
    hidden = "; and ".join(plain_secret(s) for s in certified.secrets)
    if "differential privacy" in certified.guarantee:
        opening = (f"Each record is hidden, not a property of the whole data: "
                   f"whatever an observer believed about any one record, "
                   f"{seeing} changes their odds by at most a factor "
                   f"{_odds(epsilon)} (epsilon = {epsilon:g})")
    elif math.isinf(epsilon):
        return (f"Hidden: {hidden}. {this[0].upper() + this[1:]} does not "
                "hide it: its epsilon is infinite.")
    else:
        opening = (f"Hidden: {hidden}. Whatever an observer believed about "
                   f"it, {seeing} changes their odds by at most a factor "
                   f"{_odds(epsilon)} (epsilon = {epsilon:g})")
    opening += (f", except with probability {delta:g} (delta)." if delta > 0
                else ", always (delta = 0).")
    rests = _rests_on(tuple(getattr(certified, "assumed", ())))
    if "differential privacy" in certified.guarantee:
        scope = ("Differential privacy composes: several releases cost at most "
                 "the sum of their epsilons and deltas.")
    else:
        scope = (f"It covers {this} alone: two releases of the same data can "
                 "reveal together what neither reveals alone, so release "
                 "several through a ledger (df.attrpriv.ledger), which "
                 "certifies them jointly.")
    clipped = _clipped(getattr(certified, "clipping", None))
    return " ".join(filter(None, (opening, rests, scope, clipped)))


def _clipped(*clippings) -> str:
    """Say the ranges the released columns were clipped to, if any."""
    ranges, sources = {}, []
    for clipping in clippings:
        if clipping is not None and clipping.ranges:
            ranges.update((c, (lo, hi)) for c, lo, hi in clipping.ranges)
            sources.append(clipping.source)
    if not ranges:
        return ""
    words = {"robust": "the reference's range within its far-out fences",
             "reference": "the reference's range"}
    where = "; ".join(dict.fromkeys(words.get(s, "declared") for s in sources))
    shown = ", ".join(f"{c!s} to [{lo:.4g}, {hi:.4g}]"
                      for c, (lo, hi) in ranges.items())
    return ("Each column is clipped before the statistic is computed: "
            f"{shown} ({where}).")


def plain_ledger(ledger) -> str:
    """Return a ledger's joint guarantee in a few plain sentences.

    Parameters
    ----------
    ledger : Ledger
        Reads its ``secret``, ``releases``, ``spent`` and ``budget``.
    """
    hidden = "; and ".join(plain_secret(s.label) for s in _secrets(ledger))
    budget = ledger.budget[0]
    count = len(ledger.releases)
    refuses = (f"The ledger refuses, before drawing any noise, a release that "
               f"would take this past a factor {_odds(budget)} (epsilon = "
               f"{budget:g}).")
    if count == 0:
        return f"Hidden: {hidden}. Nothing released yet. {refuses}"
    epsilon, delta = ledger.spent
    them = "this release" if count == 1 else f"all {count} releases together"
    text = (f"Hidden: {hidden}. Whatever an observer believed about it, "
            f"seeing {them} changes their odds by at most a factor "
            f"{_odds(epsilon)} (epsilon = {epsilon:.4g})"
            + (f", except with probability {delta:g} (delta)." if delta > 0
               else ", always (delta = 0)."))
    assumed = tuple(a for e in ledger.releases if e.release is not None
                    for a in e.release.assumed)
    clipped = _clipped(*(e.release.clipping for e in ledger.releases
                         if e.release is not None))
    return " ".join(filter(None, (text, _rests_on(assumed, where="on each "
                                                  "release"), clipped, refuses)))


def _secrets(ledger):
    secret = ledger.secret
    return secret if isinstance(secret, (list, tuple)) else (secret,)
