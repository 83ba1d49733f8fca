"""Agreement statistics under item weights, evaluated for many weight vectors at once.

A bootstrap replicate that draws item ``i`` ``w_i`` times is the same data set as the original items
weighted by ``w_i``. So each replicate's Pearson r, accuracy and errors follow from weighted sums
``sum_i w_i v_i`` of a few per-item columns ``v``, and all replicates' sums are one matrix product
``W @ V`` (replicates by items, times items by columns).

Spearman's rho of a resample is the Pearson r of its mid-ranks. Copies of an item tie, so the
mid-rank of every copy of value ``v`` is ``(weight below v) + (weight at v + 1) / 2``, computed per
distinct value from weighted counts, and the Pearson r of the ranks follows from weighted sums over
the distinct ``(pred, human)`` value pairs. This is exact, not an approximation.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from robojudge.meta._agreement import FloatArray, round_to_scale

#: Per-item columns whose weighted sums feed :func:`stats_from_sums`, in this order.
MOMENT_COLUMNS = ("n", "x", "y", "xx", "yy", "xy", "exact", "within_one", "d", "abs_d", "d2")
N_MOMENTS = len(MOMENT_COLUMNS)

#: A key whose replicates weigh at most this much in total has exact rank sums (:class:`StackedRanks`).
EXACT_RANK_WEIGHT = 2**17

# Above this many distinct (pred, human) pairs the rank sums are gathered item by item instead of
# through a one-hot matrix product.
_ONEHOT_MAX_CELLS = 256


def moment_columns(x: FloatArray, y: FloatArray, cx: float, cy: float,
                   scale: tuple[int, int]) -> FloatArray:
    """The ``(n_items, N_MOMENTS)`` columns of one judge on one axis; unscored items are all zero.

    ``x`` and ``y`` are centred on ``cx`` and ``cy`` before the products are formed, which keeps the
    moment differences in :func:`stats_from_sums` accurate. Pearson r is unchanged by the shift as
    long as every axis pooled together uses the same ``cx`` and ``cy``.
    """
    m = np.isfinite(x) & np.isfinite(y)
    xs = np.where(m, x - cx, 0.0)
    ys = np.where(m, y - cy, 0.0)
    d = np.where(m, x - y, 0.0)
    rx = round_to_scale(np.where(m, x, 0.0), scale)
    ry = round_to_scale(np.where(m, y, 0.0), scale)
    out = np.empty((x.size, N_MOMENTS))
    out[:, 0] = m
    out[:, 1] = xs
    out[:, 2] = ys
    out[:, 3] = xs * xs
    out[:, 4] = ys * ys
    out[:, 5] = xs * ys
    out[:, 6] = m & (rx == ry)
    out[:, 7] = m & (np.abs(rx - ry) <= 1)
    out[:, 8] = d
    out[:, 9] = np.abs(d)
    out[:, 10] = d * d
    return out


def _corr(sw: FloatArray, sx: FloatArray, sy: FloatArray, sxx: FloatArray, syy: FloatArray,
          sxy: FloatArray) -> FloatArray:
    with np.errstate(divide="ignore", invalid="ignore"):
        mx, my = sx / sw, sy / sw
        vx = sxx / sw - mx * mx
        vy = syy / sw - my * my
        cov = sxy / sw - mx * my
        # A replicate where one side is constant has a variance of rounding noise only.
        tiny_x = vx <= 1e-12 * np.maximum(sxx / sw, 1e-300)
        tiny_y = vy <= 1e-12 * np.maximum(syy / sw, 1e-300)
        r = np.clip(cov / np.sqrt(vx * vy), -1.0, 1.0)
    return np.where(tiny_x | tiny_y | (sw < 2), np.nan, r)


def stats_from_sums(s: FloatArray) -> dict[str, FloatArray]:
    """Pearson r, exact and within-one accuracy, MSE, MAE and bias from weighted sums.

    Args:
        s: Array whose last axis holds the weighted sums of :data:`MOMENT_COLUMNS`.

    Returns:
        One array per statistic with the leading shape of ``s``; NaN where no weight is left.
    """
    sw = s[..., 0]
    with np.errstate(divide="ignore", invalid="ignore"):
        inv = np.where(sw > 0, 1.0 / sw, np.nan)
    return {
        "pearson": _corr(sw, s[..., 1], s[..., 2], s[..., 3], s[..., 4], s[..., 5]),
        "exact": s[..., 6] * inv,
        "within_one": s[..., 7] * inv,
        "mse": s[..., 10] * inv,
        "mae": s[..., 9] * inv,
        "bias": s[..., 8] * inv,
    }


def _group_starts(sorted_codes: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    return np.flatnonzero(np.r_[True, sorted_codes[1:] != sorted_codes[:-1]])


class _RowGrouper:
    """Sums rows of a ``(n_rows, k)`` matrix into groups given by a code per row.

    Picks the cheapest route: no work when every group is one row, a small matrix product for few
    groups, ``numpy.add.reduceat`` otherwise.
    """

    def __init__(self, codes: npt.NDArray[np.int64]) -> None:
        self.order = np.argsort(codes, kind="stable")
        sorted_codes = codes[self.order]
        self.starts = _group_starts(sorted_codes)
        self.n_groups = int(self.starts.size)
        self.identity = self.n_groups == codes.size
        self.sorted_already = bool(np.all(self.order == np.arange(codes.size)))
        self.indicator: FloatArray | None = None
        if not self.identity and self.n_groups <= 64:
            group = np.cumsum(np.r_[True, sorted_codes[1:] != sorted_codes[:-1]]) - 1
            ind = np.zeros((self.n_groups, codes.size))
            ind[group, self.order] = 1.0
            self.indicator = ind

    def __call__(self, rows: FloatArray) -> FloatArray:
        if self.indicator is not None:
            return np.asarray(self.indicator @ rows, dtype=np.float64)
        ordered = rows if self.sorted_already else rows[self.order]
        if self.identity:
            return ordered
        return np.asarray(np.add.reduceat(ordered, self.starts, axis=0), dtype=np.float64)


class RankCorrelation:
    """Weighted Spearman rho of fixed ``(pred, human)`` pairs for many weight matrices.

    Built once per judge and axis (or per judge for the pooled Overall) from one or more parts, each
    a set of item positions with their values; the weight of an item in a part is read from the
    column at that position of the weight matrix. A pooled key lists one part per axis, so an item
    drawn ``w`` times contributes ``w`` copies to every axis.

    The data enter only through the weight on each distinct ``(pred, human)`` value pair, a "cell".
    With few cells (integer scores) :meth:`cell_matrix` maps items to cells so that the cell weights of
    many replicates are one matrix product; the caller may batch that product over many keys and
    call :meth:`from_cell_weights_t`. Internally replicates run along the last axis.
    """

    def __init__(self, parts: Sequence[tuple[npt.NDArray[np.intp], FloatArray, FloatArray]],
                 n_items: int) -> None:
        self._items = np.concatenate([p[0] for p in parts])
        x = np.concatenate([p[1] for p in parts])
        y = np.concatenate([p[2] for p in parts])
        self._n_items = n_items
        _, ix = np.unique(x, return_inverse=True)
        uy, iy = np.unique(y, return_inverse=True)
        cells, ic = np.unique(ix * uy.size + iy, return_inverse=True)
        self.n_cells = int(cells.size)
        self._cell_of_pair = ic.reshape(-1)
        # Cells are sorted by pred value first, so each pred value's cells are contiguous.
        self._cell_x = cells // uy.size
        self._cell_y = cells % uy.size
        self._group_x = _RowGrouper(self._cell_x)
        self._group_y = _RowGrouper(self._cell_y)
        self._pair_order = np.argsort(self._cell_of_pair, kind="stable")
        self._group_pairs = _RowGrouper(self._cell_of_pair[self._pair_order])

    @property
    def few_cells(self) -> bool:
        """Whether the one-hot route (:meth:`cell_matrix`) is the cheaper one."""
        return self.n_cells <= _ONEHOT_MAX_CELLS

    def cell_matrix(self, dtype: type[np.floating[Any]] = np.float64) -> npt.NDArray[np.floating[Any]]:
        """``(n_items, n_cells)``: how many of an item's pairs fall in each cell."""
        out = np.zeros((self._n_items, self.n_cells), dtype=dtype)
        np.add.at(out, (self._items, self._cell_of_pair), 1)
        return out

    def cell_weights_t(self, w_t: FloatArray) -> FloatArray:
        """Cell weights ``(n_cells, n_replicates)`` from item weights ``w_t``, ``(n_items, n_replicates)``.

        Replicates run along the last axis so that grouping items into cells adds whole rows.
        """
        if w_t.shape[0] != self._n_items:
            raise ValueError("weight matrix has the wrong number of items")
        if self.few_cells:
            return np.asarray(self.cell_matrix().T @ w_t, dtype=np.float64)
        return self._group_pairs(w_t[self._items[self._pair_order]])

    def __call__(self, w: FloatArray) -> FloatArray:
        """Spearman rho for every row of the ``(n_replicates, n_items)`` weight matrix ``w``."""
        w_t = np.ascontiguousarray(np.asarray(w, dtype=np.float64).T)
        if self._items.size < 2:
            return np.full(w_t.shape[1], np.nan)
        return self.from_cell_weights_t(self.cell_weights_t(w_t))

    def from_cell_weights_t(self, cell_w: FloatArray) -> FloatArray:
        """Spearman rho from ``(n_cells, n_replicates)`` cell weights."""
        if self._items.size < 2:
            return np.full(cell_w.shape[1], np.nan)
        gx = self._group_x(cell_w)
        gy = self._group_y(cell_w)
        # Mid-rank of a value = weight strictly below + (weight at the value + 1) / 2.
        rx = np.cumsum(gx, axis=0) - gx / 2.0 + 0.5
        ry = np.cumsum(gy, axis=0) - gy / 2.0 + 0.5
        sw = cell_w.sum(axis=0)
        sx = np.einsum("ij,ij->j", gx, rx)
        sy = np.einsum("ij,ij->j", gy, ry)
        sxx = np.einsum("ij,ij,ij->j", gx, rx, rx)
        syy = np.einsum("ij,ij,ij->j", gy, ry, ry)
        # Every distinct value occurs in some cell, so cell_x and cell_y index the group rows.
        sxy = np.einsum("ij,ij,ij->j", cell_w, rx[self._cell_x], ry[self._cell_y])
        return _corr(sw, sx, sy, sxx, syy, sxy)


class StackedRanks:
    """Weighted Spearman rho of several keys at once, from their cell weights stacked in one matrix.

    Each key is a :class:`RankCorrelation` and brings only its cells: how they group by pred value and by
    human value. Its cell weights are the rows ``start:start + n_cells`` of the stacked ``(sum of n_cells,
    n_replicates)`` matrix, in its cell order, wherever they come from; :func:`robojudge.meta.agreement_table`
    takes a judge's, less those of the items a judge pair leaves out (a cell may then weigh 0).

    Whole-number weights make every sum here an exact float64 as long as a replicate's total weight ``W`` of
    a key is at most :data:`EXACT_RANK_WEIGHT`: mid-ranks are halves up to ``W``, the terms of the sums of
    squares and products quarters up to ``W**3 <= 2**51``. So the order of the additions does not matter,
    and rho equals :meth:`RankCorrelation.from_cell_weights_t` on the same weights bit for bit (the last
    step, :func:`_corr`, takes the same six sums). The caller checks the bound.
    """

    def __init__(self, keys: Sequence[RankCorrelation], pairs: Sequence[int] | None = None) -> None:
        """``pairs``: the pairs each key rests on where its weights leave some of its own out (rho is
        undefined below 2, as in :meth:`RankCorrelation.from_cell_weights_t`)."""
        if any(k.n_cells == 0 for k in keys):
            raise ValueError("a key without scored pairs has no cells to stack")
        from scipy import sparse

        n_cells = np.array([k.n_cells for k in keys], dtype=np.intp)
        n_x = np.array([k._group_x.n_groups for k in keys], dtype=np.intp)
        n_y = np.array([k._group_y.n_groups for k in keys], dtype=np.intp)
        self.n_keys = len(keys)
        self.n_cells = int(n_cells.sum())
        # Value groups numbered across keys; every value of a key occurs in one of its cells.
        x_start = np.r_[0, np.cumsum(n_x)[:-1]]
        y_start = np.r_[0, np.cumsum(n_y)[:-1]]
        self._cell_x = np.concatenate([k._cell_x + o for k, o in zip(keys, x_start, strict=True)])
        self._cell_y = np.concatenate([k._cell_y + o for k, o in zip(keys, y_start, strict=True)])
        key = np.arange(self.n_keys)

        def ones(rows: npt.NDArray[np.intp], cols: npt.NDArray[np.intp], shape: tuple[int, int]) -> Any:
            return sparse.csr_matrix((np.ones(rows.size), (rows, cols)), shape=shape)

        cells = np.arange(self.n_cells)
        n_gx, n_gy = int(n_x.sum()), int(n_y.sum())
        # Sums over a key's cells or value groups, and over a group's cells, as sparse 0/1 products.
        self._by_x = ones(self._cell_x, cells, (n_gx, self.n_cells))
        self._by_y = ones(self._cell_y, cells, (n_gy, self.n_cells))
        self._key_cells = ones(np.repeat(key, n_cells), cells, (self.n_keys, self.n_cells))
        self._key_x = ones(np.repeat(key, n_x), np.arange(n_gx), (self.n_keys, n_gx))
        self._key_y = ones(np.repeat(key, n_y), np.arange(n_gy), (self.n_keys, n_gy))
        # Weight at or below each value: the key's groups up to it (lower triangles, one per key).
        self._upto_x = self._upto(x_start, n_x)
        self._upto_y = self._upto(y_start, n_y)
        self._single = np.array([k._items.size for k in keys] if pairs is None else pairs) < 2

    @staticmethod
    def _upto(start: npt.NDArray[np.intp], n: npt.NDArray[np.intp]) -> Any:
        from scipy import sparse

        rows, cols = [], []
        for s0, k in zip(start.tolist(), n.tolist(), strict=True):
            i, j = np.tril_indices(k)
            rows.append(s0 + i)
            cols.append(s0 + j)
        r, c = np.concatenate(rows), np.concatenate(cols)
        total = int(n.sum())
        return sparse.csr_matrix((np.ones(r.size), (r, c)), shape=(total, total))

    def __call__(self, cell_w: FloatArray) -> FloatArray:
        """``(n_keys, n_replicates)`` rho from the stacked ``(n_cells, n_replicates)`` cell weights."""
        if cell_w.shape[0] != self.n_cells:
            raise ValueError("cell weight matrix has the wrong number of cells")
        gx = self._by_x @ cell_w
        gy = self._by_y @ cell_w
        # Mid-rank of a value = weight strictly below + (weight at the value + 1) / 2.
        rx = self._upto_x @ gx - gx / 2.0 + 0.5
        ry = self._upto_y @ gy - gy / 2.0 + 0.5
        sw = self._key_cells @ cell_w
        sx = self._key_x @ (gx * rx)
        sy = self._key_y @ (gy * ry)
        sxx = self._key_x @ (gx * rx * rx)
        syy = self._key_y @ (gy * ry * ry)
        sxy = self._key_cells @ (cell_w * rx[self._cell_x] * ry[self._cell_y])
        r = _corr(sw, sx, sy, sxx, syy, sxy)
        r[self._single] = np.nan
        return r
