"""A min-cost assignment solver (the Hungarian algorithm), pure Python.

Example:
    >>> hungarian([[4.0, 1.0, 3.0], [2.0, 0.0, 5.0]])   # row 0 -> col 1, row 1 -> col 0
    [1, 0]
"""

from __future__ import annotations

import math

__all__ = ["hungarian"]


def hungarian(cost: list[list[float]]) -> list[int]:
    """Min-cost assignment of every row to a distinct column (rows <= columns).

    The shortest-augmenting-path form of the Hungarian algorithm with row/column potentials
    (Kuhn 1955; Munkres 1957; O(n^2 m)). Ties are broken by the lowest column index, so equal
    inputs give equal assignments. Returns the column of each row.
    """
    n = len(cost)
    m = len(cost[0]) if n else 0
    inf = math.inf
    u = [0.0] * (n + 1)
    v = [0.0] * (m + 1)
    p = [0] * (m + 1)  # p[j] = row (1-based) assigned to column j
    way = [0] * (m + 1)
    for i in range(1, n + 1):
        p[0] = i
        j0 = 0
        minv = [inf] * (m + 1)
        used = [False] * (m + 1)
        while True:
            used[j0] = True
            i0 = p[j0]
            row = cost[i0 - 1]
            ui = u[i0]
            delta = inf
            j1 = 0
            for j in range(1, m + 1):
                if not used[j]:
                    cur = row[j - 1] - ui - v[j]
                    if cur < minv[j]:
                        minv[j] = cur
                        way[j] = j0
                    if minv[j] < delta:
                        delta = minv[j]
                        j1 = j
            for j in range(m + 1):
                if used[j]:
                    u[p[j]] += delta
                    v[j] -= delta
                else:
                    minv[j] -= delta
            j0 = j1
            if p[j0] == 0:
                break
        while True:
            j1 = way[j0]
            p[j0] = p[j1]
            j0 = j1
            if j0 == 0:
                break
    out = [-1] * n
    for j in range(1, m + 1):
        if p[j]:
            out[p[j] - 1] = j - 1
    return out
