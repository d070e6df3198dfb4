"""itemscale: item-level audits of how Video LLMs behave as their visual budget changes."""

__version__ = "0.1.0"
