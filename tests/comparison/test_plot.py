"""irmetrics.plot: the figures draw the comparison's numbers (checked against independent
evaluations), validate their arguments, and touch no global matplotlib state."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import irmetrics as irm
from irmetrics.exceptions import ParameterError

pytest.importorskip("matplotlib", reason="irmetrics.plot needs matplotlib (irmetrics-exact[plot])")

from matplotlib.figure import Figure  # noqa: E402

from irmetrics import plot  # noqa: E402

CMP = Path(__file__).resolve().parents[2] / "fixtures" / "compare"
QRELS = str(CMP / "qrels.txt")
NAMES = ("bm25", "dense", "tweak")
RUNS = {name: str(CMP / f"{name}.run") for name in NAMES}


@pytest.fixture(scope="module")
def cmp():
    return irm.compare(QRELS, RUNS, ["map", "P.10"], baseline="bm25")


def per_query(measure: str, name: str) -> dict:
    """Oracle: irm.evaluate on its own, as a {query id: value} dict."""
    res = irm.evaluate(QRELS, RUNS[name], [measure])
    return dict(zip(res.query_ids.tolist(), res.values(res.names[0]).tolist()))


def test_per_query_differences_draw_every_sorted_difference(cmp):
    fig = plot.per_query_differences(cmp, "P_10")
    assert isinstance(fig, Figure) and len(fig.axes) == 2
    base = per_query("P.10", "bm25")
    for ax, system in zip(fig.axes, ("dense", "tweak")):
        other = per_query("P.10", system)
        diffs = {q: other[q] - base[q] for q in base}
        order = sorted(diffs, key=lambda q: -diffs[q])  # stable: ids already in byte order
        labels = [t.get_text() for t in ax.get_xticklabels()]
        assert labels == order
        bars = {int(round(p.get_x() + p.get_width() / 2)): p.get_height() for p in ax.patches}
        nonzero = [i for i, q in enumerate(order) if diffs[q] != 0]
        assert sorted(bars) == nonzero
        for i in nonzero:
            assert bars[i] == pytest.approx(diffs[order[i]], abs=1e-12)
            colour = ax.patches[nonzero.index(i)].get_facecolor()
            expected = plot.WIN if diffs[order[i]] > 0 else plot.LOSS
            assert colour[:3] == pytest.approx(tuple(int(expected[k:k + 2], 16) / 255
                                                     for k in (1, 3, 5)))
        ties = [i for i, q in enumerate(order) if diffs[q] == 0]
        bands = [c for c in ax.collections if c.get_label() == "ties"]
        if ties:  # P@10 of tweak vs bm25 ties on most queries: a band over exactly those
            (band,) = bands
            (segment,) = band.get_segments()
            assert segment[0][0] == pytest.approx(ties[0] - 0.45)
            assert segment[1][0] == pytest.approx(ties[-1] + 0.45)
        else:
            assert bands == []
        wins = sum(d > 0 for d in diffs.values())
        losses = sum(d < 0 for d in diffs.values())
        assert ax.get_title(loc="right").startswith(
            f"{wins} wins, {len(diffs) - wins - losses} ties, {losses} losses")
    assert any(c.get_label() == "ties" for ax in fig.axes for c in ax.collections)


def test_score_distributions_show_every_query_of_every_system(cmp):
    fig = plot.score_distributions(cmp, "map")
    (ax,) = fig.axes
    points = [c for c in ax.collections if len(c.get_offsets()) == 50]
    assert len(points) == 3
    for collection, name in zip(points, NAMES):
        values = per_query("map", name)
        y = np.sort(collection.get_offsets()[:, 1])
        np.testing.assert_array_equal(y, np.sort(list(values.values())))
    (means,) = [c for c in ax.collections if len(c.get_offsets()) == 3]
    np.testing.assert_allclose(means.get_offsets()[:, 1],
                               [np.mean(list(per_query("map", n).values())) for n in NAMES])
    assert [t.get_text() for t in ax.get_xticklabels()] == list(NAMES)


def test_precision_recall_lines_are_the_curves(cmp):
    fig = plot.precision_recall(cmp)
    lines = fig.axes[0].get_lines()
    curves = cmp.precision_recall_curves()
    assert [line.get_label() for line in lines] == list(NAMES)
    for line, name in zip(lines, NAMES):
        np.testing.assert_array_equal(line.get_ydata(),
                                      curves.filter(system=name)["precision"].to_numpy())


def test_arguments_are_checked_with_one_line_messages(cmp):
    with pytest.raises(ParameterError, match=r"`measure` must be one of 'map', 'P_10'; got 'ndcg'"):
        plot.score_distributions(cmp, "ndcg")
    with pytest.raises(ParameterError, match=r"`pairs` must be rows of the comparison of map"):
        plot.per_query_differences(cmp, "map", pairs=[("bm25", "dense")])
    with pytest.raises(ParameterError, match=r"`max_pairs` must be"):
        plot.per_query_differences(cmp, "map", max_pairs=0)
    fig = plot.per_query_differences(cmp, pairs=[("tweak", "bm25")])
    assert [ax.get_title(loc="left") for ax in fig.axes] == ["map: tweak - bm25"]
    assert len(plot.per_query_differences(cmp, max_pairs=1).axes) == 1


def test_no_global_state_is_touched(cmp):
    import matplotlib

    before = dict(matplotlib.rcParams)
    plot.per_query_differences(cmp)
    plot.score_distributions(cmp)
    plot.precision_recall(cmp)
    assert dict(matplotlib.rcParams) == before
    # Figures are not pyplot's: nothing registered with a GUI figure manager.
    import sys

    if "matplotlib.pyplot" in sys.modules:
        assert sys.modules["matplotlib.pyplot"].get_fignums() == []
