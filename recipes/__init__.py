"""Recipes run from a checkout of itemscale, not installed with the package."""
