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


@pytest.mark.parametrize(("content", "reason"), [
    ("cut", r"\(truncated or damaged file: "),  # torch's zip reader: an OSError or a RuntimeError
    (b"", r"\(truncated or damaged file\)$"),
    (b"hello\n", r"\(not a torch checkpoint file\)$"),
    ("no meta", r"\(it has no 'meta_json' entry\)$"),
])
def test_a_cut_short_or_foreign_file_is_named_with_a_reason_that_says_something(
        tmp_path: Path, content: object, reason: str) -> None:
    """A copy stopped half-way raised a bare 'OSError: [Errno 22] Invalid argument' naming no file (on
    some systems) or ended in an empty '()' or '(101)'."""
    torch = pytest.importorskip("torch")
    from robojudge.kiva import load_reader
    from robojudge.kiva._reader import ReaderError

    path = tmp_path / "reader.pt"
    if content in ("cut", "no meta"):
        meta = {} if content == "no meta" else {"meta_json": "{}"}
        torch.save({"state_dict": {"w": torch.zeros(4096)}} | meta, path)
        if content == "cut":
            path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    else:
        assert isinstance(content, bytes)
        path.write_bytes(content)
    with pytest.raises(ReaderError, match=rf"^{path}: not a KIVA reader checkpoint {reason}"):
        load_reader(tmp_path)


def test_an_unreadable_reader_says_so_not_damaged(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from robojudge.kiva._reader import _load_reason

    assert _load_reason(PermissionError(13, "Permission denied")) == "cannot read it: Permission denied"
    assert _load_reason(OSError(22, "Invalid argument")).startswith("truncated or damaged file")
