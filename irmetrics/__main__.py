"""``python -m irmetrics`` and the ``irmetrics`` console script: the command line."""

import os
import sys

#: The variables by which a user says how many threads OpenBLAS (the BLAS of numpy's
#: wheels) starts, in the order it reads them.
BLAS_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")


def main() -> int:
    """Run the command line (:func:`irmetrics.cli.main`) in a process of its own."""
    # The command line never wants BLAS's own threads: irmetrics runs its work on its own
    # threads (irmetrics.parallel), and the statistics hold BLAS to one thread anyway
    # (parallel.one_blas_thread). Left to its default, OpenBLAS starts one thread per core
    # when numpy is imported: measured on a 2-core machine, 0.05 s more wall to import
    # numpy and 0.06-0.3 s more CPU in `irmetrics eval`, the same bytes. Only this
    # process is changed, before numpy is loaded, and never against a user's setting.
    if "numpy" not in sys.modules and not any(v in os.environ for v in BLAS_THREAD_VARIABLES):
        os.environ["OPENBLAS_NUM_THREADS"] = "1"
    from .cli import main as cli_main

    return cli_main()


if __name__ == "__main__":
    sys.exit(main())
