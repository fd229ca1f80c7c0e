"""A certificate in plain words: the opening of every ``summary()``.

What is hidden, the odds factor e^epsilon an observer's beliefs can move by,
the probability delta it may fail, what the guarantee rests on and that it
covers one release alone (issue 28: the demo's words, for a privacy officer).
The technical certificate follows it under its own heading.
"""

from __future__ import annotations

import math
import re

from skattr._certificate import unique
from skattr._secret import either_count
from skattr.noise import marginal_half_widths

__all__ = ["JOINT_BOUNDS", "RECORDS", "mostly_noise", "plain_guarantee",
           "plain_ledger", "plain_noise", "plain_noise_of", "plain_secret",
           "plain_summary", "plain_subsampled"]

#: What attribute privacy does not protect, and the options that do: the
#: reverse of differential privacy's caveat, said once here and read by every
#: summary (a release's, a plan's, a ledger's, ``describe()``'s and
#: ``synthesize``'s). Add an option here when skattr gains one.
RECORDS = (
    "It hides this property of the data as a whole, not any one record: it "
    "promises nothing about what the release reveals of one person. To hide "
    "records too, use mechanism='group-dp-laplace' or 'group-dp-gaussian' "
    "(a mean, sum, count or proportion: every record and every property, "
    "with far more noise), 'dp-laplace', 'dp-gaussian' or "
    "skattr.synth.DPRAP (each record, not the property), or, for a "
    "synthetic table, df.attrpriv.synthesize (the share of a group and "
    "each record).")

_PROPORTION = re.compile(r"^proportion\((?P<column>.+?)(?: == (?P<value>.+))?\)$")
_PREDICATE = re.compile(r"^proportion\((?P<column>.+?): (?P<name>.+)\)$")
_MEAN = re.compile(r"^mean\((?P<column>.+)\)$")
_PAIR = re.compile(r"^(?P<a>\S+) vs (?P<b>\S+)$")
_WINDOW = re.compile(r"^every pair within (?P<w>\S+) in (?P<support>.+)$")
_GROUP = re.compile(r"^group differential privacy \(groups of k = (?P<k>\d+)")


def plain_secret(label: str, assumed=()) -> str:
    """Return a secret's label (``Secret.label``) as a phrase of plain words.

    Parameters
    ----------
    label : str
        The secret's label.
    assumed : sequence of Assumption, default=()
        A plan's or release's assumptions: when a ``"secret.grid"`` record
        of this secret is among them (pairs read on the grid of n records),
        each pair is followed by the records it was read as.

    Examples
    --------
    >>> plain_secret("proportion(gender == 'female'): pairs 0.4 vs 0.6")
    "whether the share of records with gender = 'female' is 0.4 or 0.6"
    >>> plain_secret("mean(income): pairs 40000 vs 60000, 50000 vs 70000")
    'whether the mean of income is 40000 or 60000 (and likewise 50000 or 70000)'
    >>> plain_secret("something new")
    'something new'
    >>> from skattr import Assumption
    >>> label = "proportion(g == 1): pairs 0.25 vs 0.5, 0.4 vs 0.6"
    >>> grid = Assumption.of("secret.grid", secret=label, n=52,
    ...                      stated=((0.25, 0.5), (0.4, 0.6)),
    ...                      sides=(((13,), (26,)), ((20, 21), (31, 32))),
    ...                      certified=((13, 26), (20, 31), (20, 32), (21, 31),
    ...                                 (21, 32)))
    >>> print(plain_secret(label, [grid]))  # doctest: +NORMALIZE_WHITESPACE
    whether the share of records with g = 1 is 0.25 or 0.5, that is 13 of 52
    records (25%) vs 26 of 52 (50%), and likewise 0.4 or 0.6, that is 20 or 21
    of 52 records (40%) vs 31 or 32 of 52 (60%)
    """
    readings = _grid_readings(label, assumed)
    end = label.find("): ")
    if end < 0:
        return label + _that_is(readings)
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
        return label + _that_is(readings)
    if how.startswith("pairs "):
        pairs = [_PAIR.match(p.strip()) for p in how[len("pairs "):].split(",")]
        if not all(pairs):
            return label + _that_is(readings)
        said = [f"{p['a']} or {p['b']}" for p in pairs]
        if len(readings) == len(said):
            # Each pair's records right after it.
            return f"whether {subject} is " + ", and likewise ".join(
                f"{pair}, that is {read}"
                for pair, read in zip(said, readings, strict=True))
        text = f"whether {subject} is {said[0]}"
        if len(said) > 1:
            text += " (and likewise " + ", ".join(said[1:]) + ")"
        return text + _that_is(readings)
    window = _WINDOW.match(how)
    if window:
        return (f"{subject} (any two of its values within {window['w']} of "
                f"each other, in {window['support']})")
    if " vs " in how:
        sets = how.split(" (")[0].split(" vs ")
        return f"whether {subject} lies in " + " or ".join(sets)
    return label


def _grid_readings(label: str, assumed) -> list[str]:
    """Return, per stated pair of the secret ``label``, the records read.

    From its ``"secret.grid"`` records among ``assumed`` (one a plan; a
    ledger's releases repeat it); [] when its pairs were certified as
    stated.
    """
    found = []
    for record in assumed:
        if (getattr(record, "kind", None) != "secret.grid"
                or record.params["secret"] != label):
            continue
        n = record.params["n"]
        found.append([f"{either_count(ka)} of {n} records ({100 * a:.3g}%) vs "
                      f"{either_count(kb)} of {n} ({100 * b:.3g}%)"
                      for (a, b), (ka, kb) in zip(record.params["stated"],
                                                  record.params["sides"],
                                                  strict=True)])
    # Records of one label state its pairs (check_grid_record): the same
    # number of them.
    return ["; ".join(dict.fromkeys(words))
            for words in zip(*found, strict=False)]


def _that_is(readings: list[str]) -> str:
    return ", that is " + "; ".join(readings) if readings else ""


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
    assumed = tuple(getattr(certified, "assumed", ()))
    hidden = "; and ".join(plain_secret(s, assumed) for s in certified.secrets)
    group = _GROUP.search(certified.guarantee)
    if group and int(group["k"]) >= int(certified.n):
        opening = (f"Every record and every property of the whole data are "
                   f"hidden: whatever an observer believed about any of them, "
                   f"{seeing} changes their odds by at most a factor "
                   f"{_odds(epsilon)} (epsilon = {epsilon:g})")
    elif group:
        opening = (f"Any {group['k']} records are hidden together, not a "
                   f"property of more of them: whatever an observer believed "
                   f"about them, {seeing} changes their odds by at most a "
                   f"factor {_odds(epsilon)} (epsilon = {epsilon:g})")
    elif "differential privacy" in certified.guarantee:
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
    rests = _rests_on(assumed)
    records = None
    if "differential privacy" in certified.guarantee:
        scope = ("Differential privacy composes: several releases cost at most "
                 "the sum of their epsilons and deltas.")
    elif getattr(certified, "in_ledger", False):
        scope = ("It is one of a ledger's releases: two releases of the same "
                 "data can reveal together what neither reveals alone, so the "
                 "ledger certifies them jointly (ledger.spent, "
                 "ledger.in_plain_words()).")
        records = RECORDS
    else:
        scope = (f"It covers {this} alone: two releases of the same data can "
                 "reveal together what neither reveals alone, so release "
                 "several through a ledger (df.attrpriv.ledger), which "
                 "certifies them jointly.")
        records = RECORDS
    clipped = _clipped(getattr(certified, "clipping", None))
    return " ".join(filter(None, (opening, rests, scope, clipped, records)))


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


#: The bounds a ledger's joint epsilon can come from, in plain words.
JOINT_BOUNDS = {
    "composed": "the releases composed under one coupling of the datasets "
                "(each release certified again under it, then their epsilons "
                "and deltas added)",
    "box": "every released value at its worst move over the reference's "
           "confidence bands at once",
    "alone": "the release's own certificate",
    "copies": "copies of one statistic under one coupling, their epsilons "
              "added",
    "resampled": "the statistics' joint law under the resampling Theta",
    "gaussian": "the statistics' joint law, as one Gaussian release",
}


def _joint_words(ledger) -> str:
    """Say what the joint epsilon of several releases is, and where it comes from."""
    if len(ledger.releases) < 2:
        return ""
    bound = ledger.releases[-1].joint_bound
    text = ("Pufferfish guarantees do not simply add up: two releases can "
            "reveal together what neither reveals alone, so the ledger "
            "certifies all of them together")
    if bound in JOINT_BOUNDS:
        text += f"; this epsilon comes from {JOINT_BOUNDS[bound]}"
    if bound == "composed":
        text += (", so it is never above the sum of the releases' epsilons "
                 "as certified under that coupling")
    return text + "."


def plain_ledger(ledger) -> str:
    """Return a ledger's joint guarantee in a few plain sentences.

    Parameters
    ----------
    ledger : Ledger
        Reads its ``secret``, ``releases``, ``spent`` and ``budget``.
    """
    assumed = tuple(a for e in ledger.releases if e.release is not None
                    for a in e.release.assumed)
    hidden = "; and ".join(plain_secret(s.label, unique(assumed))
                           for s in _secrets(ledger))
    budget = ledger.budget[0]
    count = len(ledger.releases)
    refuses = (f"The ledger refuses, before drawing any noise, a release that "
               f"would take this past a factor {_odds(budget)} (epsilon = "
               f"{budget:g}).")
    noise = ("Every release that names no mechanism takes Gaussian noise "
             "(noise='gaussian'): the joint epsilon of many grows about as the "
             "square root of their number, not as their sum."
             if getattr(ledger, "noise", "auto") == "gaussian" else "")
    if count == 0:
        return " ".join(filter(None, (f"Hidden: {hidden}. Nothing released yet.",
                                      noise, RECORDS, refuses)))
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
    return " ".join(filter(None, (text, _joint_words(ledger),
                                  _rests_on(assumed, where="on each release"),
                                  clipped, noise, RECORDS, refuses)))


def _secrets(ledger):
    secret = ledger.secret
    return secret if isinstance(secret, (list, tuple)) else (secret,)


#: The level of the noise interval compared with a statistic's range.
NOISE_LEVEL = 0.95


def mostly_noise(certified) -> list[tuple[str, float, float, float]]:
    """Return the statistics whose noise is wider than half their range.

    A statistic's own spread is judged from public information alone: the
    range of values it can take (``certified.ranges``, recorded on the
    certificate: the clipping range of a mean or quantile, 0 to 1 for a
    proportion, 0 to n for a count), never the private data nor anything
    released. A statistic is mostly noise when its noise's 95% interval,
    +/- h (the exact marginal half-width,
    :func:`~skattr.noise.marginal_half_widths`), is wider than half that
    range: 2 h > (high - low) / 2. The value released then cannot say in
    which half of its range the statistic lies (one release in twenty
    misses by more than that). Sample figures: a mean of weight from 30
    reference records a group, noise sd 13-27 kg against a range about 70
    kg wide, is mostly noise; from 2,000 records within ``bounds=(30,
    200)``, sd 7 kg, is not. A release not flagged may still be too noisy
    for a purpose: read its interval.

    Returns
    -------
    list of (name, half_width, low, high)
        One per statistic that is mostly noise; empty when none is, or the
        ranges are not known or unbounded.
    """
    ranges = getattr(certified, "ranges", None)
    if not ranges or certified.noise_law.is_zero:
        return []
    half = marginal_half_widths(certified.noise_law, 1 - NOISE_LEVEL)
    return [(str(name), float(h), low, high)
            for name, h, (low, high) in zip(certified.statistics, half, ranges,
                                            strict=True)
            if math.isfinite(high - low) and 2 * h > (high - low) / 2]


def plain_noise(certified, *, planned: bool = False) -> str:
    """Say, in plain words, which statistics are mostly noise and what would help.

    Empty when none is (see :func:`mostly_noise`, which says how that is
    judged).
    """
    found = mostly_noise(certified)
    says = ("a release by this plan could not tell" if planned
            else "this release cannot tell")
    return _noise_sentence(found, says, certified.guarantee)


def plain_noise_of(releases) -> str:
    """Say which statistics of several releases (a ledger's) are mostly noise.

    Each is named with its statistic (``mean(weight)``); empty when none is.
    """
    found, guarantees = [], set()
    for release in releases:
        kind = getattr(getattr(release, "values", None), "name", None)
        found += [(f"{kind}({name})" if isinstance(kind, str) else name,
                   *rest) for name, *rest in mostly_noise(release)]
        guarantees.add(release.guarantee)
    return _noise_sentence(found, "the table cannot tell",
                           " ".join(guarantees))


def _noise_sentence(found, says: str, guarantee: str) -> str:
    if not found:
        return ""
    named = "; ".join(f"{name}: +/- {h:.3g} against {low:.4g} to {high:.4g}"
                      for name, h, low, high in found)
    helps = ("a larger epsilon or tighter bounds="
             if "differential privacy" in guarantee else
             "more reference data (a narrower Theta), a larger epsilon or "
             "tighter bounds=")
    each, it = (("each statistic", "each") if len(found) > 1
                else ("the statistic", "it"))
    return (f"Mostly noise: the noise's {100 * NOISE_LEVEL:g}% interval is "
            f"wider than half the range {each} can take ({named}), so "
            f"{says} in which half of that range {it} lies. More private "
            f"records, {helps} would narrow it.")


def plain_summary(certified, *, planned: bool = False) -> str:
    """Return a summary's opening: the guarantee, then whether it is mostly noise."""
    noise = plain_noise(certified, planned=planned)
    guarantee = plain_guarantee(certified, planned=planned)
    return f"{guarantee} {noise}" if noise else guarantee


def plain_subsampled(secret: str, share, records, *, sizes: dict, n: int,
                     neighbours: str = "any", what: str = "the table",
                     share_in_table: float | None = None,
                     hidden: str | None = None,
                     unprotected: str | None = None,
                     records_rest: str | None = None) -> str:
    """Return the two guarantees of a release from subsampled groups, in plain words.

    Parameters
    ----------
    secret : str
        The secret's label.
    share, records : Certificate
        The share's certificate and each record's (None: no record
        protected).
    sizes : dict
        Each group's public size ("inside", "outside").
    n : int
        The records of the data.
    neighbours : {"any", "same-group"}
        Differential privacy's neighbouring datasets.
    what : str
        What was released ("the table", "the means").
    share_in_table : float or None
        A synthetic table's stated share of the group (None: not a table).
    hidden : str or None
        The share hidden, in words (``Secret.property_label``); None reads
        it from ``secret`` up to its first colon.
    unprotected : str or None
        What to say when no record is protected (None: that
        ``individuals=None`` was asked for).
    records_rest : str or None
        What the records' guarantee rests on, beyond the neighbours (a
        wrapped learner's own claims), in words.

    Examples
    --------
    >>> from skattr._release import Certificate
    >>> share = Certificate(epsilon=0.0, delta=0.0, sensitivity=0.0,
    ...                     guarantee="dataset attribute privacy")
    >>> text = plain_subsampled(
    ...     "proportion(sex == 'F'): pairs 0.4 vs 0.6", share, None,
    ...     sizes={"inside": 40, "outside": 40}, n=100, share_in_table=0.5)
    >>> print(text[:text.index("):") + 1])  # doctest: +NORMALIZE_WHITESPACE
    The share of proportion(sex == 'F') is hidden exactly (dataset
    attribute privacy, epsilon 0, delta 0)
    """
    group = secret.split(":")[0] if hidden is None else hidden
    left = n - sizes["inside"] - sizes["outside"]
    verb = "were" if what.endswith("s") else "was"
    words = [
        f"The share of {group} is hidden exactly ({share.guarantee}, epsilon "
        f"0, delta {share.delta:g}): {what} {verb} computed from "
        f"{sizes['inside']} records of the group and {sizes['outside']} "
        f"others of the {n} ({left} left unread), sizes fixed before any "
        "value was read, each subset drawn at random. If "
        "records are independent given their group and a group's records "
        "look the same whatever its share, such subsets look alike "
        f"{plain_secret(secret, share.assumed)}, so nothing computed from "
        "them tells the share."]
    if share.delta > 0:
        words.append(
            f"A group of the data could have held fewer records than kept, "
            f"with chance at most {share.delta:g}; then nothing would have "
            "been released.")
    if records is None:
        words.append(unprotected or (
            f"No record is protected (individuals=None was asked for): "
            f"{what} can reveal a person's rare combination of values, or "
            "that they are in the data."))
    else:
        whose = ("changing one person's record, their group included"
                 if neighbours == "any" else
                 "changing one person's values, their group taken as public")
        whose += (f" (both datasets holding at least {sizes['inside']} "
                  f"records of the group and {sizes['outside']} others: "
                  "data holding fewer is refused)")
        tail = ("." if records.delta == 0 else
                f", except with chance {records.delta:g}.")
        words.append(
            f"Each record is protected by ({records.epsilon:.3g}, "
            f"{records.delta:g})-differential privacy: {whose}, changes the "
            f"chance of any release by at most a factor "
            f"{_odds(records.epsilon)}{tail}")
        if records_rest:
            words.append(records_rest)
    if share_in_table is not None:
        words.append(f"The table's share of the group is {share_in_table:g}, "
                     "as stated: it says nothing of the data's.")
    words.append(f"Other releases of the same data (a ledger's) are not "
                 f"certified together with {what}.")
    return " ".join(words)
