"""The write wing: everything that produces rows of the response table. The protocol and its
budget grid, benchmark loaders, sampling and decoding (video), the model backends, the sweep
and its resumable store, the importers of other tools' logs, and the synthetic suite.

It imports the core (`itemscale.core`) only, never the analysis wing.
"""
