"""Dispatching team turns under limits: model calls, budgets, the stall watchdog."""
