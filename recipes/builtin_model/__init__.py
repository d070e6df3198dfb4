"""The built-in tiny Video LLM's training recipe: how the demo model that ships in
`itemscale/data/builtin` is trained, scored and checked (docs/builtin-model.md).

It lives beside the package, not in it: a user runs only the shipped weights, which the
`builtin` backend of `itemscale.collect.models` loads (the `hf` backend on the packaged folder),
so `itemscale` never imports this folder. Run it from the root of a checkout with a full install
(`python -m recipes.builtin_model --help`). Torch and transformers are imported only when a
function here needs them.
"""

from ._checkpoint import StepRecord
from ._cli import main
from ._config import BuiltinArchitecture, TrainSettings
from ._train import TrainResult, train_builtin

__all__ = [
    "BuiltinArchitecture",
    "StepRecord",
    "TrainResult",
    "TrainSettings",
    "main",
    "train_builtin",
]
