"""A file that is not a reader checkpoint: the error says so in one line, with torch's reason."""

from __future__ import annotations

from pathlib import Path

import pytest


def test_a_file_with_pickled_code_is_refused_without_the_advice_to_load_it_unsafely(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    from robojudge.kiva import load_reader
    from robojudge.kiva._reader import ReaderError

    torch.save({"meta_json": "{}", "hook": print}, tmp_path / "reader.pt")  # print: a global, never weights
    with pytest.raises(ReaderError) as info:
        load_reader(tmp_path)
    message = str(info.value)
    assert message.startswith(f"{tmp_path / 'reader.pt'}: not a KIVA reader checkpoint (torch refuses")
    assert "Unsupported global: GLOBAL print" in message
    assert "weights_only" not in message and "\n" not in message  # torch's paragraphs are left out

    (tmp_path / "reader.pt").write_bytes(bytes(range(256)) * 4)
    with pytest.raises(ReaderError, match=r"not a KIVA reader checkpoint \(torch refuses its contents"):
        load_reader(tmp_path)
