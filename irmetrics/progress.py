"""Progress of long evaluations on stderr: bytes or rows read, queries done, rate, time left.

The bounded-memory roads (:mod:`irmetrics.engine.stream`: plain TREC run files, Parquet and
Arrow IPC files, LazyFrames) report to a :class:`Progress`; :func:`progress_for` makes one
from the ``progress=`` option of :func:`irmetrics.evaluate` and
:class:`irmetrics.Evaluator`:

* ``False`` (the API's default): nothing is shown;
* ``"auto"`` (the CLI's default, ``--quiet`` turns it off): a bar on stderr when stderr is
  a terminal, nothing in a pipe, a file or a CI log;
* ``True``: a bar on stderr wherever it goes (a notebook, a log file).

A bar appears only once the work has taken :data:`DELAY` seconds, so small evaluations
print nothing, and it is cleared when the work ends. The bars are tqdm's (imported only
when one is shown); reader threads only record numbers, and every call into tqdm holds
one lock.
"""

from __future__ import annotations

import os
import sys
import threading
import time

from .checks import parameter_error

__all__ = ["Progress", "progress_for", "check_progress", "is_terminal"]

#: Seconds before a bar appears: evaluations shorter than this print nothing.
DELAY = 1.0
#: Seconds between two redraws of a bar.
MININTERVAL = 0.2

#: The values ``progress=`` accepts.
CHOICES = (False, True, "auto")


class Progress:
    """One bar at a time on stderr, for the phases of one evaluation.

    :meth:`phase` starts a bar (``unit="B"``: bytes of a file; ``"rows"``: rows of a
    table; ``"partitions"``); :meth:`read_to` moves it to a byte position, :meth:`rows`
    and :meth:`queries` count rows and queries done (shown after the bar). Safe to call
    from the reader threads: every update holds one lock.
    """

    enabled = True

    def __init__(self, stream=None):
        self._stream = stream
        self._lock = threading.Lock()
        self._bar = None
        self._unit = "B"
        self._rows = self._queries = 0

    def phase(self, description: str, *, total: int | None = None, unit: str = "B") -> None:
        """Close the current bar and start one for ``description`` (``total`` in ``unit``;
        None when unknown: then the count and rate are shown, without time left)."""
        from tqdm import tqdm  # a core dependency, imported only when a bar is shown

        stream = self._stream if self._stream is not None else sys.stderr
        # A terminal that reports no width (a pseudo-terminal nobody sized, as under
        # `script`) gets a fixed size; tqdm would draw nothing in zero rows or columns.
        width = {"dynamic_ncols": True} if _columns(stream) > 1 else {"ncols": 100, "nrows": 24}
        with self._lock:
            self._close()
            self._last = (total, unit)
            self._unit, self._rows, self._queries = unit, 0, 0
            self._bar = tqdm(total=total, desc=description, unit=unit, file=stream,
                             unit_scale=unit != "partitions",
                             unit_divisor=1024 if unit == "B" else 1000,
                             delay=DELAY, mininterval=MININTERVAL, leave=False,
                             smoothing=0.1, **width)

    def again(self, description: str) -> None:
        """Start a bar for ``description`` with the total and unit of the last phase (the
        same input read a second time)."""
        total, unit = getattr(self, "_last", (None, "B"))
        self.phase(description, total=total, unit=unit)

    def read_to(self, position: int) -> None:
        """The current phase has read ``position`` bytes of its file."""
        with self._lock:
            if self._bar is not None and self._unit == "B" and position > self._bar.n:
                self._bar.update(position - self._bar.n)

    def rows(self, n: int) -> None:
        """``n`` more rows (lines of a run) were read."""
        with self._lock:
            self._rows += n
            if self._bar is not None:
                self._postfix()
                if self._unit == "rows":
                    self._bar.update(n)

    def step(self, n: int = 1) -> None:
        """``n`` more units of a phase counted in whole steps (``unit="partitions"``)."""
        with self._lock:
            if self._bar is not None:
                self._bar.update(n)

    def queries(self, n: int) -> None:
        """``n`` more queries were evaluated."""
        with self._lock:
            self._queries += n
            if self._bar is not None:
                self._postfix()

    def _postfix(self) -> None:
        lines = f", {self._rows:,} lines" if self._unit == "B" else ""
        # Redrawn as tqdm would on an update: after DELAY, at most every MININTERVAL.
        now, bar = time.time(), self._bar
        draw = now - bar.start_t >= DELAY and now - bar.last_print_t >= MININTERVAL
        bar.set_postfix_str(f"{self._queries:,} queries{lines}", refresh=draw)

    def close(self) -> None:
        """Clear the bar (the work is done or failed)."""
        with self._lock:
            self._close()

    def _close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


class NoProgress(Progress):
    """A :class:`Progress` that shows nothing (``progress=False``, or not a terminal)."""

    enabled = False

    def __init__(self):
        pass

    def phase(self, description, *, total=None, unit="B") -> None:
        pass

    def again(self, description) -> None:
        pass

    def read_to(self, position) -> None:
        pass

    def rows(self, n) -> None:
        pass

    def step(self, n=1) -> None:
        pass

    def queries(self, n) -> None:
        pass

    def close(self) -> None:
        pass


#: The shared do-nothing instance.
NO_PROGRESS = NoProgress()


def check_progress(progress) -> None:
    """Refuse a ``progress=`` value other than False, True or ``"auto"``."""
    if not any(progress is c or (isinstance(c, str) and progress == c) for c in CHOICES):
        raise parameter_error("progress", "False, True or 'auto'", progress)


def progress_for(progress) -> Progress:
    """The :class:`Progress` that ``progress=`` asks for: a bar on stderr when True, or
    when ``"auto"`` and stderr is a terminal; else :data:`NO_PROGRESS`.

    Examples
    --------
    >>> progress_for(False).enabled
    False
    >>> import io, contextlib
    >>> with contextlib.redirect_stderr(io.StringIO()):   # not a terminal
    ...     progress_for("auto").enabled
    False
    """
    check_progress(progress)
    if progress is True or (progress == "auto" and is_terminal(sys.stderr)):
        return Progress()
    return NO_PROGRESS


def _columns(stream) -> int:
    """The width of the terminal ``stream`` writes to (0 when unknown)."""
    try:
        return os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, ValueError, OSError):
        return 0


def is_terminal(stream) -> bool:
    """Whether ``stream`` is a terminal (False for files, pipes and captured streams)."""
    try:
        return bool(stream.isatty()) and os.environ.get("TERM") != "dumb"
    except (AttributeError, ValueError, OSError):
        return False
