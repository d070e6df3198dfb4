"""What checking each imported row as a pydantic model would cost, against the column-wise check
the importers use (`normalise_responses` on the whole table, against `RESPONSE_COLUMNS`).

    .venv/bin/python benchmarks/row_validation.py --rows 200000

Builds a frozen pydantic model with one field per response column (the definition's kinds and
nullability), validates `--rows` typical imported rows one by one, then checks the same rows as
one table column by column; prints both times, per row and extrapolated to 2 x 10^6 rows.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import pandas as pd
from pydantic import BaseModel, ConfigDict, create_model

from itemscale.core.responses import RESPONSE_COLUMNS, normalise_responses

PYTHON = {
    "text": str,
    "real": float,
    "integer": int,
    "integer_list": list[int],
    "real_list": list[float],
}


def row_model() -> type[BaseModel]:
    """A pydantic model of one response row, derived from the definition."""
    fields: dict[str, Any] = {
        c.name: (PYTHON[c.kind], ...) if c.required else (PYTHON[c.kind] | None, None)
        for c in RESPONSE_COLUMNS
    }
    config = ConfigDict(extra="forbid", frozen=True)
    return create_model("ResponseRow", __config__=config, **fields)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    n = parser.parse_args().rows
    rows = [
        {
            "model": "m",
            "item_id": f"q{i}",
            "video_id": f"v{i // 4}",
            "task_kind": "mcqa",
            "series": "default",
            "config_id": "c8",
            "config_label": "8f",
            "axis_order": 8.0,
            "frames": 8,
            "repeat": 0,
            "status": "ok",
            "answer": "A",
            "correct": float(i % 2),
            "source": f"table:x.csv:{i + 2}",
        }
        for i in range(n)
    ]
    model = row_model()
    t = time.perf_counter()
    for row in rows:
        model.model_validate(row)
    per_row = time.perf_counter() - t
    t = time.perf_counter()
    normalise_responses(pd.DataFrame(rows), where="bench")
    columns = time.perf_counter() - t
    for name, seconds in (("pydantic, row by row", per_row), ("column-wise", columns)):
        print(
            f"{name}: {seconds:.2f} s for {n} rows ({1e6 * seconds / n:.2f} us/row; "
            f"{2e6 * seconds / n:.1f} s for 2 x 10^6 rows)"
        )


if __name__ == "__main__":
    main()
