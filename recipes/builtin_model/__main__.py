"""`python -m recipes.builtin_model --suite SUITE --out OUT ...` from the root of a checkout."""

from ._cli import main

raise SystemExit(main())
