"""A callable that cannot take the corpus' two arguments is refused before any case runs."""
import re

import pytest

from irmetrics.cli import main
from irmetrics.conformance import check
from irmetrics.exceptions import ParameterError


def one_argument(x):
    return 0.5


def keyword_only(*, ranking, labels):
    return 0.5


@pytest.mark.parametrize("fn", [one_argument, keyword_only])
@pytest.mark.parametrize("kind,arguments", [("ids", "(ranking, labels)"),
                                            ("arrays", "(labels, scores)"),
                                            ("dicts", "(qrels, run)")])
def test_wrong_signature_is_a_clear_error(fn, kind, arguments):
    # Without the check every case "raises" and the report reads as a convention
    # (empty_ranking = raises), which blames the measure for a calling mistake.
    expected = (f"`fn` must take two positional arguments {arguments} for input='{kind}';"
                f" got '{fn.__name__}' with signature")
    with pytest.raises(ParameterError, match="^" + re.escape(expected)):
        check(fn, "AP", input=kind)


def test_defaults_and_varargs_are_accepted():
    assert check(lambda *args: 0.0, "P@3").conforms is False
    assert check(lambda a, b, c=1: 0.0, "P@3").conforms is False


def calls_sys_exit(ranking, labels):
    raise SystemExit(3)


def test_a_callable_that_calls_sys_exit_is_a_finding(tmp_path, monkeypatch, capsys):
    # it ended `irmetrics conform` with the callable's status and not a word printed
    report = check(calls_sys_exit, "AP")
    assert not report.conforms and "raises (SystemExit: '3')" in str(report)
    (tmp_path / "exiting.py").write_text("def fn(ranking, labels):\n    raise SystemExit(3)\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["conform", "-m", "AP", "exiting:fn"]) == 1
    assert "raises (SystemExit: '3')" in capsys.readouterr().out
