"""Keys never reach provenance: `api_key_env` must name a variable that is set (the default may
be unset: no key, no Authorization header), and a key written into any part of `base_url` is
redacted from run.json and the published artifact (docs/backends.md, docs/run-folders.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from _support.openai_server import ChatServer, Reply
from _support.sweep import write_benchmark, write_protocol
from itemscale.cli import main

TYPED_KEY = "sk-Slip9Typed4Into8The2Name7Field"


def _sweep(tmp_path: Path, options: dict[str, str]) -> int:
    suite = write_benchmark(tmp_path / "suite", 1)
    write_protocol(
        tmp_path / "p.toml",
        suite,
        frames=(2,),
        models=[{"name": "served", "backend": "openai", "model": "m", "options": options}],
    )
    return main(["sweep", str(tmp_path / "p.toml"), "--no-progress", "--max-retries", "0"])


def _files(root: Path) -> str:
    if not root.exists():
        return ""
    return "".join(p.read_bytes().decode(errors="replace") for p in root.rglob("*") if p.is_file())


@pytest.mark.parametrize(
    ("value", "said"),
    [
        (TYPED_KEY, "is not the name of an environment variable"),
        ("sk-proj-ab12/cd34+ef56", "is not the name of an environment variable"),
        ("MY_UNSET_KEY_VAR", "$MY_UNSET_KEY_VAR is not set"),
        ("sk_live_LooksLikeAName0123456789", "the variable it names is not set"),
    ],
)
def test_api_key_env_must_name_a_variable_that_is_set_and_is_never_printed(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    value: str,
    said: str,
) -> None:
    monkeypatch.delenv("MY_UNSET_KEY_VAR", raising=False)
    with ChatServer() as server:
        code = _sweep(tmp_path, {"base_url": server.base_url, "api_key_env": value})
        assert not server.received  # nothing was sent, with or without a key
    err = capsys.readouterr().err
    assert code == 2
    assert said in err and "option 'api_key_env'" in err
    if value != "MY_UNSET_KEY_VAR":
        assert value not in err
    assert not (tmp_path / "run" / "run.json").exists()
    assert value not in _files(tmp_path / "run") or value == "MY_UNSET_KEY_VAR"


def test_the_default_variable_may_be_unset_no_key_no_header(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with ChatServer() as server:
        assert _sweep(tmp_path, {"base_url": server.base_url}) == 0
        assert server.received and "Authorization" not in server.received[0].headers


@pytest.mark.parametrize(
    "where",
    ["/v1/{key}", "/{key}/v1", "/v1?auth={key}", "/v1;k={key}"],
)
def test_a_key_in_any_part_of_the_base_url_is_stored_nowhere(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    where: str,
) -> None:
    key = "Zk4Wq9Pm2Xr7Ln5Hs8Jd3Tv6"
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with ChatServer(default=Reply(text="B")) as server:
        root = server.base_url.removesuffix("/v1")
        code = _sweep(tmp_path, {"base_url": root + where.format(key=key)})
    assert code in (0, 1)
    assert main(["report", str(tmp_path / "run"), "--bootstrap", "0"]) in (0, 2)
    printed = capsys.readouterr()
    assert key not in printed.out + printed.err
    assert (tmp_path / "run" / "run.json").is_file()
    assert (tmp_path / "run" / "artifact" / "run.json").is_file()
    assert key not in _files(tmp_path / "run")
