"""pass^k and pass@k against k as an inline SVG (no plotting library)."""

from __future__ import annotations

import math
from collections.abc import Mapping

from ek.stats import Interval

from ._html import esc

__all__ = ["pass_k_svg"]

_W, _H, _L, _R, _T, _B = 420, 220, 44, 12, 14, 34


def _x(k: int, kmax: int) -> float:
    return _L + (_W - _L - _R) * ((k - 1) / (kmax - 1) if kmax > 1 else 0.5)


def _y(v: float) -> float:
    return _T + (_H - _T - _B) * (1.0 - v)


def _finite(curve: Mapping[int, Interval]) -> list[tuple[int, Interval]]:
    return [(k, iv) for k, iv in sorted(curve.items()) if math.isfinite(iv.point)]


def _series(curve: Mapping[int, Interval], kmax: int, colour: str, label: str) -> str:
    pts = _finite(curve)
    if not pts:
        return ""
    band_top = [(k, iv.high) for k, iv in pts if math.isfinite(iv.high)]
    band_low = [(k, iv.low) for k, iv in reversed(pts) if math.isfinite(iv.low)]
    band = " ".join(f"{_x(k, kmax):.1f},{_y(v):.1f}" for k, v in band_top + band_low)
    line = " ".join(f"{_x(k, kmax):.1f},{_y(iv.point):.1f}" for k, iv in pts)
    dots = "".join(
        f'<circle cx="{_x(k, kmax):.1f}" cy="{_y(iv.point):.1f}" r="3" fill="{colour}">'
        f"<title>{esc(label)} k={k}: {iv.point:.3f} [{iv.low:.3f}, {iv.high:.3f}]</title></circle>"
        for k, iv in pts
    )
    return (
        f'<polygon points="{band}" fill="{colour}" fill-opacity="0.15" stroke="none"/>'
        f'<polyline points="{line}" fill="none" stroke="{colour}" stroke-width="2"/>{dots}'
    )


def _axes(kmax: int) -> str:
    out = [
        f'<line x1="{_L}" y1="{_y(0):.1f}" x2="{_W - _R}" y2="{_y(0):.1f}" stroke="#57606a"/>',
        f'<line x1="{_L}" y1="{_y(0):.1f}" x2="{_L}" y2="{_y(1):.1f}" stroke="#57606a"/>',
    ]
    for v in (0.0, 0.25, 0.5, 0.75, 1.0):
        out.append(
            f'<text x="{_L - 6}" y="{_y(v) + 4:.1f}" text-anchor="end">{v:g}</text>'
            f'<line x1="{_L}" y1="{_y(v):.1f}" x2="{_W - _R}" y2="{_y(v):.1f}" stroke="#d0d7de" '
            'stroke-dasharray="2,3"/>'
        )
    step = max(1, math.ceil(kmax / 10))
    for k in range(1, kmax + 1, step):
        out.append(
            f'<text x="{_x(k, kmax):.1f}" y="{_H - _B + 16}" text-anchor="middle">{k}</text>'
        )
    out.append(f'<text x="{(_W + _L) / 2:.0f}" y="{_H - 4}" text-anchor="middle">k</text>')
    return "".join(out)


def pass_k_svg(pass_hat: Mapping[int, Interval], pass_at: Mapping[int, Interval]) -> str:
    """pass^k (red) and pass@k (blue) against k, each with its interval as a band.

    Example:
        >>> from ek.agents.reliability import reliability
        >>> r = reliability({"a": (4, 2), "b": (4, 4)}, 4)
        >>> svg = pass_k_svg(r.pass_hat_k, r.pass_at_k)
        >>> svg.startswith("<svg") and svg.count("<circle") == 8
        True
    """
    kmax = max([*pass_hat, *pass_at, 1])
    legend = (
        f'<text x="{_W - _R - 4}" y="{_T + 10}" text-anchor="end" fill="#0969da">pass@k</text>'
        f'<text x="{_W - _R - 4}" y="{_T + 24}" text-anchor="end" fill="#cf222e">pass^k</text>'
    )
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_W}" height="{_H}" '
        f'viewBox="0 0 {_W} {_H}" role="img" aria-label="pass^k and pass@k against k">'
        f"{_axes(kmax)}{_series(pass_at, kmax, '#0969da', 'pass@k')}"
        f"{_series(pass_hat, kmax, '#cf222e', 'pass^k')}{legend}</svg>"
    )
