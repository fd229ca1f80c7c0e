"""Theta: what ``fit`` learns (or an expert states) about the data's law.

The objects a mechanism takes as ``theta=`` (:class:`ExpertTheta` of
:class:`GroupMoments` or :class:`JointGaussian` models, :class:`MonteCarlo`,
:class:`Bootstrap`, :class:`Resample`, :class:`ProbabilityBox`, :class:`SumLaws`,
or a name: ``"auto"``, ``"moments"``, ``"gaussian"``). Fitted for a query and
its secrets, each gives the law of the released statistic
(:mod:`skattr.laws`): every one answers the :class:`ThetaSpec` protocol,
which a new Theta implements; :func:`joint_law` refits it for several statistics of
the same data. The exact laws of counts and sums given a secret
(:func:`count_pmf`, :func:`sum_pmf`) live in :mod:`skattr.laws`, and are
importable here too.
"""

from skattr.laws._counts import count_pmf
from skattr.laws._sums import SumLaws, sum_pmf
from skattr.theta._band import ConfidenceBand
from skattr.theta._box import ConfidenceBox, ProbabilityBox
from skattr.theta._expert import ExpertTheta
from skattr.theta._models import GroupMoments, JointGaussian
from skattr.theta._protocol import ThetaSpec
from skattr.theta._request import joint_law
from skattr.theta._resample import Resample
from skattr.theta._sampled import Bootstrap, MonteCarlo
from skattr.utils._public import public_dir

__all__ = [
    "Bootstrap",
    "ConfidenceBand",
    "ConfidenceBox",
    "ExpertTheta",
    "GroupMoments",
    "JointGaussian",
    "MonteCarlo",
    "ProbabilityBox",
    "Resample",
    "SumLaws",
    "ThetaSpec",
    "count_pmf",
    "joint_law",
    "sum_pmf",
]

__dir__ = public_dir(__all__)
