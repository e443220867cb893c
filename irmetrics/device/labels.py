"""Per-row label counts of a (B, L) relevance matrix, computed on its device.

A score matrix's qrels hold every valid cell, but evaluation only reads how many
cells of each query carry each label (``rel_hist``) and the labels of the retrieved
cells: those cross to the host; the other labels only if a string table is asked for.
"""

from __future__ import annotations

import numpy as np

from .order import BLOCK_BYTES


class LabelTable:
    """What the adapters' judgments need from a device label matrix (see
    :func:`irmetrics.engine.ranked.label_histogram`, whose output this equals).

    Parameters
    ----------
    torch : module
    scores, labels : tensors, shape (B, L), on one device
    lengths : ndarray of int64, shape (B,), optional
        Valid cells per row (the first ones); the others are padding and ignored.
    graded : bool
        Labels are real numbers (``relevance_type="float"``), else integers.

    Attributes
    ----------
    valid_values : bool
        Every valid score is finite and every valid label is an integer (finite for
        ``graded``); when False nothing else is computed (the host's checks then name
        the first bad cell).
    rel_hist, rel_levels, has_qrels, positive_total
        What the adapters' host judgments compute from the same labels: the histogram
        of :func:`~irmetrics.engine.ranked.label_histogram`, whether a row has a valid
        cell, the number of valid labels above 0.
    """

    def __init__(self, torch, scores, labels, lengths, graded: bool,
                 block_bytes: int = BLOCK_BYTES):
        self.torch, self.labels, self.graded = torch, labels, graded
        self.dtype = torch.float64 if graded else torch.int64
        n_rows, n_cols = labels.shape
        self.lengths = None if lengths is None else torch.as_tensor(lengths, device=labels.device)
        self.block_rows = max(1, int(block_bytes) // max(n_cols * 24, 1))
        self.valid_values = all(self._valid_block(scores, labels, start)
                                for start in range(0, n_rows, self.block_rows))
        if not self.valid_values:
            return
        levels, positive = [], 0
        for _, block, judged in self._blocks():
            values = block[judged]
            positive += int((values > 0).sum())
            top = int(values.max()) if values.numel() and not graded else -1
            if 0 <= top < 1 << 16:  # the usual small grades: a presence count, no sort
                levels.append(torch.nonzero(torch.bincount(values, minlength=top + 1))
                              .reshape(-1).to(self.dtype))
            else:
                levels.append(torch.unique(values))
        levels = torch.unique(torch.cat(levels)) if levels else labels.new_zeros(0, dtype=self.dtype)
        if levels.numel() == 0:
            levels = torch.zeros(1, dtype=self.dtype, device=labels.device)
        width = levels.numel()
        hist = []
        for start, block, judged in self._blocks():
            column = torch.searchsorted(levels, block.contiguous())
            cell = torch.arange(len(block), device=block.device)[:, None] * width + column
            hist.append(torch.bincount(cell[judged], minlength=len(block) * width)
                        .reshape(len(block), width).cpu().numpy())
        self.rel_hist = (np.concatenate(hist) if hist else np.zeros((0, width))).astype(np.int64)
        self.rel_levels = levels.cpu().numpy()
        counts = np.full(n_rows, n_cols, np.int64) if lengths is None else np.asarray(lengths)
        self.has_qrels = counts > 0
        self.positive_total = positive

    def _valid(self, start: int, size: int):
        """(size, L) mask of the cells inside each row's length (None: every cell)."""
        if self.lengths is None:
            return None
        n_cols = self.labels.shape[1]
        return (self.torch.arange(n_cols, device=self.labels.device)
                < self.lengths[start:start + size, None])

    def _valid_block(self, scores, labels, start: int) -> bool:
        torch = self.torch
        block_s = scores[start:start + self.block_rows]
        block_l = labels[start:start + self.block_rows]
        bad = torch.zeros(block_l.shape, dtype=torch.bool, device=block_l.device)
        if block_s.is_floating_point():
            bad |= ~torch.isfinite(block_s)
        if block_l.is_floating_point():
            bad |= ~torch.isfinite(block_l)
            if not self.graded:
                bad |= block_l != torch.round(block_l)
        valid = self._valid(start, len(block_l))
        if valid is not None:
            bad &= valid
        return not bool(bad.any())

    def _blocks(self):
        """``(start, labels in the wide dtype, judged mask)`` block by block; ``-0.0`` is
        counted as ``0.0`` (one level, as numpy's unique)."""
        for start in range(0, self.labels.shape[0], self.block_rows):
            block = self.labels[start:start + self.block_rows].to(self.dtype)
            if self.graded:
                block = block + 0.0
            judged = block >= 0
            valid = self._valid(start, len(block))
            if valid is not None:
                judged &= valid
            yield start, block, judged

    def take(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """Labels of the cells ``(rows, cols)``, on the host (int64 or float64)."""
        torch, device = self.torch, self.labels.device
        picked = self.labels[torch.as_tensor(rows, device=device),
                             torch.as_tensor(cols, device=device)]
        return picked.to(self.dtype).cpu().numpy()

    def qrels_arrays(self):
        """``(row, column, label)`` of every valid cell, row-major, on the host."""
        n_rows, n_cols = self.labels.shape
        if self.lengths is None:
            rows = np.repeat(np.arange(n_rows), n_cols)
            cols = np.tile(np.arange(n_cols), n_rows)
        else:
            lengths = self.lengths.cpu().numpy()
            rows, cols = np.nonzero(np.arange(n_cols) < lengths[:, None])
        return rows, cols, self.take(rows, cols)
