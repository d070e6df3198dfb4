"""Every CLI command's output on the demo and on the shared fixtures, normalised, in one folder:
run it before and after a refactor and `diff -r` the two folders (the refactor changed nothing a
user sees when the diff is empty).

    python benchmarks/cli_snapshot.py OUT_DIR [--skip-demo]

What is normalised away, because it differs between two runs of the same code: the working
folder's path, ISO timestamps, durations (`*_s` numbers, "in 1.2 s"), host and process details,
and the SQLite store (its content is checked through the exported table). Parquet files are
written as CSV, JSON re-dumped with sorted keys, PNGs by content hash.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO.parent / "shared" / "fixtures"
VOLATILE_KEYS = {
    "times",
    "host",
    "hostname",
    "pid",
    "started_at",
    "finished_at",
    "generated_at",
    "git_commit",
    "bytes",  # of files that hold timestamps; the files themselves are compared
}
TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?(\+00:00|Z)?")
DURATION = re.compile(r'("[a-z_]*_s"\s*:\s*)[0-9.eE+-]+|\b\d+(\.\d+)?\s?(s|ms|min)\b')


def _clean_text(text: str, root: Path) -> str:
    text = text.replace(str(root), "<ROOT>")
    text = TIMESTAMP.sub("<TS>", text)
    text = DURATION.sub(lambda m: (m.group(1) or "") + "<T>", text)
    text = re.sub(r"\b[0-9a-f]{64}\b", "<SHA256>", text)  # hashes of files that hold times
    text = re.sub(r"commit [0-9a-f]{40}( \+ local edits)?", "commit <COMMIT>", text)
    return re.sub(r"\d+/\d+ \[[^\]]*\]", "<BAR>", text)


def _clean_json(value: object) -> object:
    if isinstance(value, dict):
        return {
            k: _clean_json(v)
            for k, v in value.items()
            if k not in VOLATILE_KEYS and not k.endswith("_s") and k != "python"
        }
    if isinstance(value, list):
        return [_clean_json(v) for v in value]
    return value


def _snapshot_file(path: Path, root: Path, out: Path) -> None:
    rel = path.relative_to(root)
    target = out / "files" / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".sqlite" or path.name.endswith((".sqlite-wal", ".sqlite-shm", ".lock")):
        return
    if path.suffix == ".parquet":
        import pandas as pd

        frame = pd.read_parquet(path)
        frame = frame.drop(columns=[c for c in frame.columns if c in ("latency_s",)])
        target.with_suffix(".csv").write_text(
            _clean_text(frame.to_csv(index=False), root), encoding="utf-8"
        )
    elif path.suffix == ".json":
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            target.write_text(_clean_text(path.read_text(errors="replace"), root))
            return
        text = json.dumps(_clean_json(data), indent=1, sort_keys=True, default=str)
        target.write_text(_clean_text(text, root), encoding="utf-8")
    elif path.suffix in (".png", ".mp4", ".xlsx", ".safetensors"):
        target.with_suffix(path.suffix + ".sha256").write_text(
            hashlib.sha256(path.read_bytes()).hexdigest() + "\n"
        )
    else:
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            target.write_text(hashlib.sha256(path.read_bytes()).hexdigest() + "\n")
            return
        target.write_text(_clean_text(text, root), encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--skip-demo", action="store_true", help="leave out `itemscale demo`")
    args = parser.parse_args()
    out: Path = args.out.resolve()
    shutil.rmtree(out, ignore_errors=True)
    (out / "console").mkdir(parents=True)
    root = Path(tempfile.mkdtemp(prefix="itemscale-snapshot-"))
    env = dict(os.environ, OMP_NUM_THREADS="1", HF_HUB_OFFLINE="1", COLUMNS="100")
    itemscale = [sys.executable, "-m", "itemscale"]
    bench = FIXTURES / "benchmarks" / "videomme-test.parquet"
    wide = sorted((FIXTURES / "scalegrid").glob("*_predictions_wide.csv"))
    suite_protocol = root / "p.toml"
    commands: list[tuple[str, list[str]]] = [
        ("synth", ["synth", "--out", "suite", "--n", "6", "--seed", "3", "--layout", "focus"]),
        (
            "import-lmms",
            [
                "import",
                "lmms-eval",
                "--config",
                f"u16={FIXTURES / 'lmms-eval' / 'videomme-uniform16'}",
                "--config",
                f"kf8:8={FIXTURES / 'lmms-eval' / 'videomme-dbfp8'}",
                "-o",
                "runs/lmms",
            ],
        ),
        ("import-lmms-bad", ["import", "lmms-eval", "nowhere", "-o", "runs/bad"]),
        *[
            (
                f"import-wide-{n}",
                [
                    "import",
                    "table",
                    "--wide",
                    "--id-column",
                    "sample_id",
                    "--model",
                    path.name.split("_V1")[0],
                    "--benchmark",
                    str(bench),
                    str(path),
                    "-o",
                    "runs/paper",
                ],
            )
            for n, path in enumerate(wide[:2])
        ],
        ("analyze-paper", ["analyze", "runs/paper", "--bootstrap", "100", "--json", "paper.json"]),
        ("analyze-by", ["analyze", "runs/paper", "--bootstrap", "50", "--by", "durration"]),
        ("analyze-lmms", ["analyze", "runs/lmms", "--bootstrap", "100"]),
        ("cascade-paper", ["cascade", "runs/paper", "--bootstrap", "50"]),
        ("report-paper", ["report", "runs/paper", "--bootstrap", "50"]),
        ("verify-paper", ["verify", "runs/paper/artifact"]),
        ("sweep-dry", ["sweep", str(suite_protocol), "--dry-run"]),
        ("sweep", ["sweep", str(suite_protocol), "--no-progress"]),
        ("sweep-again", ["sweep", str(suite_protocol), "--no-progress", "--json"]),
        ("analyze-swept", ["analyze", "runs/swept", "--bootstrap", "50"]),
        ("cascade-swept", ["cascade", "runs/swept", "--bootstrap", "50"]),
        ("audit-swept", ["audit", "runs/swept", "--sheets", "--export", "coders.csv"]),
        (
            "intervene-swept",
            [
                "intervene",
                "runs/swept",
                "--intervention",
                "nested",
                "--bootstrap",
                "50",
                "--no-progress",
            ],
        ),
        ("report-swept", ["report", "runs/swept", "--bootstrap", "50"]),
        ("verify-swept", ["verify", "runs/swept/artifact"]),
        (
            "frames",
            [
                "frames",
                "suite/videos/" + "VIDEO",
                "--frames",
                "2,4",
                "--policy",
                "linspace",
                "--out",
                "sheets",
            ],
        ),
        ("cascade-missing", ["cascade", "runs/none"]),
    ]
    if not args.skip_demo:
        commands.append(("demo", ["demo", "--out", "runs/demo"]))
    for name, words in commands:
        if name == "sweep-dry":
            suite_protocol.write_text(
                'output = "runs/swept"\n[[models]]\nname = "tiny"\nbackend = "builtin"\n'
                'model = "builtin"\ndtype = "float32"\n[benchmark]\nkind = "synthetic"\n'
                'path = "suite"\n[grid]\nframes = [2, 4, 8]\nmax_pixels = [12544, 3136]\n'
                'sampling = ["linspace"]\n',
                encoding="utf-8",
            )
        if name == "frames":
            video = sorted((root / "suite" / "videos").glob("*.mp4"))[0]
            words = [w.replace("suite/videos/VIDEO", str(video)) for w in words]
        done = subprocess.run(
            [*itemscale, *words], cwd=root, env=env, capture_output=True, text=True, timeout=1800
        )
        text = f"$ itemscale {' '.join(words)}\nexit {done.returncode}\n--- stdout\n"
        text += done.stdout + "--- stderr\n" + done.stderr
        (out / "console" / f"{name}.txt").write_text(_clean_text(text, root), encoding="utf-8")
        print(f"{name}: exit {done.returncode}", flush=True)
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        _snapshot_file(path, root, out)
    shutil.rmtree(root, ignore_errors=True)
    print(f"snapshot in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
