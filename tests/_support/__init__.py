"""Helpers shared by the tests, not tests themselves: repository paths, the sweep's pixel
backend and test videos, tiny model checkpoints, a scripted OpenAI-compatible server, hand-made
runs and response tables. `pythonpath = ["tests"]` in pyproject.toml makes this package
importable as `_support` from every test folder, from sweep subprocesses and from Ray workers."""
