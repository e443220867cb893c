"""float64 arithmetic on a device with numpy's bits.

A device may associate sums differently from numpy, and torch's CPU square root can be
one unit in the last place off; the functions here repeat numpy's operations in
numpy's order with IEEE float64 additions, products and divisions, which every device
that has float64 rounds alike (CUDA's, and the CPU's: MPS has no float64). What they
return equals what numpy returns on the host for the same rows, bit for bit, so the
host and device roads of :mod:`irmetrics.adapters` agree exactly.
"""

from __future__ import annotations

import numpy as np

#: Devices whose float64 arithmetic is IEEE, correctly rounded (CUDA's ``sqrt`` and
#: division included): the ones that measure in float64 for the host.
EXACT_DEVICES = ("cuda", "cpu")


def exact_sqrt(torch, values):
    """Correctly rounded float64 square roots (numpy's): CUDA's ``sqrt`` is IEEE;
    torch's CPU kernel can be one unit in the last place off, so CPU tensors take
    numpy's.

    Examples
    --------
    >>> import torch
    >>> exact_sqrt(torch, torch.tensor([8.0], dtype=torch.float64)).item() == float(np.sqrt(8.0))
    True
    """
    if values.device.type == "cpu":
        return torch.from_numpy(np.sqrt(values.numpy()))
    return torch.sqrt(values)


def numpy_row_sums(torch, rows):
    """``np.add.reduce(rows, axis=-1)`` of a 2-D float64 tensor, bit for bit, on its device.

    numpy sums a contiguous row by pairwise summation: rows shorter than 8 one by one
    from 0.0; up to 128 in 8 running sums ``r[j] = x[j] + x[j + 8] + ...`` combined as
    ``((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))``, the remainder added in order;
    longer rows split at ``n // 2`` rounded down to a multiple of 8, each half summed so.
    The reduction starts from 0.0 (add's identity). The additions are the same IEEE
    float64 additions in the same order here, so the bits are numpy's (a device's sum
    kernels associate differently). The tree depends on the row length only: each step
    runs on all rows at once.

    Examples
    --------
    >>> import torch
    >>> x = np.random.default_rng(0).standard_normal((3, 300))
    >>> bool((numpy_row_sums(torch, torch.from_numpy(x)).numpy() == x.sum(axis=1)).all())
    True
    """

    def pairwise(first: int, n: int):
        if n < 8:
            total = torch.zeros(rows.shape[0], dtype=rows.dtype, device=rows.device)
            for i in range(first, first + n):
                total = total + rows[:, i]
            return total
        if n <= 128:
            partial = rows[:, first:first + 8].clone()
            end = first + n - n % 8
            for i in range(first + 8, end, 8):
                partial += rows[:, i:i + 8]
            r = partial.unbind(1)
            total = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
            for i in range(end, first + n):
                total = total + rows[:, i]
            return total
        half = n // 2
        half -= half % 8
        return pairwise(first, half) + pairwise(first + half, n - half)

    return 0.0 + pairwise(0, rows.shape[1])


def unit_rows(torch, rows):
    """``rows / np.linalg.norm(rows, axis=1)[:, None]`` of a float64 tensor, bit for bit
    (numpy's norm: the square root of the pairwise sum of the squares), and whether a
    row is zero (the host refuses those for cosine).

    Examples
    --------
    >>> import torch
    >>> x = np.random.default_rng(1).standard_normal((4, 33))
    >>> unit, zero = unit_rows(torch, torch.from_numpy(x))
    >>> bool((unit.numpy() == x / np.linalg.norm(x, axis=1)[:, None]).all()), bool(zero.any())
    (True, False)
    """
    step = max(1, (1 << 24) // max(rows.shape[1], 1))  # squares in 128 MiB pieces
    pieces = [rows[start:start + step] for start in range(0, rows.shape[0], step)]
    norms = torch.cat([exact_sqrt(torch, numpy_row_sums(torch, piece * piece))
                       for piece in pieces] or [rows.new_zeros(0)])
    return rows / norms[:, None], norms == 0
