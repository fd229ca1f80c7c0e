"""The keywords skattr 0.2 took and 0.3 replaced, still taken until 0.4.

0.3 folds the model of F into ``law=`` (``sampling`` and ``covariances``
became :class:`~skattr.laws.AssumeGaussian`'s options), the relaxations into
``relaxation=`` (``lambda_eta``, ``eta``, ``wasserstein_w`` and
``wasserstein_lambda`` became :class:`MaxDivergenceGap` and
:class:`WassersteinGap`), and drops the parameters that did nothing
(``calibration`` for Laplace noise, ``delta`` for a pure certificate). A
class's ``__init__`` still takes the old keywords (not in its signature, so
scikit-learn's ``get_params``, ``clone`` and checks see 0.3's parameters
only) and turns them into 0.3's values with a FutureWarning naming them; at
their 0.2 defaults (as a file saved by 0.2 holds them) they are silent. This
module goes in 0.4.
"""

from __future__ import annotations

import inspect
import warnings
from dataclasses import dataclass

from skattr.exceptions import InvalidParameterError
from skattr.laws import AssumeGaussian
from skattr.mechanisms._relaxations import MaxDivergenceGap, WassersteinGap
from skattr.utils._stack import caller_stacklevel

__all__ = [
    "LAW_KEYWORDS",
    "RELAXATION_KEYWORDS",
    "RefusedKeywords",
    "fold_keywords_of_0_2",
    "pair_law_keywords",
    "takes_keywords_of_0_2",
    "unused_keywords_of_0_2",
]

#: 0.2's keywords of the model of F, with their defaults.
LAW_KEYWORDS = {"sampling": "without-replacement", "covariances": "certify"}
#: 0.2's keywords of the relaxations, with their defaults.
RELAXATION_KEYWORDS = {"lambda_eta": None, "eta": 0.0, "wasserstein_w": None,
                       "wasserstein_lambda": None}
_WASSERSTEIN = ("wasserstein_w", "wasserstein_lambda")


@dataclass(frozen=True)
class RefusedKeywords:
    """0.2 keywords that name no 0.3 value: kept in its place, refused at fit.

    scikit-learn's estimators raise nothing in ``__init__`` (``clone`` and
    ``set_params`` build them with any values), so what is wrong with the
    old keywords is said when ``fit`` validates the parameters.
    """

    message: str

    def __repr__(self) -> str:
        return f"RefusedKeywords({self.message!r})"


def takes_keywords_of_0_2(init):
    """Take ``init``'s ``**`` keywords (0.2's, until 0.4) out of its signature.

    The signature, which scikit-learn reads for ``get_params``, ``clone`` and
    its checks, and ``help()`` shows, lists the parameters of 0.3 only; the
    old keywords still reach ``init``.
    """
    signature = inspect.signature(init)
    init.__signature__ = signature.replace(parameters=[
        p for p in signature.parameters.values() if p.kind is not p.VAR_KEYWORD])
    return init


def _is_default(value, default) -> bool:
    if default is None:
        return value is None
    return isinstance(value, (str, int, float)) and value == default


def _warn(message: str) -> None:
    warnings.warn(message + " The 0.2 keywords are deprecated since skattr 0.3 "
                  "and will be removed in 0.4.", FutureWarning,
                  stacklevel=caller_stacklevel())


def unused_keywords_of_0_2(old: dict, owner: str, unused: dict) -> None:
    """Take 0.2's keywords that did nothing for ``owner``; refuse any other.

    ``unused`` maps each to its 0.2 default: another value warns (it does
    nothing); the default is silent. Any other keyword is the TypeError of
    any function (scikit-learn never passes one: the ``**`` keywords are not
    in the signature).
    """
    for name, value in old.items():
        if name not in unused:
            raise TypeError(f"{owner}.__init__() got an unexpected keyword "
                            f"argument {name!r}")
        if not _is_default(value, unused[name]):
            why = {"calibration": "Laplace noise has no Gaussian calibration",
                   "delta": "its certificate has delta = 0"}.get(name, "")
            _warn(f"{owner} ignores {name}={value!r} ({why}); drop it.")


def pair_law_keywords(law, relaxation, old: dict, owner: str, *,
                      wasserstein: bool, update: bool = False) -> tuple:
    """Return ``(law, relaxation)``, 0.2's keywords ``old`` folded in.

    ``sampling`` and ``covariances`` become ``law=AssumeGaussian(...)`` when
    the law is Gaussian; with the exact law they are dropped, with a warning
    that says what they did there (see :func:`_law`). The relaxation keywords
    become a :class:`MaxDivergenceGap` or a :class:`WassersteinGap` (Thm
    4.7's only where ``wasserstein``). With ``update`` (``set_params``) each
    keyword changes its field of the current value, as each was a parameter
    of its own in 0.2 (``lambda_eta=None`` or ``wasserstein_w=None`` removes
    the relaxation). What cannot be folded (an unknown keyword,
    contradictory ones, a value out of range) becomes a
    :class:`RefusedKeywords` that ``fit`` raises.
    """
    taken = {**LAW_KEYWORDS, **{k: v for k, v in RELAXATION_KEYWORDS.items()
                                if wasserstein or k not in _WASSERSTEIN}}
    unknown = sorted(set(old) - set(taken))
    if unknown:
        return law, RefusedKeywords(
            f"{owner} takes no parameter {unknown[0]!r}; see help({owner}) for "
            "its parameters (0.2's sampling and covariances are law="
            "AssumeGaussian(...) since 0.3, its relaxation keywords "
            "relaxation=).")
    laws = {k: v for k, v in old.items() if k in LAW_KEYWORDS}
    relaxations = {k: v for k, v in old.items() if k in RELAXATION_KEYWORDS}
    if not update:
        # A constructor: the keywords at their 0.2 defaults say nothing.
        laws = {k: v for k, v in laws.items() if not _is_default(v, taken[k])}
        relaxations = {k: v for k, v in relaxations.items()
                       if not _is_default(v, taken[k])}
    try:
        law = _law(law, laws, owner, update)
    except InvalidParameterError as exc:
        law = RefusedKeywords(str(exc))
    try:
        relaxation = _relaxation(relaxation, relaxations, update)
    except InvalidParameterError as exc:
        relaxation = RefusedKeywords(str(exc))
    return law, relaxation


def _law(law, given: dict, owner: str, update: bool):
    """``law`` with 0.2's ``sampling``/``covariances`` folded in."""
    if not given:
        return law
    keywords = ", ".join(f"{k}=" for k in sorted(given))
    if isinstance(law, AssumeGaussian) and not update:
        raise InvalidParameterError(
            f"law={law!r} and the 0.2 keywords {keywords} describe the same "
            "choice; pass law=AssumeGaussian(...) only.")
    if isinstance(law, AssumeGaussian) or (isinstance(law, str)
                                           and law == "gaussian"):
        base = law if isinstance(law, AssumeGaussian) else AssumeGaussian()
        new = AssumeGaussian(**{**vars(base), **given})
        _warn(f"{keywords} with the Gaussian law is law={new!r}; pass that.")
        return new
    if all(_is_default(v, LAW_KEYWORDS[k]) for k, v in given.items()):
        _warn(f"{keywords} at 0.2's default: drop them.")
        return law
    _warn(f"{owner} drops {keywords}: they are options of the Gaussian model, "
          f"and law={law!r} takes the exact law, which certifies the noise "
          "(records drawn with replacement). In 0.2 they could still steer "
          "the search for the noise's shape and recorded an equal-covariance "
          "assumption the certificate did not rest on, so the noise may "
          "differ slightly. Pass law="
          f"{AssumeGaussian(**given)!r} to take the Gaussian model instead.")
    return law


def _relaxation(relaxation, given: dict, update: bool):
    """``relaxation`` with 0.2's keywords folded in."""
    if not given:
        return relaxation
    if relaxation is not None and not update:
        raise InvalidParameterError(
            f"relaxation={relaxation!r} and the 0.2 keywords "
            f"{sorted(given)} describe the same choice; pass relaxation= only.")
    current = {}
    if isinstance(relaxation, MaxDivergenceGap):
        current = {"lambda_eta": relaxation.lam, "eta": relaxation.eta}
    elif isinstance(relaxation, WassersteinGap):
        current = {"wasserstein_w": relaxation.w,
                   "wasserstein_lambda": relaxation.lam}
    merged = {**current, **given}
    lam, eta = merged.get("lambda_eta"), merged.get("eta", 0.0)
    w, w_lam = merged.get("wasserstein_w"), merged.get("wasserstein_lambda")
    if lam is not None and w is not None:
        raise InvalidParameterError(
            "Theorems 4.6 (lambda_eta, eta) and 4.7 (wasserstein_w, "
            "wasserstein_lambda) are alternative relaxations; pass one, as "
            "relaxation=MaxDivergenceGap(...) or WassersteinGap(...).")
    if lam is None and (w is None) != (w_lam is None) and not (
            update and w is None):
        raise InvalidParameterError(
            "Theorem 4.7 needs both W (the infinity-Wasserstein distance "
            "between the modelled and true laws) and the lambda it may cost: "
            "pass relaxation=WassersteinGap(w=..., lam=...).")
    keywords = ", ".join(f"{k}=" for k in sorted(given))
    if lam is not None:
        new = MaxDivergenceGap(lam=lam, eta=eta)
    elif w is not None:
        new = WassersteinGap(w=w, lam=w_lam)
    else:
        # eta alone (0.2 ignored it), or a relaxation set_params removes.
        new = None
        if not update and not _is_default(eta, 0.0):
            _warn(f"eta={eta!r} did nothing without lambda_eta (the slack of "
                  "its max-divergence) and is dropped; pass relaxation="
                  "MaxDivergenceGap(lam=..., eta=...) for the relaxation.")
            return None
    if update or new is not None:
        _warn(f"{keywords} are relaxation={new!r}; pass that.")
    return new


def fold_keywords_of_0_2(params: dict, mechanism: str, *,
                         wasserstein: bool) -> dict:
    """Return a caller's parameters with 0.2's keywords folded in, or refuse.

    For the callers that pass keywords on to the mechanisms (the accessor,
    the ledger, the plots and the command line, through the registry):
    ``sampling``, ``covariances`` and the relaxation keywords become
    ``law=`` and ``relaxation=`` as in a mechanism's ``__init__``; what
    cannot be folded is an :class:`~skattr.exceptions.InvalidParameterError`
    here, before any fit.
    """
    old = {k: v for k, v in params.items()
           if k in LAW_KEYWORDS or k in RELAXATION_KEYWORDS}
    if not old:
        return params
    folded = {k: v for k, v in params.items() if k not in old}
    law, relaxation = pair_law_keywords(
        folded.get("law", "auto"), folded.get("relaxation"), old,
        f"mechanism={mechanism!r}", wasserstein=wasserstein)
    for value in (law, relaxation):
        if isinstance(value, RefusedKeywords):
            raise InvalidParameterError(value.message)
    if law != folded.get("law", "auto"):
        folded["law"] = law
    if relaxation is not None:
        folded["relaxation"] = relaxation
    return folded
