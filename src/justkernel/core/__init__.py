"""Tier 0: records with no I/O, shared by every other part (store, domain, app, web).

Nothing here opens a file, a socket or a database; so anything may import it, and it imports
nothing of the lab's.
"""
