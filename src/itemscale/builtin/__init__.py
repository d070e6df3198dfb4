"""The built-in tiny Video LLM: how the demo model that ships in `itemscale/data/builtin` is
trained, scored and checked.

It is a package of its own, above `models`, `synth` and `video`, because making the model needs
all three (suite videos, the `hf` backend's prompts and processor inputs) while loading it does
not: the `builtin` backend is only the `hf` backend on the packaged folder and stays in
`itemscale.models`, so sweeping with the shipped model never imports this package. Torch and
transformers are imported only when a function here needs them.
"""

from ..models import builtin_model_dir as model_dir
from ..synth import SuiteError
from ._checkpoint import CHECKPOINT_DIR, StepRecord
from ._config import BUILTIN_FORMAT_VERSION, BuiltinArchitecture, TrainSettings
from ._eval import EvalBudget, evaluate_suite
from ._slice import SLICE_FILE, read_slice, run_slice, slice_accuracy, slice_suite, write_slice
from ._train import TrainResult, train_builtin

__all__ = [
    "BUILTIN_FORMAT_VERSION",
    "CHECKPOINT_DIR",
    "SLICE_FILE",
    "BuiltinArchitecture",
    "EvalBudget",
    "StepRecord",
    "SuiteError",
    "TrainResult",
    "TrainSettings",
    "evaluate_suite",
    "model_dir",
    "read_slice",
    "run_slice",
    "slice_accuracy",
    "slice_suite",
    "train_builtin",
    "write_slice",
]
