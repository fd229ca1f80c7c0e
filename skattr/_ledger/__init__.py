"""The ledger: many releases on one dataset, certified jointly under a budget."""

from skattr._ledger._entry import LedgerEntry
from skattr._ledger._ledger import Ledger, joint_noise

__all__ = ["Ledger", "LedgerEntry", "joint_noise"]
