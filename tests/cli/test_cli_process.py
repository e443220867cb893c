"""The command line's own process: ``python -m irmetrics`` and the console script
(``irmetrics.__main__.main``) hold OpenBLAS to one thread unless the user says otherwise,
and the output is the same bytes either way."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BLAS_VARIABLES = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")

#: Runs the command line as the console script does, then reports the BLAS setting the
#: process ended with: the variable, and OpenBLAS's thread count where numpy uses it.
PROBE = """\
import json, os, sys
{before}
sys.argv = ["irmetrics", *sys.argv[1:]]
import irmetrics.__main__
status = irmetrics.__main__.main()
from threadpoolctl import threadpool_info
pools = [p["num_threads"] for p in threadpool_info() if p["internal_api"] == "openblas"]
sys.stderr.write("PROBE" + json.dumps([status, os.environ.get("OPENBLAS_NUM_THREADS"), pools]))
"""


def _probe(tmp_path, env_extra: dict, before: str = "") -> tuple[bytes, list]:
    (tmp_path / "qrels").write_text("q1 0 a 1\nq1 0 b 0\n")
    (tmp_path / "run").write_text("q1 Q0 b 1 2.0 r\nq1 Q0 a 2 1.0 r\n")
    env = {k: v for k, v in os.environ.items() if k not in BLAS_VARIABLES}
    env.update(env_extra, PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-c", PROBE.format(before=before), "eval", "-q",
                           "-m", "map", str(tmp_path / "qrels"), str(tmp_path / "run")],
                          capture_output=True, env=env, cwd=tmp_path, timeout=120)
    return done.stdout, json.loads(done.stderr.decode().rsplit("PROBE", 1)[1])


def test_one_blas_thread_by_default_and_the_users_setting_kept(tmp_path):
    out, (status, variable, pools) = _probe(tmp_path, {})
    assert status == 0 and variable == "1"
    assert all(n == 1 for n in pools)
    for name in BLAS_VARIABLES:  # any of OpenBLAS's variables is the user's say
        same, (status, variable, _) = _probe(tmp_path, {name: "2"})
        assert status == 0 and same == out
        assert variable == ("2" if name == "OPENBLAS_NUM_THREADS" else None)
    # numpy loaded before: setting the variable would change nothing, so it is not set
    same, (_, variable, _) = _probe(tmp_path, {}, before="import numpy")
    assert same == out and variable is None
    assert out.split()[-1] == b"0.5000"  # map of b (non-relevant) then a (relevant)


def test_the_console_script_is_the_process_entry():
    text = (ROOT / "pyproject.toml").read_text()
    assert 'irmetrics = "irmetrics.__main__:main"' in text
