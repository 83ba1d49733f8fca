"""Range header parsing and ranged reads, by hand against the RFC 9110 examples."""

import pytest

from robojudge.annotate.web._ranges import RangeNotSatisfiable, iter_file, parse_range


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("bytes=0-499", (0, 499)),
        ("bytes=500-999", (500, 999)),
        ("bytes=-500", (9500, 9999)),
        ("bytes=9500-", (9500, 9999)),
        ("bytes=0-0", (0, 0)),
        ("bytes=9990-20000", (9990, 9999)),  # a last byte past the end is clipped
        ("bytes=-20000", (0, 9999)),  # a suffix longer than the file is the whole file
        ("BYTES = 1 - 2", (1, 2)),
        (None, None),
        ("", None),
        ("items=0-1", None),  # another unit: ignored
        ("bytes=0-1,5-6", None),  # several ranges: the whole file
        ("bytes=5-1", None),  # last before first: malformed, ignored
        ("bytes=-", None),
        ("bytes=abc", None),
    ],
)
def test_parse_range(header, expected):
    assert parse_range(header, 10_000) == expected


@pytest.mark.parametrize("header", ["bytes=10000-", "bytes=20000-30000", "bytes=-0"])
def test_unsatisfiable(header):
    with pytest.raises(RangeNotSatisfiable):
        parse_range(header, 10_000)


def test_empty_file_suffix_is_unsatisfiable():
    with pytest.raises(RangeNotSatisfiable):
        parse_range("bytes=-5", 0)


def test_iter_file_reads_exactly_the_range(tmp_path):
    data = bytes(range(256)) * 40
    path = tmp_path / "f.bin"
    path.write_bytes(data)
    assert b"".join(iter_file(path, 10, 5000, chunk=97)) == data[10:5001]
    assert b"".join(iter_file(path, 0, len(data) - 1, chunk=1000)) == data
    assert [len(c) for c in iter_file(path, 0, 249, chunk=100)] == [100, 100, 50]
