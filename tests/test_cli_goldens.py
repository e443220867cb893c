"""``irmetrics eval`` against golden outputs made by the spec-based reference printer.

Goldens live in fixtures/cli/golden/ and are regenerated with
``python tests/cli_goldens.py --regenerate``. A case whose measures are not all
registered yet is an expected failure (strict=False) until they are.
"""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cli_goldens import ALL_TREC, CASES, GOLDEN, RUN_A, cli_argv, golden_path  # noqa: E402
from irmetrics.cli import main
from irmetrics.measures.registry import REGISTRY


def _params():
    out = []
    for case in CASES:
        missing = sorted(set(case.needs) - set(REGISTRY))
        marks = [pytest.mark.xfail(strict=False, reason="measures not registered in this"
                                   f" tree yet: {', '.join(missing)}")] if missing else []
        out.append(pytest.param(case, marks=marks, id=case.name))
    return out


@pytest.mark.parametrize("case", _params())
def test_cli_matches_golden(case, capsys):
    status = main(["eval", *cli_argv(case)])
    out, err = capsys.readouterr()
    assert status == 0, err
    assert out == golden_path(case).read_text()
    assert "Traceback" not in err
    if RUN_A in case.runs and not case.ref.get("complete"):
        # run_a lacks qrels query 4: one warning naming it, per run_a block.
        assert err.count("warning") == 1 and "'4'" in err
    else:
        assert err == ""


def _registered_subset(case):
    """The case's -m list restricted to registered measures (nicknames expanded)."""
    out = []
    for spec in case.measures:
        base = spec.split(".", 1)[0]
        if base == "all_trec":
            out += [m for m in ALL_TREC if m in REGISTRY]
        elif base in REGISTRY or base == "official":
            out.append(spec)
    return out


@pytest.mark.parametrize("case", [c for c in CASES if set(c.needs) - set(REGISTRY)],
                         ids=lambda c: c.name)
def test_registered_part_of_golden(case, capsys):
    """Until every measure of a case is registered, the lines of the registered ones
    must already equal the golden's lines for those names, in the same order."""
    argv = [a for a in case.argv if a != "-m" and a not in case.measures]
    for spec in _registered_subset(case):
        argv += ["-m", spec]
    files = cli_argv(case)[len(case.argv):]
    assert main(["eval", *argv, *files]) == 0
    out = capsys.readouterr().out
    printed = {line.split("\t")[0].strip() for line in out.splitlines()}
    golden = [line for line in golden_path(case).read_text().splitlines(keepends=True)
              if line.split("\t")[0].strip() in printed]
    assert out == "".join(golden)
    assert len(printed) > 3


def test_every_golden_file_belongs_to_a_case():
    assert {p.stem for p in GOLDEN.glob("*.txt")} == {c.name for c in CASES}


@pytest.mark.parametrize("spelling", [
    ["-q", "-c", "-M100"],
    ["-qcM100"],
    ["-qc", "-M", "100"],
    ["--query_eval_wanted", "--comp", "--Max=100"],
    ["--que", "-c", "--Max_retrieved_per_topic", "100"],
])
def test_getopt_spellings_of_the_same_options(spelling, capsys):
    """GNU getopt: attached/separate arguments, combined flags, long-option prefixes,
    options after the file names."""
    case = next(c for c in CASES if c.name == "c_M100")
    files = cli_argv(case)[-2:]
    for argv in (spelling + files, files + spelling, files[:1] + spelling + files[1:]):
        assert main(["eval", *argv]) == 0
        assert capsys.readouterr().out == golden_path(case).read_text()
