"""The `justkernel` command line."""
