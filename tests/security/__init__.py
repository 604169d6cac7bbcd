"""Attacks from the security review (issue 11): each test reproduces one and checks the defence."""
