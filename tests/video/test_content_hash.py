"""The video content hash is memoised per file version, and the memo is bounded."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from itemscale.collect.video import _media
from itemscale.collect.video._media import video_content_hash


def test_an_edited_file_is_hashed_again(tmp_path: Path) -> None:
    path = tmp_path / "clip.mp4"
    path.write_bytes(b"first version")
    assert video_content_hash(path) == hashlib.sha256(b"first version").hexdigest()
    path.write_bytes(b"second, longer version")
    os.utime(path, ns=(1, 1))  # a different mtime as well as a different size
    assert video_content_hash(path) == hashlib.sha256(b"second, longer version").hexdigest()


def test_the_memo_is_bounded() -> None:
    info = _media._content_hash.cache_info()
    assert info.maxsize is not None and info.maxsize <= 4096
