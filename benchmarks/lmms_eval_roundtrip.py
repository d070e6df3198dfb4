"""Round trip through the real lmms-eval: run two local tasks in one lmms-eval command at two
frame budgets, import both runs with one `itemscale import lmms-eval`, and compare every item
and every score with what lmms-eval itself logged.

lmms-eval is too large for CI (0.7.3 with the local torch: 6.9 GB, 7 minutes to install here),
so this is a script run by hand in a separate virtual environment (lmms-eval 0.7.3 imports
`filelock._api`, which filelock 4 no longer has; hence the pin):

    python3.11 -m venv /tmp/lmms
    /tmp/lmms/bin/pip install "lmms-eval==0.7.3" "torch==2.14.1" "torchvision==0.29.1" "filelock<3.20"
    .venv/bin/python benchmarks/lmms_eval_roundtrip.py --lmms-python /tmp/lmms/bin/python

No weights and no hub: lmms-eval's own weight-free `dummy` model answers every question with a
fixed letter (`response=`; a different letter at each budget, so items flip between budgets),
the tasks read a local JSON Lines file with Video-MME-shaped rows, and `max_num_frames` in
`model_args` is the budget itemscale reads back. The last line is one JSON object with the
figures; docs/importers.md records what it showed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TASKS = ("itemscale_rt_a", "itemscale_rt_b")
#: (frames, the dummy model's fixed answer)
BUDGETS = ((8, "A"), (16, "C"))
N_ITEMS = 24

TASK_YAML = """task: {task}
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data}
test_split: test
output_type: generate_until
doc_to_visual: !function utils.doc_to_visual
doc_to_text: !function utils.doc_to_text
doc_to_target: answer
generation_kwargs:
  max_new_tokens: 8
  temperature: 0
  do_sample: false
process_results: !function utils.process_results
metric_list:
  - metric: rt_perception_score
    aggregation: !function utils.aggregate
    higher_is_better: true
metadata:
  - version: 0.0
"""

# The task's functions, in the Video-MME task's shape: the payload carries question_id, videoID,
# duration, the gold answer and lmms-eval's own parsed prediction; the score is in points.
TASK_UTILS = """
import re

def doc_to_visual(doc):
    return []

def doc_to_text(doc, lmms_eval_specific_kwargs=None):
    options = "\\n".join(doc["options"])
    return f"{doc['question']}\\n{options}\\nAnswer with the option's letter from the given choices directly."

def process_results(doc, results):
    m = re.search(r"[ABCD]", results[0])
    pred = m.group(0) if m else ""
    return {"rt_perception_score": {"question_id": doc["question_id"], "videoID": doc["videoID"],
            "duration": doc["duration"], "answer": doc["answer"], "pred_answer": pred}}

def aggregate(results):
    return 100.0 * sum(r["pred_answer"] == r["answer"] for r in results) / len(results)
"""


def write_workspace(root: Path) -> Path:
    tasks = root / "tasks" / "itemscale_rt"
    tasks.mkdir(parents=True)
    for t, task in enumerate(TASKS):
        data = root / f"{task}.jsonl"
        with data.open("w", encoding="utf-8") as fh:
            for i in range(N_ITEMS):
                fh.write(
                    json.dumps(
                        {
                            "question_id": f"{t}{i // 3:02d}-{i % 3 + 1}",
                            "videoID": f"v{t}{i // 3:02d}",
                            "duration": "short",
                            "question": f"Which option is right for question {i}?",
                            "options": [f"{c}. option {c}" for c in "ABCD"],
                            # skewed per task, so the budgets' fixed answers score differently
                            "answer": "AACD"[(i + t) % 4],
                        }
                    )
                    + "\n"
                )
        (tasks / f"{task}.yaml").write_text(TASK_YAML.format(task=task, data=data))
    (tasks / "utils.py").write_text(TASK_UTILS)
    return tasks


def run_lmms_eval(python: str, tasks: Path, out: Path, frames: int, response: str) -> float:
    env = {**os.environ, "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1"}
    argv = [
        python,
        "-m",
        "lmms_eval",
        "--model",
        "dummy",
        "--model_args",
        f"response={response},max_num_frames={frames}",
        "--tasks",
        ",".join(TASKS),
        "--include_path",
        str(tasks),
        "--batch_size",
        "1",
        "--log_samples",
        "--output_path",
        str(out),
    ]
    t = time.perf_counter()
    subprocess.run(argv, env=env, check=True, capture_output=True, text=True)
    return time.perf_counter() - t


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lmms-python", required=True, help="python of a venv with lmms-eval")
    args = parser.parse_args()
    version = subprocess.run(
        [args.lmms_python, "-c", "import importlib.metadata as m; print(m.version('lmms-eval'))"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()

    from itemscale.cli import main as itemscale
    from itemscale.core.responses import read_run

    root = Path(tempfile.mkdtemp(prefix="lmms-rt-"))
    tasks = write_workspace(root)
    folders, seconds = [], []
    for frames, response in BUDGETS:
        out = root / f"logs{frames}"
        seconds.append(run_lmms_eval(args.lmms_python, tasks, out, frames, response))
        folders.append(out)
    run = root / "run"
    code = itemscale(["import", "lmms-eval", *map(str, folders), "-o", str(run)])
    if code != 0:
        print(f"itemscale import failed with {code}", file=sys.stderr)
        return 1
    df, _ = read_run(run)
    compared = agree = 0
    scores = []
    for results_path in sorted(root.glob("logs*/**/*_results.json")):
        results = json.loads(results_path.read_text())
        frames = int(results["config"]["model_args"].split("max_num_frames=")[1].split(",")[0])
        for task in TASKS:
            theirs = float(results["results"][task]["rt_perception_score,none"])
            samples = next(results_path.parent.glob(f"*_samples_{task}.jsonl"))
            rows = df[(df["frames"] == frames) & df["source"].str.contains(samples.name)]
            ours = 100.0 * float(rows["correct"].mean())
            scores.append({"task": task, "frames": frames, "lmms_eval": theirs, "itemscale": ours})
            for line in samples.read_text().splitlines():
                sample = json.loads(line)
                payload = sample["rt_perception_score"]
                row = rows[rows["item_id"] == payload["question_id"]]
                compared += 1
                agree += int(
                    len(row) == 1
                    and float(row["correct"].iloc[0])
                    == float(payload["pred_answer"] == payload["answer"])
                )
    same = all(abs(s["lmms_eval"] - s["itemscale"]) < 1e-9 for s in scores)
    for s in scores:
        print(
            f"{s['task']} at {s['frames']}f: lmms-eval {s['lmms_eval']:.2f}, "
            f"itemscale {s['itemscale']:.2f}"
        )
    print(f"items: {agree} of {compared} the same; scores the same: {same}")
    figures = {
        "lmms_eval_version": version,
        "tasks_per_run": len(TASKS),
        "runs": len(BUDGETS),
        "items_compared": compared,
        "items_same": agree,
        "scores_same": same,
        "lmms_eval_seconds": [round(s, 1) for s in seconds],
    }
    print(json.dumps(figures))
    return 0 if same and agree == compared else 1


if __name__ == "__main__":
    raise SystemExit(main())
