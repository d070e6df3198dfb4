"""The contract every stage shares: the response table (its schema, IO, answer extractor and
scoring), the configuration a budget is, item records, one error family, file handling that
keeps runs safe, the plugin registries, and the contact-sheet drawing both wings use.

Nothing here imports the write wing (`itemscale.collect`), the analysis wing
(`itemscale.analysis`) or the presentation (`itemscale.report`): both wings meet here.
"""
