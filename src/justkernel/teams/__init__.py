"""Teams: their git workspaces and their registry."""
