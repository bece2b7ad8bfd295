"""Utilities every layer of gto may use: input checks, Ctrl-C handling, progress bars and
the library's logger, atomic file writes, and the status vocabulary of every search."""
