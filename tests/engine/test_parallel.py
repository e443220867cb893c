"""irmetrics.parallel: the one rule for thread counts, ordered maps, seeded resample blocks."""

from __future__ import annotations

import itertools
import threading
import time

import numpy as np
import pytest

from irmetrics.exceptions import ParameterError
from irmetrics.parallel import (MAX_THREADS, THREADS_ENV, available_cores, block_generator,
                                block_generators, block_root, block_seeds, imap_ordered,
                                map_ordered, one_blas_thread, resolve_threads)


@pytest.mark.parametrize("bad", [0, -1, MAX_THREADS + 1, 2.0, True, "4"])
def test_bad_thread_counts_are_clear_errors(bad):
    with pytest.raises(ParameterError, match="`threads` must be"):
        resolve_threads(bad)


def test_default_is_affinity_or_environment(monkeypatch):
    monkeypatch.delenv(THREADS_ENV, raising=False)
    assert resolve_threads(None) == min(available_cores(), MAX_THREADS)
    monkeypatch.setenv(THREADS_ENV, "3")
    assert resolve_threads(None) == 3
    assert resolve_threads(5) == 5  # an explicit count wins over the environment
    monkeypatch.setenv(THREADS_ENV, "many")
    with pytest.raises(ParameterError, match=THREADS_ENV):
        resolve_threads(None)


def test_one_thread_starts_no_helper_thread():
    seen = set()
    map_ordered(lambda _: seen.add(threading.get_ident()), range(10), threads=1)
    list(imap_ordered(lambda _: seen.add(threading.get_ident()), range(10), threads=1))
    assert seen == {threading.get_ident()}


@pytest.mark.parametrize("threads", [1, 2, 4, 7])
def test_results_in_item_order(threads):
    items = list(range(50))
    assert map_ordered(lambda i: i * i, items, threads=threads) == [i * i for i in items]
    assert list(imap_ordered(lambda i: -i, iter(items), threads=threads)) == [-i for i in items]


@pytest.mark.parametrize("threads", [1, 4])
def test_first_failing_item_is_raised_whatever_the_timing(threads):
    def fn(i):
        if i in (3, 7):
            raise ValueError(f"item {i}")
        return i
    with pytest.raises(ValueError, match="item 3"):
        map_ordered(fn, range(10), threads=threads)
    with pytest.raises(ValueError, match="item 3"):
        list(imap_ordered(fn, range(10), threads=threads))


def test_the_caller_is_one_of_the_threads_and_every_item_runs_once():
    ran: list[tuple[int, int]] = []

    def fn(i):
        time.sleep(0.002)  # long enough for the helpers to take items too
        ran.append((i, threading.get_ident()))
        if i == 5:
            raise ValueError("item 5")
        return i

    with pytest.raises(ValueError, match="item 5"):
        map_ordered(fn, range(40), threads=3)
    assert sorted(i for i, _ in ran) == list(range(40))  # after a failure too, once each
    idents = {ident for _, ident in ran}
    assert threading.get_ident() in idents and len(idents) <= 3


def test_an_interrupt_wins_over_errors_and_stops_the_handing_out():
    ran = []

    def fn(i):
        ran.append(i)
        if i == 1:
            raise ValueError("item 1")
        if i == 2:
            raise KeyboardInterrupt
        time.sleep(0.001)
        return i

    with pytest.raises(KeyboardInterrupt):
        map_ordered(fn, range(200), threads=2)
    assert len(ran) < 200


def test_streaming_map_keeps_a_bounded_window():
    consumed = []

    def source():
        for i in itertools.count():
            consumed.append(i)
            yield i

    it = imap_ordered(lambda i: i, source(), threads=4, ahead=3)
    assert [next(it) for _ in range(5)] == [0, 1, 2, 3, 4]
    assert len(consumed) <= 5 + 3  # never more than `ahead` items beyond what was taken
    it.close()


def test_block_seeds_give_the_block_generators_draw_for_draw():
    # The statistics build block i's generator from block_seeds in the worker: it must be
    # generator i of block_generators (whose draws the pinned p-values come from).
    for seed in (0, 11, None):
        if seed is None:
            g1, g2 = np.random.default_rng(3), np.random.default_rng(3)
            seeds, generators = block_seeds(g1, 5), block_generators(g2, 5)
        else:
            seeds, generators = block_seeds(seed, 5), block_generators(seed, 5)
        assert len(seeds) == 5
        for child, generator in zip(seeds, generators):
            assert np.array_equal(np.random.default_rng(child).random(6), generator.random(6))
    with pytest.raises(ParameterError):
        block_seeds(1, -1)


def test_block_generator_builds_generator_i_without_spawning_the_others():
    for seed in (0, 11):
        root = block_root(seed)
        for i, generator in enumerate(block_generators(seed, 6)):
            assert np.array_equal(block_generator(root, i).random(5), generator.random(5))
    g1, g2 = np.random.default_rng(9), np.random.default_rng(9)
    root = block_root(g1)  # one draw from the Generator, as block_generators makes
    assert np.array_equal(block_generator(root, 3).random(4), block_generators(g2, 4)[3].random(4))
    assert np.array_equal(g1.random(2), g2.random(2))  # both advanced alike
    with pytest.raises(ParameterError):
        block_root(-1)


def test_block_generators_are_reproducible_and_independent():
    a = [g.random(4) for g in block_generators(11, 3)]
    b = [g.random(4) for g in block_generators(11, 3)]
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert not np.array_equal(a[0], a[1])
    g1, g2 = np.random.default_rng(5), np.random.default_rng(5)
    assert np.array_equal(block_generators(g1, 2)[1].random(3), block_generators(g2, 2)[1].random(3))
    with pytest.raises(ParameterError):
        block_generators(-1, 2)


def _blas_threads() -> list[int]:
    """Threads of the BLAS libraries loaded when irmetrics first limited them (numpy's;
    scipy's own BLAS, loaded later, serves no resampling)."""
    import irmetrics.parallel as parallel

    return [lib.get_num_threads() for lib in parallel._blas_controller().lib_controllers
            if lib.user_api == "blas"]


def test_one_blas_thread_holds_blas_to_one_and_restores_it():
    from threadpoolctl import threadpool_limits

    if not _blas_threads():
        pytest.skip("numpy loaded no BLAS that threadpoolctl knows")
    with threadpool_limits(3, user_api="blas"):  # the user's own setting
        with one_blas_thread():
            assert set(_blas_threads()) == {1}
            with one_blas_thread():  # nested: still one, and the outer keeps it
                assert set(_blas_threads()) == {1}
            assert set(_blas_threads()) == {1}

            def inner(_):  # worker threads inside a body: one BLAS thread too
                with one_blas_thread():
                    return set(_blas_threads())

            assert map_ordered(inner, range(4), threads=4) == [{1}] * 4
        assert set(_blas_threads()) == {3}
        # Overlapping bodies in several threads, ending in another order than they began:
        # none leaves the setting changed.
        barrier = threading.Barrier(4)

        def body(i):
            with one_blas_thread():
                barrier.wait()
                time.sleep(0.01 * (4 - i))

        map_ordered(body, range(4), threads=4)
        assert set(_blas_threads()) == {3}
        # The statistics run their blocks under it, and leave the setting as it was.
        import irmetrics.stats as ist

        seen = []
        real = ist._common.map_in_runs

        def spy(fn, items, **kw):
            seen.append(set(_blas_threads()))
            return real(fn, items, **kw)

        ist._common.map_in_runs = spy
        try:
            ist.paired_test(np.arange(8.0), np.arange(8.0)[::-1], test="bootstrap",
                            n_resamples=50, threads=2)
        finally:
            ist._common.map_in_runs = real
        assert seen and all(s == {1} for s in seen)
        assert set(_blas_threads()) == {3}
