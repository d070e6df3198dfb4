"""The package version: a leaf module, so no part of the package imports the package root
for it."""

__version__ = "0.1.0"
