"""Cell identities are pinned: a run folder written by an earlier itemscale resumes without
recomputing a single cell.

The ids below were computed by a sweep at commit 237dd1c, before the protocol and the backends
shared one `DecodingSettings` type (issue 27), so a refactor of how the decoding settings reach
the identity cannot change them unnoticed. A deliberate change of what a cell is
(`IDENTITY_VERSION`, `PROMPT_TEMPLATE_VERSION`, `EXTRACTOR_VERSION`, the item or configuration
fingerprints, the pixel test backend's spec) changes them too; then these golden values are
updated in the same commit, with the reason.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from _support.sweep import pixel_factory, write_benchmark, write_protocol
from itemscale.collect.protocol import Protocol, load_protocol
from itemscale.collect.sweep import run_sweep
from itemscale.core.files import read_json
from itemscale.core.responses import read_run

Cells = list[tuple[str, int, int, str]]


def _protocol(tmp_path: Path, decoding: str, extra: str = "") -> Protocol:
    suite = write_benchmark(tmp_path / "suite", 1, per_video=1)
    proto = write_protocol(tmp_path / "protocol.toml", suite, frames=(2, 4), extra=extra)
    proto.write_text(proto.read_text().replace("[decoding]\nmax_new_tokens = 8\n", decoding))
    return load_protocol(proto)


def _cells(run_dir: Path) -> Cells:
    df, _ = read_run(run_dir)
    return sorted(
        (str(r["item_id"]), int(r["frames"]), int(r["repeat"]), str(r["cell_id"]))
        for r in df.to_dict("records")
    )


@pytest.mark.parametrize(
    ("decoding", "extra", "expected"),
    [
        pytest.param(
            "",
            "",
            [
                ("v0-q0", 0, 0, "d801ae2c1be4ada953f2bdeb5d256f12"),
                ("v0-q0", 2, 0, "f2592f493aa4f41b7cbc4fe27b92a688"),
                ("v0-q0", 4, 0, "fd3b1c90323740eee3feed890b1ca991"),
            ],
            id="no-decoding-table",
        ),
        pytest.param(
            "[decoding]\nmax_new_tokens = 8\n",
            "",
            [
                ("v0-q0", 0, 0, "8b1ce92220240198ffbb9e5115282f3e"),
                ("v0-q0", 2, 0, "a26e6fd491edb1e9622abb88f4e75db7"),
                ("v0-q0", 4, 0, "3d436a796cbd2719670898e669357de7"),
            ],
            id="max-new-tokens",
        ),
        pytest.param(
            "[decoding]\nmax_new_tokens = 64\ntemperature = 0.7\ntop_p = 0.9\n",
            "repeats = 2\nseeds = [3, 11]",
            [
                ("v0-q0", 0, 0, "8bf3b61797198bf64e8625c035601b5d"),
                ("v0-q0", 0, 1, "c3ae5b5bcd52fc2903f9804ddb534cc9"),
                ("v0-q0", 2, 0, "b280fd5e7ff7b0d89f74a57fa9636845"),
                ("v0-q0", 2, 1, "a0ff80f96f2fa18c405694aa9f53ed71"),
                ("v0-q0", 4, 0, "9699f716e09cc452ebf276f390cc66a6"),
                ("v0-q0", 4, 1, "18f2c4bf577ea50161037e80fa1ba661"),
            ],
            id="sampled-two-seeds",
        ),
    ],
)
def test_cell_identities_of_existing_protocols_do_not_change(
    tmp_path: Path, decoding: str, extra: str, expected: Cells
) -> None:
    run_sweep(_protocol(tmp_path, decoding, extra), backend_factory=pixel_factory, progress=False)
    assert _cells(tmp_path / "run") == expected


def test_a_protocol_recorded_by_an_earlier_version_resumes_without_recomputing(
    tmp_path: Path,
) -> None:
    # `itemscale intervene` re-reads the protocol from run.json; before issue 27 run.json
    # recorded the protocol's decoding table as below (top_p null: no nucleus cut-off).
    protocol = _protocol(tmp_path, "")
    run_sweep(protocol, backend_factory=pixel_factory, progress=False)
    recorded: dict[str, Any] = read_json(tmp_path / "run" / "run.json")["protocol"]
    recorded["decoding"] = {"max_new_tokens": 64, "temperature": 0.0, "top_p": None}
    again = run_sweep(
        Protocol.model_validate(recorded), backend_factory=pixel_factory, progress=False
    )
    assert (again.planned, again.ran) == (3, 0)
