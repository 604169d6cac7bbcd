"""Where jobs run: the local pool and remote hosts."""
