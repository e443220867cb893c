"""benchmarks/bench_file_road.py --yardsticks cuts the run in halves at a query boundary
(issue 33, session 16 review): a query split over both halves would make the two
processes evaluate a query each in part, and an empty half would fail the command. The
cut must hold on ``--messy``'s tabs, CRLF ends and comment lines, a run without a final
newline, and a run whose middle falls in its last query; a one-query run has no halves
and says so."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def load_script():
    spec = importlib.util.spec_from_file_location(
        "bench_file_road", ROOT / "benchmarks" / "bench_file_road.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SCRIPT = load_script()


def run_text(sizes: dict[str, int]) -> bytes:
    return b"".join(f"{q} Q0 d{i} {i + 1} {-i}.5 r\n".encode()
                    for q, n in sizes.items() for i in range(n))


def queries(data: bytes) -> list[bytes]:
    """The query id of each data line, in order (any whitespace, comments skipped)."""
    return [line.split()[0] for line in data.splitlines()
            if line.strip() and not line.startswith(b"#")]


def cut(tmp_path: Path, data: bytes) -> tuple[bytes, bytes]:
    run = tmp_path / "run.txt"
    run.write_bytes(data)
    first, second = (Path(p).read_bytes() for p in SCRIPT.halves(str(run), str(tmp_path)))
    assert first + second == data
    return first, second


def assert_split_at_boundary(first: bytes, second: bytes) -> None:
    assert first and second
    assert not set(queries(first)) & set(queries(second))


@pytest.mark.parametrize("sizes", [
    {"1": 5, "2": 5, "3": 5, "4": 5},
    {"1": 3, "2": 40, "3": 3},          # the middle inside a long query
    {"1": 1, "2": 2},
])
def test_halves_cut_at_a_query_boundary(tmp_path, sizes):
    assert_split_at_boundary(*cut(tmp_path, run_text(sizes)))


def test_halves_of_the_messy_copy_keep_each_query_whole(tmp_path):
    plain = tmp_path / "plain.txt"
    plain.write_bytes(run_text({"1": 3, "2": 20, "3": 3}))  # the middle in "2"
    messy = Path(SCRIPT.messy_copy(str(plain), str(tmp_path)))
    assert b"\t" in messy.read_bytes() and b"\r\n" in messy.read_bytes()
    first, second = cut(tmp_path, messy.read_bytes())
    assert_split_at_boundary(first, second)
    assert second.startswith(b"# query ")  # a query's comment travels with it


def test_halves_when_the_middle_is_in_the_last_query(tmp_path):
    first, second = cut(tmp_path, run_text({"1": 2, "2": 1, "3": 50}))
    assert_split_at_boundary(first, second)
    assert set(queries(second)) == {b"3"}


def test_halves_of_a_run_without_a_final_newline(tmp_path):
    data = run_text({"a": 4, "b": 4, "c": 4}).rstrip(b"\n")
    assert_split_at_boundary(*cut(tmp_path, data))


def test_halves_of_a_one_query_run_say_why_not(tmp_path):
    run = tmp_path / "run.txt"
    run.write_bytes(run_text({"only": 10}))
    with pytest.raises(SystemExit, match="two queries or more"):
        SCRIPT.halves(str(run), str(tmp_path))
