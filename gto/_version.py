"""The version of gto, in one place (the package metadata reads it too)."""
__version__ = "0.1.0"
