"""Limits on model calls that the scheduler sets and the agents' middlewares enforce: the budget
governor, the model-call limiter and the stall watchdog. Pure logic with no lab imports, so both the
scheduler (which builds them) and the middlewares (which consult them) sit above it."""
