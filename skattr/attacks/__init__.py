"""Attacks that measure how much a release leaks the property it should hide."""

from skattr.attacks._property_inference import (
    AttackResult,
    PropertyInferenceAttack,
)
from skattr.attacks._search import attack_scorer, refit_under_attack_limit
from skattr.utils._public import public_dir

__all__ = [
    "AttackResult",
    "PropertyInferenceAttack",
    "attack_scorer",
    "refit_under_attack_limit",
]

__dir__ = public_dir(__all__)
