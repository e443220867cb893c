"""Every core, the same bytes: the one place that decides how many threads run, and how.

Every heavy road of irmetrics (the file road's chunks, the cells of a grid, the blocks of a
resampling test) cuts its work into pieces that do not depend on the number of threads, runs
them here, and joins the results in a fixed order. ``threads=1`` and ``threads=64`` therefore
give the same numbers, bit for bit; only the wall time changes.

The thread count is resolved once per call by :func:`resolve_threads`:

* ``threads=None`` (the default everywhere) means every core this process may run on: its
  CPU affinity (``os.sched_getaffinity``), not the machine's count, so a job pinned to 4 of
  64 cores by a scheduler uses 4. The environment variable ``IRMETRICS_THREADS`` overrides
  that default (a positive integer), for clusters that pin nothing.
* ``threads=1`` is fully sequential: the work runs in the caller's thread, no helper thread
  is started.
* anything else must be an integer from 1 to :data:`MAX_THREADS`.

Threads (not processes) are the unit: numpy, polars and the parsers release the interpreter
lock for their heavy steps, and threads share the qrels' encoded tables without copying.

>>> resolve_threads(1)
1
>>> map_ordered(lambda x: x * x, [1, 2, 3], threads=2)
[1, 4, 9]
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
import warnings
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from irmetrics.checks import check_int, parameter_error

if TYPE_CHECKING:
    from concurrent.futures import Future

__all__ = [
    "MAX_THREADS",
    "THREADS_ENV",
    "available_cores",
    "resolve_threads",
    "map_ordered",
    "map_ordered_warnings",
    "imap_ordered",
    "block_generators",
    "block_seeds",
    "block_root",
    "block_generator",
    "one_blas_thread",
    "split_threads",
    "MIN_THREAD_WORK",
    "RUNS_PER_THREAD",
    "threads_for_work",
    "item_runs",
    "map_in_runs",
]

#: The largest thread count accepted: more is a typo, not a machine.
MAX_THREADS = 1024


def _pool(workers: int):
    """A thread pool of ``workers`` threads. concurrent.futures (3 ms of imports:
    logging, queue) is imported here, by the first road that runs threads, not by every
    importer of this module (the drop-ins' dict road runs on one)."""
    import concurrent.futures

    return concurrent.futures.ThreadPoolExecutor(max_workers=workers)

#: Environment variable that sets the default thread count (``threads=None``).
THREADS_ENV = "IRMETRICS_THREADS"

T = TypeVar("T")
R = TypeVar("R")


def available_cores() -> int:
    """The number of cores this process may run on.

    Returns
    -------
    int
        ``len(os.sched_getaffinity(0))`` where the platform has it (Linux: the affinity
        mask a scheduler or ``taskset`` set), else ``os.cpu_count()``; at least 1.

    Examples
    --------
    >>> available_cores() >= 1
    True
    """
    try:
        count = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # macOS, Windows: no affinity mask
        count = os.cpu_count() or 1
    return max(1, count)


def resolve_threads(threads: Any = None) -> int:
    """The thread count a call runs with: the one rule every road and option shares.

    Parameters
    ----------
    threads : int or None
        ``None``: the environment variable ``IRMETRICS_THREADS`` when set, else
        :func:`available_cores`. Otherwise an integer from 1 to :data:`MAX_THREADS`
        (``True``/``False`` and floats are refused).

    Returns
    -------
    int
        The thread count, ``1 <= n <= MAX_THREADS``.

    Raises
    ------
    irmetrics.exceptions.ParameterError
        ``threads`` (or ``IRMETRICS_THREADS``) is not an integer from 1 to 1024.

    Examples
    --------
    >>> resolve_threads(4)
    4
    >>> resolve_threads(0)
    Traceback (most recent call last):
    ...
    irmetrics.exceptions.ParameterError: `threads` must be an integer between 1 and 1024; got 0.
    """
    if threads is None:
        env = os.environ.get(THREADS_ENV, "").strip()
        if not env:
            return min(available_cores(), MAX_THREADS)
        try:
            threads = int(env)
        except ValueError:
            raise parameter_error(THREADS_ENV, "an integer between 1 and 1024", env) from None
        name = THREADS_ENV
    else:
        name = "threads"
    return check_int(name, threads, min=1, max=MAX_THREADS)


def map_ordered(fn: Callable[[T], R], items: Iterable[T], *, threads: int | None = None) -> list[R]:
    """``[fn(item) for item in items]`` on ``threads`` threads, results in item order.

    The calling thread is one of the ``threads``: it and ``threads - 1`` helper threads
    each take the next item not yet taken until none is left (no queue, no future per
    item: an item of a millisecond costs a few microseconds to hand out, and the caller
    does not sit idle while the helpers work). Every item runs, even when one fails, so that no piece of work is left half done in the
    background; then the exception of the *first* failing item (in item order, not in time
    order) is raised, so the error a user sees does not depend on the thread count.

    Parameters
    ----------
    fn : callable
        Called once per item; must be safe to run in several threads at once.
    items : iterable
        The pieces of work; consumed at once.
    threads : int or None
        See :func:`resolve_threads`. With 1 (or a single item) everything runs in the
        caller's thread.

    Returns
    -------
    list
        ``fn(item)`` for each item, in the order of ``items``.

    Examples
    --------
    >>> map_ordered(str.upper, ["a", "b"], threads=1)
    ['A', 'B']
    """
    items = list(items)
    n = resolve_threads(threads)
    if n == 1 or len(items) <= 1:
        return [fn(item) for item in items]
    return _pulled(fn, items, min(n, len(items)))


def map_ordered_warnings(fn: Callable[[T], R], items: Iterable[T], *,
                         threads: int | None = None,
                         ignore: tuple[type[Warning], ...] = ()) -> list[R]:
    """:func:`map_ordered`, with the warnings of each item issued in item order.

    Warnings raised in worker threads would reach the caller in the order the threads
    happen to run, and ``warnings.catch_warnings`` (which silences or records them) is
    not thread-safe. Here every warning an item raises is held, then issued again after
    the work, item by item in item order, through the caller's filters: the caller sees
    the same warnings in the same order for any thread count. When an item fails, the
    warnings of the items before it and its own are issued, then its exception raised
    (as a sequential loop would have left it).

    Calls nest: an item may itself call :func:`map_ordered_warnings`, whose warnings then
    count as that item's. While a call runs, the process' warning filters let everything
    through to it (a warning of another thread is shown unfiltered); one call at a time
    per process, besides nested ones.

    Parameters
    ----------
    fn, items, threads
        As for :func:`map_ordered`; ``fn`` must not use ``warnings.catch_warnings``.
    ignore : tuple of Warning classes
        Categories dropped instead of issued (what the caller would have silenced
        around each item).

    Returns
    -------
    list
        ``fn(item)`` for each item, in the order of ``items``.

    Examples
    --------
    >>> def check(x):
    ...     if x < 0:
    ...         warnings.warn(f"{x} is negative")
    ...     return abs(x)
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     map_ordered_warnings(check, [-1, 2, -3], threads=2)
    [1, 2, 3]
    >>> [str(w.message) for w in caught]
    ['-1 is negative', '-3 is negative']
    """
    items = list(items)
    held: list[list[tuple]] = [[] for _ in items]
    failed: list[int] = []

    def call(index: int) -> R:
        outer = getattr(_ITEM, "held", None)
        _ITEM.held = held[index]
        try:
            return fn(items[index])
        except BaseException:
            failed.append(index)
            raise
        finally:
            _ITEM.held = outer

    def issue() -> None:
        last = min(failed) if failed else len(items) - 1
        for message, category, filename, lineno in (w for item in held[:last + 1] for w in item):
            if not issubclass(category, ignore):
                warnings.warn_explicit(message, category, filename, lineno)

    if getattr(_ITEM, "held", None) is not None:
        # Called from an item of an outer call: its hook is in place, and what this call
        # issues at the end lands, in order, in that item's warnings.
        try:
            return map_ordered(call, range(len(items)), threads=threads)
        finally:
            issue()
    try:
        with warnings.catch_warnings():
            shown = warnings.showwarning

            def hold(message, category, filename, lineno, file=None, line=None):
                into = getattr(_ITEM, "held", None)
                if into is None:  # not from an item (another thread): shown as usual
                    shown(message, category, filename, lineno, file, line)
                else:
                    into.append((message, category, filename, lineno))

            warnings.simplefilter("always")  # the caller's filters apply when issued again
            warnings.showwarning = hold
            return map_ordered(call, range(len(items)), threads=threads)
    finally:
        issue()


def _pulled(fn: Callable[[T], R], items: list[T], n: int) -> list[R]:
    """:func:`map_ordered` on ``n >= 2`` threads: the caller and ``n - 1`` helpers."""
    results: list[Any] = [None] * len(items)
    failed: dict[int, BaseException] = {}
    lock = threading.Lock()
    state = {"next": 0, "stop": False}

    def work() -> None:
        while True:
            with lock:
                index = state["next"]
                if state["stop"] or index >= len(items):
                    return
                state["next"] = index + 1
            try:
                results[index] = fn(items[index])
            except BaseException as error:  # kept: raised in item order, after the rest
                failed[index] = error
                if not isinstance(error, Exception):  # an interrupt: take no more items
                    state["stop"] = True

    helpers = [threading.Thread(target=work, name=f"irmetrics-{k}", daemon=True)
               for k in range(1, n)]
    for helper in helpers:
        helper.start()
    try:
        work()
        for helper in helpers:
            helper.join()
    except BaseException:  # interrupted here: hand out no more items, wait for the rest
        state["stop"] = True
        for helper in helpers:
            helper.join()
        raise
    interrupts = [i for i, error in failed.items() if not isinstance(error, Exception)]
    if failed:
        raise failed[min(interrupts or failed)]
    return results


#: The warnings of the item of :func:`map_ordered_warnings` this thread is running.
_ITEM = threading.local()


def imap_ordered(fn: Callable[[T], R], items: Iterable[T], *,
                 threads: int | None = None, ahead: int | None = None) -> Iterator[R]:
    """Lazily ``fn(item)`` for each item, on ``threads`` threads, yielded in item order.

    At most ``ahead`` items are in flight at once (submitted and not yet yielded), so
    memory stays bounded by ``ahead`` results whatever the length of ``items``: this is
    the streaming form of :func:`map_ordered`, for chunks of a file. ``items`` is read in
    the caller's thread only. When a result raises, the items still in flight are finished
    (their results dropped) before the exception propagates.

    Parameters
    ----------
    fn : callable
        Called once per item, possibly in several threads at once.
    items : iterable
        Consumed lazily, in the caller's thread.
    threads : int or None
        See :func:`resolve_threads`. With 1, each item is computed in the caller's thread
        when it is asked for (no helper thread).
    ahead : int or None
        Items in flight at most; default ``threads + 1`` (one waiting per worker, plus the
        one being consumed).

    Yields
    ------
    object
        ``fn(item)``, in the order of ``items``.

    Examples
    --------
    >>> list(imap_ordered(len, iter(["ab", "c", ""]), threads=2))
    [2, 1, 0]
    """
    n = resolve_threads(threads)
    if n == 1:
        for item in items:
            yield fn(item)
        return
    window = n + 1 if ahead is None else check_int("ahead", ahead, min=1)
    pending: deque[Future[R]] = deque()
    source = iter(items)
    with _pool(n) as pool:
        try:
            for item in source:
                pending.append(pool.submit(fn, item))
                if len(pending) >= window:
                    yield pending.popleft().result()
            while pending:
                yield pending.popleft().result()
        finally:
            for future in pending:  # an error or an abandoned generator: finish, drop
                future.cancel()
            for future in pending:
                if not future.cancelled():
                    future.exception()


def block_seeds(seed: Any, n_blocks: int) -> list[np.random.SeedSequence]:
    """The seed of each block of resamples: ``numpy.random.SeedSequence(seed).spawn(n_blocks)``.

    ``numpy.random.default_rng(block_seeds(seed, n)[i])`` is generator ``i`` of
    :func:`block_generators`, draw for draw. Spawning is cheap and serial; building a
    generator costs about 20 us, so a road with many blocks builds each one in the worker
    that draws the block, off the caller's thread.

    Parameters
    ----------
    seed, n_blocks
        As for :func:`block_generators`.

    Returns
    -------
    list of numpy.random.SeedSequence
        ``n_blocks`` independent seeds.

    Examples
    --------
    >>> seeds = block_seeds(7, 3)
    >>> first = np.random.default_rng(seeds[0]).integers(100)
    >>> bool(first == block_generators(7, 3)[0].integers(100))
    True
    """
    n_blocks = check_int("n_blocks", n_blocks, min=0)
    return block_root(seed).spawn(n_blocks)


def block_root(seed: Any) -> np.random.SeedSequence:
    """The seed that :func:`block_seeds` spawns the blocks' seeds from; with
    :func:`block_generator`, each worker builds its own block's generator, so the caller
    does no per-block work at all (spawning costs about 8 us a block, serially).

    Parameters
    ----------
    seed
        As for :func:`block_generators` (a ``Generator`` advances by one draw).

    Returns
    -------
    numpy.random.SeedSequence

    Examples
    --------
    >>> root = block_root(7)
    >>> bool(block_generator(root, 2).integers(100) == block_generators(7, 3)[2].integers(100))
    True
    """
    if isinstance(seed, np.random.Generator):
        entropy: Any = [int(x) for x in seed.integers(0, 2**32, size=4, dtype=np.uint64)]
    elif seed is None:
        entropy = None
    else:
        entropy = check_int("seed", seed, min=0)
    return np.random.SeedSequence(entropy)


def block_generator(root: np.random.SeedSequence, index: int) -> np.random.Generator:
    """Generator ``index`` of :func:`block_generators`, from its :func:`block_root`:
    ``default_rng(root.spawn(index + 1)[index])``, draw for draw, without spawning the
    ones before it (``SeedSequence.spawn`` gives child ``i`` the spawn key
    ``root.spawn_key + (i,)``). ``root`` must not have spawned children itself.

    Parameters
    ----------
    root : numpy.random.SeedSequence
        From :func:`block_root`.
    index : int
        The block, from 0.

    Returns
    -------
    numpy.random.Generator

    Examples
    --------
    >>> root = block_root(3)
    >>> int(block_generator(root, 0).integers(1000)) == int(block_generators(3, 1)[0].integers(1000))
    True
    """
    return np.random.default_rng(np.random.SeedSequence(
        root.entropy, spawn_key=(*root.spawn_key, index), pool_size=root.pool_size))


def block_generators(seed: Any, n_blocks: int) -> list[np.random.Generator]:
    """One independent random generator per block of resamples, whatever the thread count.

    Resampling statistics cut their resamples into blocks of a fixed size (a function of
    the data and the number of resamples only, never of the thread count) and draw block
    ``i`` from generator ``i``. The generators come from
    ``numpy.random.SeedSequence(seed).spawn(n_blocks)`` (:func:`block_seeds`), so block
    ``i``'s draws are the same whether it runs first, last, or beside other blocks.

    Parameters
    ----------
    seed : int, None or numpy.random.Generator
        A non-negative integer (reproducible), ``None`` (fresh entropy), or a
        ``Generator``, from which one 128-bit seed is drawn (its state advances by that
        draw only).
    n_blocks : int
        How many generators.

    Returns
    -------
    list of numpy.random.Generator
        ``n_blocks`` independent generators.

    Examples
    --------
    >>> a = block_generators(7, 3)
    >>> b = block_generators(7, 3)
    >>> [int(g.integers(100)) for g in a] == [int(g.integers(100)) for g in b]
    True
    """
    return [np.random.default_rng(child) for child in block_seeds(seed, n_blocks)]


@contextlib.contextmanager
def one_blas_thread() -> Iterator[None]:
    """Hold the BLAS library numpy uses to one thread while the body runs.

    The resampling statistics draw their resamples as matrix products of small blocks
    (a few hundred rows each), on ``threads`` threads of their own. A BLAS that also
    starts its own threads for each product (OpenBLAS does, one per core, and spins them
    waiting for work) runs ``threads x cores`` threads on ``cores`` cores: measured on a
    shared 2-core machine, the randomization test over 190 pairs took 14x the CPU and 10x
    the wall time of the same test with one BLAS thread, on one irmetrics thread as on
    two. The numbers do not change (the sums that decide them are exact).

    BLAS has one process-wide setting. The first body to start (in any thread) sets it and
    restores the previous value when it ends, in its own thread (threadpoolctl lets only
    one thread at a time change OpenBLAS); a body that starts while another runs, nested
    or in another thread, changes nothing. So no call leaves the setting changed, and
    bodies that outlive the first may run with the user's BLAS threads again (slower,
    never different).

    Yields
    ------
    None

    Examples
    --------
    >>> with one_blas_thread():
    ...     float(np.ones((2, 3)) @ np.ones(3) @ np.ones(2))
    6.0
    """
    limiter = None
    with _BLAS.lock:
        if not _BLAS.held:
            _BLAS.held = True
            limiter = _blas_controller().limit(limits=1, user_api="blas")
    if limiter is None:
        yield
        return
    try:
        with limiter:  # restores the previous limits here, in the thread that set them
            yield
    finally:
        with _BLAS.lock:
            _BLAS.held = False


class _BlasLimit:
    """Whether a body of :func:`one_blas_thread` holds the BLAS limit now."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.held = False


_BLAS = _BlasLimit()


@functools.lru_cache(maxsize=1)
def _blas_controller() -> Any:
    """The thread pools of the libraries loaded (numpy's BLAS among them), found once."""
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def split_threads(threads: int | None, n_items: int) -> tuple[int, int]:
    """``(outer, inner)``: ``threads`` shared between ``n_items`` pieces run side by side
    (outer) and the threads each piece may use inside (inner), so that nested parallel
    work does not start ``threads**2`` threads. Results never depend on the split.

    >>> split_threads(8, 3)
    (3, 2)
    >>> split_threads(2, 30)
    (2, 1)
    """
    n = resolve_threads(threads)
    outer = max(1, min(n, n_items))
    return outer, max(1, n // outer)


#: The least work (in element operations: a multiply-add, a comparison, a draw) worth a
#: thread of its own. Starting a helper and handing it items costs some 0.1-0.3 ms, and
#: two threads that each hold the interpreter lock for half their time (a statistic's
#: per-block Python) slow each other down: measured on 2 cores, 30-40 ms statistics ran
#: 0.8x on 2 threads. 2**24 operations are about 5-15 ms of numpy on one core.
MIN_THREAD_WORK = 1 << 24


def threads_for_work(threads: int | None, work: float) -> int:
    """The threads a job of ``work`` element operations runs on: :func:`resolve_threads`,
    but no more than one per :data:`MIN_THREAD_WORK` of work, so that a job too small to
    gain from threads runs in the caller's thread alone (never slower than ``threads=1``).
    The rule is the one every road that sizes its work uses; results never depend on it.

    Parameters
    ----------
    threads : int or None
        As for :func:`resolve_threads` (validated even when the job is small).
    work : float
        The job's estimated element operations (for a matrix product ``(r, n) @ (n,
        k)``: ``r * n * k``).

    Returns
    -------
    int
        ``max(1, min(resolve_threads(threads), work // MIN_THREAD_WORK))``.

    Examples
    --------
    >>> threads_for_work(8, 10_000)
    1
    >>> threads_for_work(8, 3 * MIN_THREAD_WORK)
    3
    """
    n = resolve_threads(threads)
    return int(max(1, min(n, work // max(1, MIN_THREAD_WORK))))


#: Runs of items per thread where a road groups its items (:func:`item_runs`): enough
#: for the threads to even out when one is slowed by other work, few enough to cost
#: nothing.
RUNS_PER_THREAD = 4


def item_runs(n_items: int, threads: int | None, most: int | None = None) -> list[range]:
    """``range(n_items)`` cut into consecutive runs, about :data:`RUNS_PER_THREAD` per
    thread (one run on one thread), of at most ``most`` items each: the work units of a
    road whose items (blocks of resamples, groups of columns) are too small to hand out
    one by one. A run's items are the same whatever their grouping, so results do not
    depend on it.

    Parameters
    ----------
    n_items : int
        How many items.
    threads : int or None
        As for :func:`resolve_threads`.
    most : int or None
        The longest run (a road that holds a run's items at once bounds its memory so).

    Returns
    -------
    list of range
        Consecutive, covering ``range(n_items)`` in order; empty when ``n_items`` is 0.

    Examples
    --------
    >>> item_runs(10, 1)
    [range(0, 10)]
    >>> [len(r) for r in item_runs(10, 2)]
    [2, 2, 2, 2, 2]
    >>> [len(r) for r in item_runs(10, 1, most=4)]
    [4, 4, 2]
    """
    n_items = check_int("n_items", n_items, min=0)
    n = resolve_threads(threads)
    per = -(-n_items // (RUNS_PER_THREAD * n)) if n > 1 else n_items
    per = max(1, per if most is None else min(per, check_int("most", most, min=1)))
    return [range(i, min(i + per, n_items)) for i in range(0, n_items, per)]


def map_in_runs(fn: Callable[[int], R], n_items: int, *, threads: int | None = None,
                most: int | None = None, join: Callable[[list[R]], Any] | None = None) -> list:
    """``[fn(i) for i in range(n_items)]``, computed on ``threads`` threads in runs of
    consecutive items (:func:`item_runs`), results in item order; with ``join``,
    ``join([fn(i) for i in run])`` for each run instead, in run order (a road that computes
    at once, in fewer and larger numpy calls, what each item gives alone). Without
    ``join`` the result does not depend on ``threads``.

    Parameters
    ----------
    fn : callable
        Called with each item's index.
    n_items : int
        How many items.
    threads : int or None
        As for :func:`resolve_threads`.
    most : int or None
        The longest run, as for :func:`item_runs`.
    join : callable or None
        Called with each run's results, in order.

    Returns
    -------
    list

    Examples
    --------
    >>> map_in_runs(lambda i: i * i, 5, threads=2)
    [0, 1, 4, 9, 16]
    >>> map_in_runs(lambda i: i, 5, threads=1, most=2, join=sum)
    [1, 5, 4]
    """
    def run_of(run: range) -> list:
        results = [fn(index) for index in run]
        return results if join is None else [join(results)]

    runs = map_ordered(run_of, item_runs(n_items, threads, most), threads=threads)
    return [result for run in runs for result in run]
