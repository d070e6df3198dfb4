"""The software stack behind a sweep session: what computed its answers.

The same weights answer differently under another transformers release (the built-in model's
accuracy at 32f@56 moves by 5 points between 5.24.0 and 5.17.0), so each session records its
stack in run.json's `sessions[]`: Python and the platform, torch with CUDA, cuDNN and the GPU,
the libraries as imported (a source checkout first on `PYTHONPATH` is what runs), the decoder,
itemscale and the numerics flags. `compare` diffs them and `analyze` warns when a series mixes
stacks (docs/compare.md, "The software stack").

`ITEMSCALE_TEST_STACK` (JSON, package -> version) replaces the probed versions, for tests only (a
second transformers cannot be installed beside the first); the session records `"overridden"`, so
such a run never passes for a real one.
"""

from __future__ import annotations

import json
import os
import platform
import sys
from collections.abc import Mapping
from importlib import metadata
from typing import Any, NotRequired, TypedDict
from typing import Protocol as TypingProtocol

from pydantic import BaseModel, ConfigDict

from ...core.errors import ItemscaleError
from ...core.responses import STACK_PACKAGES, stack_changes, stack_disagreements
from ...core.version import __version__
from ..models import ModuleRecord, imported_package
from ..protocol import Protocol
from ._provenance import command_output, decoder_info, git_commit

#: the test-only override (module docstring)
STACK_OVERRIDE_ENV = "ITEMSCALE_TEST_STACK"


class GpuInfo(TypedDict):
    name: str
    count: int
    driver: str | None
    capability: str


class NumericsInfo(TypedDict):
    """torch's flags that change a float result (None: torch not loaded)."""

    tf32_matmul: bool | None
    tf32_cudnn: bool | None
    matmul_precision: str | None
    deterministic_algorithms: bool | None
    cudnn_benchmark: bool | None


class StackInfo(TypedDict):
    """run.json `sessions[].stack`."""

    python: str
    platform: str
    machine: str
    itemscale: dict[str, str | None]
    #: distribution name -> the version that ran (None: not installed): the installed
    #: metadata's, or the imported module's `__version__` when that is another (a checkout)
    packages: dict[str, str | None]
    #: distribution name -> the module as imported (`itemscale.collect.models.imported_package`)
    modules: dict[str, ModuleRecord]
    ffmpeg: dict[str, str]
    #: torch's CUDA and cuDNN builds (None on a CPU build or without torch)
    cuda: str | None
    cudnn: str | None
    #: the GPU the session ran on (None: no GPU used)
    gpu: GpuInfo | None
    numerics: NumericsInfo
    #: the packages `ITEMSCALE_TEST_STACK` replaced (tests only)
    overridden: NotRequired[list[str]]


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def _driver() -> str | None:
    out = command_output(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"])
    first = (out or "").splitlines()
    return first[0].strip() if first else None


def _torch_part(device: str) -> tuple[str | None, str | None, GpuInfo | None, NumericsInfo]:
    """torch's CUDA/cuDNN builds, the GPU `device` names and the numerics flags (None without
    torch)."""
    none: NumericsInfo = {
        "tf32_matmul": None,
        "tf32_cudnn": None,
        "matmul_precision": None,
        "deterministic_algorithms": None,
        "cudnn_benchmark": None,
    }
    if _version("torch") is None:
        return None, None, None, none
    import torch

    available = torch.backends.cudnn.is_available()  # type: ignore[no-untyped-call]
    cudnn = torch.backends.cudnn.version() if available else None  # type: ignore[no-untyped-call]
    numerics: NumericsInfo = {
        "tf32_matmul": bool(torch.backends.cuda.matmul.allow_tf32),
        "tf32_cudnn": bool(torch.backends.cudnn.allow_tf32),
        "matmul_precision": str(torch.get_float32_matmul_precision()),
        "deterministic_algorithms": bool(torch.are_deterministic_algorithms_enabled()),
        "cudnn_benchmark": bool(torch.backends.cudnn.benchmark),
    }
    gpu: GpuInfo | None = None
    if device.startswith("cuda") and torch.cuda.is_available():
        index = torch.cuda.current_device() if ":" not in device else int(device.split(":")[1])
        major, minor = torch.cuda.get_device_capability(index)
        gpu = {
            "name": torch.cuda.get_device_name(index),
            "count": torch.cuda.device_count(),
            "driver": _driver(),
            "capability": f"{major}.{minor}",
        }
    cuda = getattr(torch.version, "cuda", None)
    return cuda, None if cudnn is None else str(cudnn), gpu, numerics


def _override() -> dict[str, str | None]:
    raw = os.environ.get(STACK_OVERRIDE_ENV)
    if not raw:
        return {}
    try:
        parsed = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{STACK_OVERRIDE_ENV}: not a JSON object ({exc})") from exc
    if not isinstance(parsed, dict) or not all(isinstance(v, str | None) for v in parsed.values()):
        raise ValueError(f"{STACK_OVERRIDE_ENV}: expected a JSON object of name -> version")
    return {str(k): v for k, v in parsed.items()}


def software_stack(device: str = "cpu", *, local: bool = True) -> StackInfo:
    """The stack of this process on `device`; with `local` False (served models only), the client
    side alone: no torch, no GPU."""
    if local:
        cuda, cudnn, gpu, numerics = _torch_part(device)
    else:
        cuda, cudnn, gpu, numerics = _torch_part("cpu")
        cuda, cudnn = None, None
    decoder = decoder_info()
    probed = {name: imported_package(name) for name in STACK_PACKAGES}
    packages = {name: p.running_version for name, p in probed.items()}
    override = _override()
    packages.update(override)
    stack: StackInfo = {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "machine": platform.machine(),
        "itemscale": {"version": __version__, "git_commit": git_commit()},
        "packages": packages,
        "modules": {name: p.record() for name, p in probed.items()},
        "ffmpeg": dict(decoder.get("ffmpeg", {})),
        "cuda": cuda,
        "cudnn": cudnn,
        "gpu": gpu,
        "numerics": numerics,
    }
    if override:
        stack["overridden"] = sorted(override)
    return stack


def stack_notice(
    sessions: list[dict[str, object]],
    stack: Mapping[str, Any],
    *,
    cells_by_session: Mapping[int, int],
) -> list[str]:
    """What a sweep says before it runs: each library imported from elsewhere than its installed
    distribution, and how its stack differs from those of the sessions that computed the stored
    cells (session id -> cells; one that computed nothing is no comparison), sessions of one
    stack named together."""
    lines = stack_disagreements(stack)
    owners = {
        _id(s): s["stack"]
        for s in sessions
        if isinstance(s.get("stack"), Mapping) and cells_by_session.get(_id(s), 0) > 0
    }
    by_changes: dict[tuple[str, ...], list[int]] = {}
    for session_id, before in sorted(owners.items()):
        assert isinstance(before, Mapping)
        changes = tuple(stack_changes(before, stack))
        if changes:
            by_changes.setdefault(changes, []).append(session_id)
    for changes, ids in by_changes.items():
        named = ", ".join(f"{i} ({cells_by_session[i]} cells)" for i in ids)
        lines.append(
            f"this session's software stack differs from that of session{'s' if len(ids) > 1 else ''} "
            f"{named}, which computed stored cells of this run: {'; '.join(changes)}; answers "
            "may differ for that reason alone (compare the two with `itemscale compare`)"
        )
    return lines


def _id(session: Mapping[str, object]) -> int:
    value = session.get("session_id")
    return int(value) if isinstance(value, int | str) and str(value).isdigit() else -1


def model_as_loaded(backend: object, spec: Any) -> dict[str, object]:
    """A local model as loaded (run.json `sessions[].models_loaded[MODEL]`): spec id, weights'
    dtype, attention implementation, layer placement; a backend without a transformers model
    records its spec id only."""
    out: dict[str, object] = {"spec_id": getattr(spec, "spec_id", None)}
    model = getattr(backend, "_model", None)
    if model is None:
        return out
    config = getattr(model, "config", None)
    device_map = getattr(model, "hf_device_map", None)
    out.update(
        {
            "dtype": _text(getattr(model, "dtype", None)),
            "attn_implementation": _text(getattr(config, "_attn_implementation", None)),
            "device_map": (
                {str(k): str(v) for k, v in device_map.items()}
                if isinstance(device_map, Mapping)
                else _text(getattr(model, "device", None))
            ),
        }
    )
    return out


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


class Numerics(BaseModel):
    """How a local model's floating point is set up for a sweep (`sweep --deterministic`).

    Deterministic: torch's deterministic algorithms (raising rather than running a
    non-deterministic kernel), TF32 off, float32 matmul precision `highest`, cuDNN's autotuner
    off, and batch size 1, so a cell's answer never depends on which cells shared its batch.
    Recorded in run.json (`sweep.deterministic`) and in each session's stack.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    deterministic: bool = False

    def check_batch_size(self, batch_size: int | str) -> None:
        """Refuse several requests per batch under `deterministic` (answers would depend on the
        batch: padding, kernels), and `auto` (its batches depend on the free memory)."""
        if self.deterministic and batch_size == "auto":
            raise ValueError(
                "deterministic mode refuses batch_size 'auto': batches sized by free memory "
                "are not grouped the same way on every run; drop --batch-size (or give 1)"
            )
        if self.deterministic and batch_size != 1:
            raise ValueError(
                f"deterministic mode runs one request per model call, got batch_size "
                f"{batch_size}: drop --batch-size (or give 1)"
            )

    def apply(self) -> None:
        """Set torch's flags for this process (nothing when not deterministic, or without torch)."""
        if not self.deterministic or _version("torch") is None:
            return
        # cuBLAS needs a fixed workspace for deterministic results (CUDA >= 10.2); set before
        # the first CUDA call
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        import torch

        torch.use_deterministic_algorithms(True)
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cudnn.benchmark = False
        torch.backends.cudnn.deterministic = True
        torch.set_float32_matmul_precision("highest")


def _runs_local(protocol: Protocol) -> bool:
    """Whether a model runs in this process (then torch and the GPU are part of the stack)."""
    from ..models import FrameTransport, transport_of

    for entry in protocol.models:
        try:
            if transport_of(entry) == FrameTransport.IN_PROCESS:
                return True
        except (ItemscaleError, ValueError, TypeError):
            return True  # not known: record everything
    return False


class SessionStore(TypingProtocol):
    """What `start_session` needs of the run store (`itemscale.collect.store.RunStore`)."""

    def sessions(self) -> list[dict[str, object]]: ...

    def cells_by_session(self) -> dict[int, int]: ...

    def start_session(self, info: Mapping[str, Any]) -> int: ...


def start_session(
    store: SessionStore,
    protocol: Protocol,
    warnings: list[str],
    numerics: Numerics,
    settings: Mapping[str, object],
) -> int:
    """Set the numerics flags (before the stack is probed and any model loads), probe the stack
    on `device`, say where it differs (also into `warnings`), and start the store's session with
    the stack and `settings`."""
    numerics.apply()
    stack = software_stack(str(settings.get("device", "cpu")), local=_runs_local(protocol))
    notice = stack_notice(store.sessions(), stack, cells_by_session=store.cells_by_session())
    for line in notice:
        print(f"itemscale sweep: {line}", file=sys.stderr)
        warnings.append(line)
    return store.start_session({"stack": stack, **settings})
