"""Bayesian networks over attribute parameters, for the Markov quilt mechanisms.

:class:`ParameterNetwork` holds the law of the parameters phi of a dataset's
attributes (Zhang, Ohrimenko and Cummings, Sec. 5): exact inference by
variable elimination, the max-influence e_Theta(X_A | X_i) (Def. 7), the
Markov quilts of a node (Def. 6) and the least-influence quilt search the
mechanisms use. :func:`fit_network` learns one from grouped reference data,
and :class:`NetworkTheta` gives the Wasserstein mechanisms the exact laws of
a count under it.
"""

from skattr.bayes._fit import fit_network
from skattr.bayes._laws import NetworkTheta
from skattr.bayes._network import MarkovQuilt, ParameterNetwork, QuiltChoice
from skattr.utils._public import public_dir

__all__ = ["MarkovQuilt", "NetworkTheta", "ParameterNetwork", "QuiltChoice",
           "fit_network"]

__dir__ = public_dir(__all__)
