"""itemscale's own backends, one module each: its loader and what is read without loading it,
and its `BACKENDS.declare(...)`. `BACKENDS` imports every module here when it is first read, so
a backend is added by one file here; each keeps torch, transformers and httpx out of its
imports (they come with the model, through `lazy` or inside the loader)."""

__all__: list[str] = []  # nothing to import from here: each module declares its backend
