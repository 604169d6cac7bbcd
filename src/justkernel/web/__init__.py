"""Starlette app: JSON API, SSE event stream, static dashboard, authentication."""
