"""The built-in tiny Video LLM: how the demo model that ships in `itemscale/data/builtin` is
trained, scored and checked.

It is a package of its own, above `models`, `synth` and `video`, because making the model needs
all three (suite videos, the `hf` backend's prompts and processor inputs) while loading it does
not: the `builtin` backend is only the `hf` backend on the packaged folder and stays in
`itemscale.collect.models`, so sweeping with the shipped model never imports this package. Torch and
transformers are imported only when a function here needs them.
"""

from ._checkpoint import StepRecord
from ._config import BuiltinArchitecture, TrainSettings
from ._train import TrainResult, train_builtin

__all__ = ["BuiltinArchitecture", "StepRecord", "TrainResult", "TrainSettings", "train_builtin"]
