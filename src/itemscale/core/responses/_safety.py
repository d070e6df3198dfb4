"""Nothing lost, ever: the run folder's lock, output folders, and secrets (docs/run-folders.md).

1. **Every writer of a run folder holds its lock** (`run_lock`) for its read-modify-write, so two
writers wait for each other instead of the later silently dropping the earlier one's rows. A
sweep holds it for its whole run and does not wait (a second sweep would pay for every cell
twice). 2. **A command never replaces a folder it did not create** unless told to (`--force`),
and never the run folder or a folder that holds it; an itemscale artifact says so in its
`MANIFEST.json`. 3. **Secrets are never stored**: every string that reaches a file goes through
`redact`.
"""

from __future__ import annotations

import base64
import errno
import os
import re
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final

from ..errors import ItemscaleError, ReadOnlyFolderError
from ..files import is_read_only, no_space_is_typed, read_json

LOCK_FILE: Final[str] = "run.lock"
#: How long a short writer (import, cascade, audit, report) waits for the lock by default.
DEFAULT_WAIT_S: Final[float] = 120.0


class RunLockedError(ItemscaleError, RuntimeError):
    """The run folder's lock is held by another process (named with its pid and command)."""

    def __init__(self, message: str, holder: str = "unknown") -> None:
        super().__init__(message)
        self.holder = holder


class OutputFolderError(ItemscaleError, ValueError):
    """An output folder the command may not write or replace (names the folder and why)."""


def _refuse_virtual(path: Path) -> None:
    """`/proc`, `/sys` and `/dev` (but `/dev/shm`) hold the kernel's views, not files: a run or
    an artifact there is refused by name, not with "[Errno 2]" from the first file written."""
    parts = path.resolve().parts
    if len(parts) > 1 and (
        parts[1] in ("proc", "sys") or (parts[1] == "dev" and parts[2:3] != ("shm",))
    ):
        raise OutputFolderError(
            f"{path}: under /{parts[1]}, which holds the system's own views and no ordinary "
            "files; choose a folder on a disk (e.g. runs/NAME)"
        )


def _ensure_dir(path: Path) -> None:
    _refuse_virtual(path)
    try:
        with no_space_is_typed(path.parent):
            path.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError) as exc:
        raise OutputFolderError(
            f"{path}: cannot create the folder (a file is in the way: {exc.filename})"
        ) from exc
    except OSError as exc:
        if not is_read_only(exc):
            raise
        why = "a read-only file system" if exc.errno == errno.EROFS else "permission denied"
        raise ReadOnlyFolderError(f"{path}: cannot create the folder ({why})") from exc
    if not path.is_dir():
        raise OutputFolderError(f"{path}: exists and is not a folder")


def _default_wait() -> float:
    try:
        return float(os.environ.get("ITEMSCALE_LOCK_WAIT_S", DEFAULT_WAIT_S))
    except ValueError:
        return DEFAULT_WAIT_S


def _open_lock_file(folder: Path, *, needed: bool) -> int | None:
    """A folder that cannot be written is a `ReadOnlyFolderError` when the command writes the run
    (`needed`), else None (the folder's own lock holds)."""
    try:
        with no_space_is_typed(folder, LOCK_FILE):
            return os.open(folder / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
    except ReadOnlyFolderError:
        if needed:
            raise
        return None


def _flock_until(fd: int, deadline: float, locked_out: Callable[[], RunLockedError]) -> None:
    import fcntl

    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise locked_out() from None
            time.sleep(0.05)


def _same_file(fd: int, path: Path) -> bool:
    """The locked descriptor is still the file at `path` (not deleted or replaced meanwhile)."""
    try:
        here, there = os.fstat(fd), os.stat(path)
    except OSError:
        return False
    return (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino)


@contextmanager
def run_lock(
    run_dir: str | os.PathLike[str],
    *,
    wait_s: float | None = None,
    what: str = "write",
    writes_run: bool = True,
) -> Iterator[None]:
    """Hold the run folder's lock: an advisory `flock` on the folder and on `RUN_DIR/run.lock`
    (which names the holder), dropped by the kernel if the process dies. Deleting `run.lock`
    cannot lose it: the folder's lock stays held, and a replaced `run.lock` is locked again.
    Waits up to `wait_s` (default `$ITEMSCALE_LOCK_WAIT_S`, else 120), then raises
    `RunLockedError` naming the holder. Creates the folder; one that cannot be written is a
    `ReadOnlyFolderError` when `writes_run`."""
    if wait_s is None:
        wait_s = _default_wait()
    try:
        import fcntl  # noqa: F401  (POSIX only: without it, no lock)
    except ImportError:  # pragma: no cover - not POSIX: no lock (documented)
        yield
        return
    folder = Path(run_dir)
    _ensure_dir(folder)
    deadline = time.monotonic() + max(0.0, wait_s)

    def locked_out() -> RunLockedError:
        try:
            holder = (folder / LOCK_FILE).read_text(errors="replace")[:200].strip()
        except OSError:
            holder = ""
        holder = holder or "unknown"
        return RunLockedError(
            f"{folder}: the run folder is locked by another itemscale command "
            f"({holder}); wait for it to finish or stop it first",
            holder,
        )

    fd = _open_lock_file(folder, needed=writes_run)
    folder_fd: int | None = None
    try:
        folder_fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            _flock_until(folder_fd, deadline, locked_out)
        except OSError:  # a file system without locks on folders: run.lock alone
            if fd is None:
                raise
        while fd is not None:
            _flock_until(fd, deadline, locked_out)  # an older itemscale's holder too
            if _same_file(fd, folder / LOCK_FILE):
                break
            # deleted or replaced after it was opened: lock the file at the path now
            os.close(fd)
            fd = None
            fd = _open_lock_file(folder, needed=writes_run)
        if fd is not None:
            try:  # who holds it, for the message of a command that waits; best effort
                os.ftruncate(fd, 0)
                os.pwrite(fd, f"pid {os.getpid()}: {what}".encode(), 0)
            except OSError:
                pass  # a full disk: the lock itself holds all the same
        yield
    finally:  # closing drops the locks
        if fd is not None:
            os.close(fd)
        if folder_fd is not None:
            os.close(folder_fd)


#: An artifact's manifest: the sha256 of every file, and the marker that itemscale wrote the folder.
MANIFEST_FILE: Final[str] = "MANIFEST.json"
ARTIFACT_MARKER: Final[str] = "itemscale-artifact"


def is_itemscale_output(folder: Path) -> bool:
    """A folder itemscale wrote as a whole (an artifact: `MANIFEST.json` says so)."""
    manifest = folder / MANIFEST_FILE
    try:
        payload = read_json(manifest)
    except (OSError, ValueError):
        return False
    return isinstance(payload, dict) and (
        payload.get("written_by") == ARTIFACT_MARKER
        # artifacts written before the marker existed: the manifest's own layout
        or {"schema_version", "algorithm", "files", "entries_sha256"} <= set(payload)
    )


def check_replaceable(
    target: str | os.PathLike[str],
    *,
    force: bool = False,
    protect: Iterable[str | os.PathLike[str]] = (),
) -> None:
    """Refuse to replace `target` unless it is absent, empty, an itemscale output, or `force`;
    never a folder in `protect` (the run folder) or one that contains one."""
    path = Path(target)
    _refuse_virtual(path)
    resolved = path.resolve()
    for kept in protect:
        kept_path = Path(kept).resolve()
        if resolved == kept_path or resolved in kept_path.parents:
            raise OutputFolderError(
                f"{path}: refusing to write an artifact over {kept} (it holds the run itself); "
                "give a folder of its own, e.g. the default RUN_DIR/artifact"
            )
    if not path.exists():
        return
    if not path.is_dir():
        raise OutputFolderError(f"{path}: exists and is not a folder")
    if force or is_itemscale_output(path) or not any(path.iterdir()):
        return
    raise OutputFolderError(
        f"{path}: the folder exists and was not written by itemscale; refusing to replace it "
        "(pass --force to replace it anyway, or choose another folder)"
    )


_SECRET_ENV: Final[tuple[str, ...]] = (
    "OPENAI_API_KEY",
    "ITEMSCALE_API_KEY",
    "HF_TOKEN",
    "HUGGING_FACE_HUB_TOKEN",
    "ANTHROPIC_API_KEY",
)
_registered: set[str] = set()
# Every pattern is anchored on a literal ("://", "Bearer", "?key=") and scans forward only up to
# a character it cannot contain, so `redact` is linear (a reply may be megabytes of letters); a
# scheme pattern `[a-z][a-z0-9+.-]*` before "://" made it quadratic.
_URL_CREDENTIALS = re.compile(r"://(?P<cred>[^/@\s:]+(?::[^/@\s]*)?)@")
_BEARER = re.compile(r"(?P<head>\bBearer\s+)(?P<token>[A-Za-z0-9._~+/=-]{8,})", re.I)
_KEY_PARAM = re.compile(
    r"(?P<head>[?&](?:api[_-]?key|key|token|access_token)=)(?P<token>[^&\s\"']+)", re.I
)
#: A URL's path, query and fragment after "://" (one greedy run: each character is read once).
_URL_REST = re.compile(r"://[^\s\"'<>]+")
#: A piece of a URL that looks like a key: a run of 20+ letters and digits holding both.
_KEYLIKE_RUN = re.compile(r"[A-Za-z0-9]{20,}")
_URL_PIECE_SEP = re.compile(r"([/?&=#;@:,])")
#: Tokens with the common providers' key prefixes, 16+ characters after the prefix with a
#: random-looking run (`_RANDOM_RUN`): redacted even when the process never knew the key.
_KEY_PREFIXES: Final[str] = r"sk-|sk_|hf_|gsk_|xai-|ghp_|gho_|github_pat_|glpat-|AIza"
_PREFIXED_KEY = re.compile(rf"(?:{_KEY_PREFIXES})[A-Za-z0-9_-]{{16,}}")
REDACTED: Final[str] = "[REDACTED]"
#: A superset of the patterns in syntax both `re` and RE2 (pyarrow's) read, so a column is
#: scanned once in C++ and only the matching rows are redacted one by one.
REDACTION_TRIGGERS: Final[str] = (
    r"://|(?i:bearer)|[?&](?i:api[_-]?key|key|token|access_token)=|" + f"(?:{_KEY_PREFIXES})"
)
#: What may split an echoed key (a wrapped line, an indent, an escaped newline): at most this
#: many characters between two of its characters (a class: `\s` differs between `re` and RE2).
_GAP: Final[str] = "(?:[\t\n\x0b\x0c\r \u00a0\u200b\u2028\u2029]|\\\\[nrt]){0,8}"
#: The shortest secret matched with its case changed, split or escaped (shorter: as sent only).
FUZZY_MIN_CHARS: Final[int] = 12
#: A partial echo ("sk-abc...wxyz") keeps at least this many characters of each end of the key.
_PARTIAL_HEAD, _PARTIAL_TAIL = 3, 3
_MASK: Final[str] = "[*.\u2026\u2022xX#_-]{1,128}"
_patterns: dict[tuple[str, ...], tuple[re.Pattern[str], str]] = {}


def _hex(char: str) -> str:
    return f"\\x{ord(char):02x}" if ord(char) < 0x80 else char


def _literal(text: str) -> str:
    """`text` as a pattern both `re` and RE2 read literally (no engine-specific escapes)."""
    return "".join(c if c.isascii() and c.isalnum() else _hex(c) for c in text)


def _any_spelling(char: str) -> str:
    """One character of a key as it may come back: itself (any case, under `(?i)`), escaped by
    a backslash (JSON's `\\/`), as a JSON `\\uXXXX` escape or URL-encoded (`%2F`)."""
    code = ord(char)
    forms = [f"\\\\{{0,2}}{_literal(char)}"]
    if code < 0x10000:
        forms.append(f"\\\\{{1,2}}u{code:04x}")
    if code < 0x80:
        forms.append(f"%{code:02x}")
    return "(?:" + "|".join(forms) + ")"


def _base64_cores(secret: str) -> list[str]:
    """The base64 text every encoding of a string holding `secret` contains, for each of the
    three alignments (base64 of "Bearer KEY", "user:KEY", a JSON body), standard and URL-safe."""
    raw = secret.encode()
    cores: set[str] = set()
    for offset in range(3):
        encoded = base64.b64encode(b"\0" * offset + raw).decode().rstrip("=")
        core = encoded[-(-8 * offset // 6) : (8 * (offset + len(raw))) // 6]
        if len(core) >= 8:
            cores.add(core)
            cores.add(core.replace("+", "-").replace("/", "_"))
    return sorted(cores)


def _chars_of(text: str) -> str:
    """A character class of the characters of `text` (for `re` and RE2 alike)."""
    return "[" + _literal("".join(sorted(set(text)))) + "]"


def _partial(secret: str) -> str:
    """A partial echo: the key's first 3 and up to 13 more characters, a mask, up to 13 and its
    last 3 (character classes between, so a backtrack over a long mask is one step a character)."""
    head = _literal(secret[:_PARTIAL_HEAD]) + _chars_of(secret[_PARTIAL_HEAD:16]) + "{0,13}"
    tail = _chars_of(secret[-16:-_PARTIAL_TAIL]) + "{0,13}" + _literal(secret[-_PARTIAL_TAIL:])
    return f"{head}{_MASK}{tail}"


def _secret_pattern(secrets: tuple[str, ...]) -> tuple[re.Pattern[str], str]:
    """One pattern for every spelling of every known secret (compiled once per set), and its
    source for the RE2 pre-filter."""
    cached = _patterns.get(secrets)
    if cached is not None:
        return cached
    parts: list[str] = []
    for secret in secrets:
        if len(secret) >= FUZZY_MIN_CHARS:
            parts.append("(?i:" + _GAP.join(_any_spelling(c) for c in secret) + ")")
            parts.append(_partial(secret))
        else:
            parts.append(_literal(secret))
        parts.extend(_literal(core) for core in _base64_cores(secret))
    source = "|".join(parts)
    compiled = (re.compile(source), source)
    _patterns[secrets] = compiled
    return compiled


def register_secret(value: str | None) -> None:
    """Remember a secret (an API key given in a backend's options) so `redact` removes it."""
    if value and len(value) >= 6:
        _registered.add(value)


def known_secrets() -> list[str]:
    found = set(_registered)
    for name in _SECRET_ENV:
        value = os.environ.get(name)
        if value and len(value) >= 6:
            found.add(value)
    return sorted(found, key=len, reverse=True)


def redaction_trigger() -> str:
    """A regex any text `redact` would change matches, read by RE2 as well as by `re`."""
    secrets = tuple(known_secrets())
    if not secrets:
        return REDACTION_TRIGGERS
    return f"{REDACTION_TRIGGERS}|{_secret_pattern(secrets)[1]}"


def _url_pieces(match: re.Match[str]) -> str:
    """The host is kept (it names the server; `_URL_CREDENTIALS` took any `user:key@`)."""
    rest = match.group(0)
    cut = rest.find("/", 3)
    if cut < 0 or not _KEYLIKE_RUN.search(rest, cut):
        return rest
    pieces = _URL_PIECE_SEP.split(rest[cut:])
    return rest[:cut] + "".join(REDACTED if _keylike(p) else p for p in pieces)


def _keylike(piece: str) -> bool:
    run = _KEYLIKE_RUN.search(piece)
    if run is None:
        return False
    chars = run.group(0)
    return any(c.isdigit() for c in chars) and any(c.isalpha() for c in chars)


#: A random key's body: a run of 12+ letters and digits holding both (an identifier made of
#: words, "hf_model_v2_checkpoint_final", has no such run).
_RANDOM_RUN = re.compile(r"[A-Za-z0-9]{12,}")


def _prefixed(match: re.Match[str]) -> str:
    token = match.group(0)
    for run in _RANDOM_RUN.findall(token):
        if any(c.isdigit() for c in run) and any(c.isalpha() for c in run):
            return REDACTED
    return token


def redact(text: str) -> str:
    """`text` without known secrets, URL credentials, bearer tokens and key query parameters.

    A known secret is found as sent and as it comes back: case changed, split by whitespace or an
    escaped newline, JSON-escaped (`\\/`, `\\u002f`), URL-encoded (`%2F`), base64-encoded alone
    or inside a longer string, and as a partial echo ("sk-abc...wxyz"). A URL piece holding a
    20-character run of letters and digits, and a token with a known key prefix (`sk-`, `hf_`,
    ...) holding a 12-character run with both, are redacted even when unknown
    (`hf_model_v2_checkpoint` is not). Linear in `len(text)`. Apply it to the whole foreign
    string before cutting it (`excerpt`): a cut first can split a secret so that neither half is
    found.
    """
    if not text:
        return text
    secrets = tuple(known_secrets())
    if secrets:
        text = _secret_pattern(secrets)[0].sub(REDACTED, text)
    if "://" in text:
        text = _URL_CREDENTIALS.sub(f"://{REDACTED}@", text)
        text = _URL_REST.sub(_url_pieces, text)
    text = _BEARER.sub(lambda m: f"{m['head']}{REDACTED}", text)
    text = _KEY_PARAM.sub(lambda m: f"{m['head']}{REDACTED}", text)
    return _PREFIXED_KEY.sub(_prefixed, text)


def excerpt(text: str, limit: int) -> str:
    """The first `limit` characters of `text` once redacted (never the other way round), with how
    many were cut."""
    clean = redact(text)
    if len(clean) <= limit:
        return clean
    return f"{clean[:limit]}... ({len(clean) - limit} more characters)"


def redact_value(value: Any) -> Any:
    """`redact` applied to every string of a JSON-like value (dict keys kept)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, Mapping):
        return {k: redact_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_value(v) for v in value]
    return value


def command_line() -> list[str]:
    """`sys.argv` as provenance records it: redacted."""
    return [redact(a) for a in sys.argv]
