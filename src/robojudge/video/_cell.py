"""Reading one cell of a video whose frames tile several views in a grid.

Inside ``with read_cell(path, cell):`` every :func:`robojudge.video.sample_frames` of ``path`` gives
the pixels of ``cell`` only (cut from the upright frame before it is resized, so a size refers to the
cell as it would to a video of the cell alone), and :func:`robojudge.video.probe_video` of ``path``
gives the cell's width and height. Code that reads a video by its path (every metric reading an item's
main video) then reads the cell without knowing it is one. The cell is part of the frame cache's key,
so the whole frame and the cell of one file are cached apart, and :func:`robojudge.video.prefetch_frames`
decodes samplings of both (a sampling's ``cell``) in one pass.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Cell", "cell_of", "read_cell"]


@dataclass(frozen=True)
class Cell:
    """Cell ``(row, col)`` (counted from 0) of a ``rows x cols`` grid of equal cells.

    >>> Cell(2, 3, 1, 0).box(960, 384)
    (0, 192, 320, 384)
    """

    rows: int
    cols: int
    row: int
    col: int

    def __post_init__(self) -> None:
        if not (0 <= self.row < self.rows and 0 <= self.col < self.cols):
            raise ValueError(f"cell ({self.row}, {self.col}) is outside a {self.rows}x{self.cols} grid")

    def size(self, width: int, height: int) -> tuple[int, int]:
        """``(width, height)`` of the cell of a ``width x height`` frame."""
        return width // self.cols, height // self.rows

    def box(self, width: int, height: int) -> tuple[int, int, int, int]:
        """``(x0, y0, x1, y1)``: the pixels of the cell in a ``width x height`` frame."""
        cw, ch = self.size(width, height)
        return self.col * cw, self.row * ch, (self.col + 1) * cw, (self.row + 1) * ch

    def problem(self, width: int, height: int) -> str | None:
        """Why a ``width x height`` frame does not divide into the grid's cells, or ``None``."""
        if width % self.cols == 0 and height % self.rows == 0:
            return None
        return (f"a {width}x{height} video does not split into a {self.rows}x{self.cols} grid (its width "
                "must divide by the columns, its height by the rows)")


_CELLS: contextvars.ContextVar[tuple[tuple[Path, Cell], ...]] = contextvars.ContextVar(
    "read_cell", default=())


def _key(path: str | Path) -> Path:
    return Path(path).absolute()


@contextmanager
def read_cell(path: str | Path, cell: Cell) -> Iterator[None]:
    """Read only ``cell`` of the video at ``path`` inside the block (see the module docstring)."""
    token = _CELLS.set(((_key(path), cell), *_CELLS.get()))
    try:
        yield
    finally:
        _CELLS.reset(token)


def cell_of(path: str | Path) -> Cell | None:
    """The cell of ``path`` that the open :func:`read_cell` blocks read (the innermost), or ``None``."""
    found = _CELLS.get()
    if not found:
        return None
    key = _key(path)
    return next((cell for at, cell in found if at == key), None)
