"""The analysis wing: everything that only reads rows of the response table. The measures
(matched grid, flips, oracle, tests, the video bootstrap), the comparison of two sides item by
item, the policies (cascades, sampling interventions) and the frame audit.

It imports the core (`itemscale.core`) only: it never imports the write wing, torch or a
decoder, so it runs on the light install.
"""
