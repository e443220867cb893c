"""Progress bars on stderr: shown on a terminal (or when asked), never in a pipe, and the
numbers do not change."""

from __future__ import annotations

import contextlib
import io
import os
import pty
import select
import subprocess
import sys
import warnings
from pathlib import Path

import polars as pl
import pytest

import irmetrics as irm
from irmetrics import progress as progress_module
from irmetrics.exceptions import ParameterError
from irmetrics.containers import trec_text as trec

ROOT = Path(__file__).resolve().parents[2]


class FakeTerminal(io.StringIO):
    """A stderr that says it is a terminal."""

    def isatty(self):
        return True


def write_inputs(tmp_path: Path, *, queries=40, depth=50, split=False):
    """A qrels file and a plain run file (every query one block, or, with ``split``, each
    query's lines in two blocks, which sends the run through the partition road)."""
    qrels, first, second = [], [], []
    for q in range(queries):
        for d in range(0, depth, 3):
            qrels.append(f"q{q} 0 d{d} {(q + d) % 3}\n")
        lines = [f"q{q} Q0 d{d} {d} {depth - d + (q % 7) / 10} run\n" for d in range(depth)]
        first.extend(lines[: depth // 2])
        (second if split else first).extend(lines[depth // 2:])
    (tmp_path / "qrels.txt").write_text("".join(qrels))
    (tmp_path / "run.txt").write_text("".join(first + second))
    return tmp_path / "qrels.txt", tmp_path / "run.txt"


@pytest.fixture
def terminal(monkeypatch):
    """Bars appear at once (no delay); ``with terminal as fake:`` makes stderr a fake
    terminal (inside the test: pytest's capture sets sys.stderr again after fixtures)."""
    monkeypatch.setattr(progress_module, "DELAY", 0.0)
    monkeypatch.setattr(progress_module, "MININTERVAL", 0.0)  # draw every update
    return contextlib.redirect_stderr(FakeTerminal())


def evaluate(qrels, run, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return irm.evaluate(qrels, run, ["map", "P.5", "ndcg_cut.10"], **options)


def test_option_values():
    assert not irm.progress.progress_for(False).enabled
    assert irm.progress.progress_for(True).enabled
    for bad in ("yes", 1, None):
        with pytest.raises(ParameterError, match="`progress` must be False, True or 'auto'"):
            irm.Evaluator({"q": {"d": 1}}, ["map"], progress=bad)


def test_auto_shows_a_bar_on_a_terminal_with_the_same_numbers(tmp_path, terminal):
    qrels, run = write_inputs(tmp_path)
    with terminal as fake:
        shown = evaluate(qrels, run, progress="auto")
    text = fake.getvalue()
    assert "reading qrels.txt" in text and "reading run.txt" in text
    assert "100%" in text and "40 queries" in text and "2,000 lines" in text
    assert text.endswith("\r") or text.endswith("\x1b[A") or "\r" in text  # redrawn in place
    quiet = evaluate(qrels, run)
    assert shown.per_query().equals(quiet.per_query())


def test_default_and_false_print_nothing_even_on_a_terminal(tmp_path, terminal):
    qrels, run = write_inputs(tmp_path)
    with terminal as fake:
        evaluate(qrels, run)
        evaluate(qrels, run, progress=False)
    assert fake.getvalue() == ""


def test_auto_is_silent_when_stderr_is_not_a_terminal(tmp_path, monkeypatch):
    monkeypatch.setattr(progress_module, "DELAY", 0.0)
    qrels, run = write_inputs(tmp_path)
    with contextlib.redirect_stderr(io.StringIO()) as captured:
        evaluate(qrels, run, progress="auto")
    assert captured.getvalue() == ""


def test_split_run_shows_each_phase(tmp_path, terminal, monkeypatch):
    monkeypatch.setattr(trec, "PLAIN_CHUNK_BYTES", 4096)  # several chunks
    qrels, run = write_inputs(tmp_path, split=True)
    with terminal as fake:
        shown = evaluate(qrels, run, progress=True)
    text = fake.getvalue()
    for phase in ("reading run.txt", "partitioning by query", "evaluating partitions"):
        assert phase in text, phase
    assert shown.per_query().equals(evaluate(qrels, run).per_query())


def test_columnar_run_counts_rows(tmp_path, terminal):
    qrels, run = write_inputs(tmp_path)
    frame = irm.Run.read(str(run)).df.select("query_id", "doc_id", "score")
    frame.write_parquet(tmp_path / "run.parquet")
    with terminal as fake:
        shown = evaluate(qrels, tmp_path / "run.parquet", progress=True)
        evaluate(qrels, pl.scan_parquet(tmp_path / "run.parquet"), progress=True)
    text = fake.getvalue()
    assert "reading run.parquet" in text and "/2.00k" in text and "rows" in text
    assert "reading LazyFrame" in text
    assert shown.per_query().equals(evaluate(qrels, run).per_query())


# The CLI in a child process, its stderr a real pseudo-terminal or a pipe.
_CHILD = ("import sys; import irmetrics.progress as p; p.DELAY = p.MININTERVAL = 0.0; "
          "from irmetrics.cli import main; sys.exit(main(sys.argv[1:]))")


def _child_env():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(Path(irm.__file__).resolve().parent.parent), os.environ.get("PYTHONPATH", "")]))
    env["TERM"] = "xterm"
    return env


def _cli_on_a_terminal(*args) -> tuple[int, str]:
    """Run the CLI with stderr on a pseudo-terminal; return (status, what the terminal got)."""
    controller, terminal = pty.openpty()
    child = subprocess.Popen([sys.executable, "-c", _CHILD, *args], stdout=subprocess.PIPE,
                             stderr=terminal, env=_child_env())
    os.close(terminal)
    shown = b""
    while True:
        ready, _, _ = select.select([controller], [], [], 60)
        if not ready:
            break
        try:
            data = os.read(controller, 65536)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        shown += data
    child.stdout.read()
    status = child.wait(timeout=60)
    os.close(controller)
    return status, shown.decode("utf-8", "replace")


def test_cli_shows_progress_on_a_terminal_and_quiet_silences_it(tmp_path):
    qrels, run = write_inputs(tmp_path)
    status, shown = _cli_on_a_terminal("eval", "-m", "map", str(qrels), str(run))
    assert status == 0 and "reading run.txt" in shown and "queries" in shown
    status, shown = _cli_on_a_terminal("eval", "--quiet", "-m", "map", str(qrels), str(run))
    assert status == 0 and shown == ""


def test_cli_prints_no_progress_into_a_pipe(tmp_path):
    qrels, run = write_inputs(tmp_path)
    done = subprocess.run([sys.executable, "-c", _CHILD, "eval", "-m", "map", str(qrels),
                           str(run)], capture_output=True, text=True, env=_child_env(),
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stderr == "" and done.stdout.startswith("map")
