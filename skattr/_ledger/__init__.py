"""The ledger: many releases on one dataset, certified jointly under a budget."""

from skattr._ledger._entry import LedgerEntry
from skattr._ledger._ledger import Ledger, joint_noise
from skattr._ledger._store import LedgerStore, SQLiteStore, StoreTransaction

__all__ = ["Ledger", "LedgerEntry", "LedgerStore", "SQLiteStore",
           "StoreTransaction", "joint_noise"]
