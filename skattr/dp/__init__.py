"""Differential-privacy primitives: randomized response, exponential mechanism, zCDP.

Plain functions, not estimators (Dwork and Roth 2014, Sections 3.2 and 3.4).
Randomized response (Warner 1965; k-ary for more than two categories) lets each
record report its category with epsilon-local differential privacy, and the
category frequencies are estimated without bias by inverting its known channel.
The exponential mechanism (McSherry and Talwar 2007) chooses one candidate with
probability proportional to exp(epsilon * score / (2 * sensitivity)).

Both give *record-level* differential privacy: they hide whether one record is in
the data or what it holds. They do not hide global properties of the data (the
proportion of a category, the distribution the records were drawn from), which is
attribute privacy; for that use the estimators of :mod:`skattr.mechanisms`. The
estimated frequencies of randomized response reveal the proportion up to their
sampling error, whatever epsilon.

Examples
--------
>>> from skattr.dp import (exponential_mechanism, randomized_response,
...                        randomized_response_estimate,
...                        randomized_response_variance)
>>> answers = ["yes", "no", "no", "yes", "no"] * 2_000     # 40% "yes"
>>> reports = randomized_response(answers, 1.0, categories=["no", "yes"],
...                               random_state=0)
>>> randomized_response_estimate(reports, 1.0, categories=["no", "yes"]).round(3)
no     0.598
yes    0.402
Name: frequency, dtype: float64
>>> round(randomized_response_variance(10_000, 0.4, 1.0) ** 0.5, 4)  # its s.e.
0.0096
>>> exponential_mechanism(["red", "green", "blue"], [30, 25, 5], epsilon=0.5,
...                       sensitivity=1.0, random_state=0)
'red'
"""

from skattr.dp._levels import check_privacy_level
from skattr.dp._primitives import (
    exponential_mechanism,
    exponential_mechanism_probabilities,
    randomized_response,
    randomized_response_estimate,
    randomized_response_variance,
)
from skattr.dp._zcdp import epsilon_of_rho, rho_of_epsilon
from skattr.utils._public import public_dir

__all__ = [
    "check_privacy_level",
    "epsilon_of_rho",
    "exponential_mechanism",
    "exponential_mechanism_probabilities",
    "randomized_response",
    "randomized_response_estimate",
    "randomized_response_variance",
    "rho_of_epsilon",
]

__dir__ = public_dir(__all__)
