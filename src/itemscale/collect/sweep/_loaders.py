"""Items for a sweep, with their video files found: an absolute `video_path`, or None when the
file is missing (its cells are then `media_error: missing_file`, so one missing video never costs
a whole run)."""

from __future__ import annotations

from pathlib import Path

from ...core.files import InputFileError, read_input_text
from ..items import (
    BENCHMARK_LOADERS,
    ITEMS_FILE,
    BenchmarkFileError,
    Item,
    ItemFileError,
    read_items_jsonl,
)
from ..protocol import BenchmarkEntry

#: Extensions tried, in order, when a video file is named by its video id.
VIDEO_EXTENSIONS: tuple[str, ...] = (".mp4", ".mkv", ".webm", ".avi", ".mov", ".m4v")

#: One error class for a benchmark that cannot be read, whoever found the fault.
BenchmarkLoadError = BenchmarkFileError


def find_video(videos_dir: Path, video_id: str) -> Path | None:
    """The id itself if it has an extension, else the id plus one of `VIDEO_EXTENSIONS`."""
    direct = videos_dir / video_id
    if direct.suffix and direct.is_file():
        return direct
    for ext in VIDEO_EXTENSIONS:
        candidate = videos_dir / f"{video_id}{ext}"
        if candidate.is_file():
            return candidate
    return None


def _with_video(item: Item, base: Path, videos_dir: Path | None) -> Item:
    path: Path | None = None
    if item.video_path:
        given = Path(item.video_path).expanduser()
        path = given if given.is_absolute() else base / given
    elif videos_dir is not None:
        path = find_video(videos_dir, item.video_id) or videos_dir / f"{item.video_id}.mp4"
    return item.model_copy(update={"video_path": str(path.resolve()) if path else None})


def _published_video(item: Item, videos_dir: Path) -> Item:
    """The loader's own file name when it exists (MLVU, LongVideoBench), else the id's."""
    given = Path(item.video_path) if item.video_path else None
    if given is not None and given.is_file():
        path = given
    else:
        path = find_video(videos_dir, item.video_id) or given or videos_dir / item.video_id
    return item.model_copy(update={"video_path": str(path.resolve())})


def _read_jsonl(path: Path) -> list[Item]:
    try:
        return read_items_jsonl(path)
    except ItemFileError as exc:
        raise BenchmarkFileError(str(exc)) from exc


def load_benchmark_items(entry: BenchmarkEntry) -> list[Item]:
    """The items of `entry`, split- and limit-filtered, with absolute video paths: `jsonl` (paths
    relative to the file, else by id in `videos`), `synthetic` (an `itemscale synth` folder), or
    a benchmark question file read by its `BENCHMARK_LOADERS` entry (videos by id in `videos`)."""
    if entry.path is None:
        raise BenchmarkFileError(
            f"benchmark kind {entry.kind!r} needs a path (for synthetic: a folder written by "
            "`itemscale synth`)"
        )
    path = Path(entry.path).expanduser()
    videos_dir = Path(entry.videos).expanduser() if entry.videos else None
    if entry.kind == "synthetic":
        suite = path
        items_file = suite / ITEMS_FILE
        if not suite.exists():
            raise BenchmarkFileError(
                f"{suite}: no such folder (benchmark kind 'synthetic' reads a suite folder "
                "written by `itemscale synth --out FOLDER`)"
            )
        if not items_file.is_file():
            raise BenchmarkFileError(f"{suite}: not a synthetic suite (no {ITEMS_FILE})")
        items = [
            _with_video(i, suite, videos_dir or suite / "videos") for i in _read_jsonl(items_file)
        ]
    elif entry.kind == "jsonl":
        if not path.is_file():
            raise BenchmarkFileError(f"{path}: item file not found")
        items = [_with_video(i, path.parent, videos_dir) for i in _read_jsonl(path)]
    else:
        if not path.is_file():
            raise BenchmarkFileError(f"{path}: {entry.kind} question file not found")
        if videos_dir is None:
            raise BenchmarkFileError(
                f"benchmark kind {entry.kind!r} needs `videos` (the folder of video files)"
            )
        loader = BENCHMARK_LOADERS.get(entry.kind)
        if loader is None:
            raise BenchmarkFileError(
                f"benchmark kind {entry.kind!r}: this itemscale has no loader for it "
                "(expected an entry in itemscale.collect.items.BENCHMARK_LOADERS)"
            )
        try:
            loaded = list(loader(path, video_dir=videos_dir))
        except BenchmarkFileError:
            raise  # names file, row and column already
        except ValueError as exc:
            raise BenchmarkFileError(str(exc)) from exc
        items = [_published_video(i, videos_dir) for i in loaded]
    if entry.split is not None:
        items = _in_split(items, entry.split, where=entry.path)
    if entry.items is not None:
        items = _in_item_list(items, Path(entry.items).expanduser())
    if entry.limit is not None:
        items = items[: entry.limit]
    return items


def _in_item_list(items: list[Item], path: Path) -> list[Item]:
    """The items a `[benchmark] items` list names, in benchmark order; an unknown id is refused
    naming its line (a typo must not shrink a sweep)."""
    try:
        lines = read_input_text(path, what="an item list").splitlines()
    except InputFileError as exc:
        raise BenchmarkFileError(f"{path}: item list ([benchmark] items): {exc.reason}") from None
    wanted: dict[str, int] = {}
    for number, raw in enumerate(lines, start=1):
        line = raw.strip()
        if line and not line.startswith("#"):
            wanted.setdefault(line, number)
    if not wanted:
        raise BenchmarkFileError(f"{path}: item list ([benchmark] items) names no item")
    known = {i.item_id for i in items}
    unknown = [(n, i) for i, n in wanted.items() if i not in known]
    if unknown:
        number, item = unknown[0]
        raise BenchmarkFileError(
            f"{path}: line {number}: item {item!r} is not in the benchmark "
            f"({len(unknown)} unknown of {len(wanted)})"
        )
    return [i for i in items if i.item_id in wanted]


def _in_split(items: list[Item], split: str, *, where: str | Path) -> list[Item]:
    """The items of `split`; none is an error naming the splits there are (not an empty run)."""
    kept = [i for i in items if i.split == split or i.attributes.get("split") == split]
    if kept or not items:
        return kept
    found = sorted(
        {str(s) for i in items for s in (i.split, i.attributes.get("split")) if s is not None}
    )
    there = ", ".join(repr(s) for s in found[:20]) if found else "none (no item names a split)"
    raise BenchmarkFileError(
        f"{where}: benchmark.split = {split!r} matches none of its {len(items)} item(s); the "
        f"splits there are: {there}"
    )
