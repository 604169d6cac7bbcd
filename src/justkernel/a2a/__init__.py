"""Collaboration between teams: the lab board (messages, public candidates, experience,
official feedback) with persistent, acknowledged, deduplicated delivery, and its A2A endpoint."""
