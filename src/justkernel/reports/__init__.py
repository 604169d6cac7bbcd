"""What a run amounts to, folded from its event log: the dashboard's views and the run report.

Both read the same fold (`fold.RunState`), so a number on the screen and in a report come from
the same events; neither reads a team's internals.
"""
