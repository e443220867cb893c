"""The one-line switch: ``import pytrec_eval`` and ``import ir_measures`` resolve to
irmetrics' drop-ins, inside other people's code, without touching it.

One mechanism behind three doors:

* :func:`install` / :func:`uninstall`, called before the caller imports the library;
* ``import irmetrics.compat.auto``, which calls :func:`install` with the libraries named
  in the environment variable ``IRMETRICS_DROPINS`` (:data:`ENVIRONMENT_VARIABLE`;
  comma-separated; unset or ``all``: both);
* ``python -m irmetrics.compat.run [--only NAMES] MODULE|SCRIPT [ARGS ...]``
  (:mod:`irmetrics.compat.run`), which installs and then runs a module as ``-m`` would
  (``python -m irmetrics.compat.run pytest tests/``) or a script.

The mechanism is a finder first on :data:`sys.meta_path` that answers for the library's
name and every submodule of it: ``pytrec_eval`` is :mod:`irmetrics.compat.pytrec_eval`;
``ir_measures`` is :mod:`irmetrics.compat.ir_measures`, ``ir_measures.measures``,
``.providers`` and ``.util`` its modules of those names, and the submodules of
ir_measures 0.4.3's ``measures`` and ``providers`` packages (``ir_measures.measures.base``,
``ir_measures.providers.pytrec_eval_provider``, ...) the drop-in's ``measures`` and
``providers`` modules, which define all their public names. Another submodule is not
found (``ModuleNotFoundError`` naming it).

A library already imported is refused (:class:`~irmetrics.exceptions.AlreadyImportedError`):
its callers may hold its objects (an evaluator, measure objects, a provider registry) that
would mix with the drop-in's. Install first: at the top of ``conftest.py``, through
``irmetrics.compat.auto`` or the runner.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
import types
from collections.abc import Iterable, Sequence

from ..checks import parameter_error, parameter_type_error
from ..exceptions import AlreadyImportedError

__all__ = ["DROPINS", "ENVIRONMENT_VARIABLE", "install", "installed", "names_from_environment",
           "uninstall"]

#: The libraries that can be switched, and the drop-in module of each.
DROPINS = {"pytrec_eval": "irmetrics.compat.pytrec_eval",
           "ir_measures": "irmetrics.compat.ir_measures"}

#: The environment variable ``irmetrics.compat.auto`` reads.
ENVIRONMENT_VARIABLE = "IRMETRICS_DROPINS"

#: ir_measures 0.4.3's packages whose submodules are one drop-in module each (the
#: submodules' public names are all in it), and those submodules.
_FOLDED = {
    "ir_measures.measures": ("irmetrics.compat.ir_measures.measures", (
        "accuracy", "ap", "base", "bpm", "bpref", "compat", "diversity", "err", "infap",
        "inst", "iprec", "judged", "ndcg", "nerr", "numq", "numrel", "numret", "p", "r",
        "rbp", "rprec", "rr", "sdcg", "set_measures", "success")),
    "ir_measures.providers": ("irmetrics.compat.ir_measures.providers", (
        "accuracy_provider", "base", "compat_provider", "cwl_eval", "fallback_provider",
        "gdeval_provider", "judged_provider", "msmarco_provider", "pyndeval_provider",
        "pytrec_eval_provider", "ranx_provider", "runtime_provider", "trectools_provider")),
}


def _target(fullname: str) -> str | None:
    """The drop-in module that answers for ``fullname``, or None."""
    top, _, rest = fullname.partition(".")
    if top not in _Finder.active:
        return None
    if not rest:
        return DROPINS[top]
    parent, _, leaf = fullname.rpartition(".")
    if parent in _FOLDED and leaf in _FOLDED[parent][1]:
        return _FOLDED[parent][0]
    return f"{DROPINS[top]}.{rest}"


class _Loader(importlib.abc.Loader):
    """Puts the drop-in module itself in ``sys.modules`` under the library's name (the
    import system returns what is there after ``exec_module``), so the drop-in keeps its
    own ``__name__`` and ``__spec__``."""

    def __init__(self, target: str):
        self.target = target

    def create_module(self, spec):
        return None  # a placeholder module, replaced in exec_module

    def exec_module(self, module: types.ModuleType) -> None:
        name = module.__name__
        real = importlib.import_module(self.target)
        sys.modules[name] = real
        if name in _FOLDED:  # a package of ir_measures whose submodules are this module
            for leaf in _FOLDED[name][1]:
                sys.modules.setdefault(f"{name}.{leaf}", real)


class _Finder(importlib.abc.MetaPathFinder):
    """Answers for the switched libraries' names; ``active`` holds them."""

    active: set[str] = set()

    def find_spec(self, fullname, path=None, target=None):
        module = _target(fullname)
        if module is None:
            return None
        try:
            if importlib.util.find_spec(module) is None:
                return None
        except ModuleNotFoundError:  # below a drop-in module that is no package
            return None
        return importlib.machinery.ModuleSpec(fullname, _Loader(module))


_FINDER = _Finder()


def _check_names(names: Sequence[str], default: Iterable[str]) -> list[str]:
    chosen = list(names) or list(default)
    for name in chosen:
        if not isinstance(name, str):  # install(["pytrec_eval"]): a list is unhashable
            raise parameter_type_error(
                "names", "library names given as separate strings, e.g."
                " install('pytrec_eval', 'ir_measures')", name)
        if name not in DROPINS:
            raise parameter_error("names", f"among {sorted(DROPINS)}", name)
    return chosen


def _is_dropin(module) -> bool:
    return getattr(module, "__name__", "").startswith("irmetrics.compat.")


def install(*names: str) -> None:
    """Make ``import NAME`` (and its submodules) give irmetrics' drop-in for each of
    ``names`` (default: ``"pytrec_eval"`` and ``"ir_measures"``), for the whole process.

    Parameters
    ----------
    *names : str
        ``"pytrec_eval"``, ``"ir_measures"`` (:data:`DROPINS`). Installing again is
        harmless.

    Raises
    ------
    AlreadyImportedError
        The real library (or one of its submodules) is already imported; nothing is
        installed then.
    ParameterError
        A name that is not in :data:`DROPINS`.

    Examples
    --------
    >>> import sys
    >>> from irmetrics.compat import install, installed, uninstall
    >>> if "pytrec_eval" not in sys.modules:  # the real library not imported yet
    ...     install("pytrec_eval")
    ...     import pytrec_eval
    ...     print(pytrec_eval.__name__, installed())
    ...     uninstall()
    ... else:
    ...     print("irmetrics.compat.pytrec_eval ['pytrec_eval']")
    irmetrics.compat.pytrec_eval ['pytrec_eval']
    """
    chosen = _check_names(names, DROPINS)
    for name in chosen:
        held = [key for key, module in sys.modules.items()
                if (key == name or key.startswith(f"{name}.")) and not _is_dropin(module)]
        if held:
            raise AlreadyImportedError(
                f"cannot install irmetrics' drop-in as {name!r}: the real {name} is already"
                f" imported ({held[0]!r}), and its callers may hold its objects; install"
                " before anything imports it (first lines of the program or conftest.py,"
                " `import irmetrics.compat.auto`, or `python -m irmetrics.compat.run`).",
                name=name)
    _Finder.active.update(chosen)
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)


def uninstall(*names: str) -> None:
    """Undo :func:`install` for ``names`` (default: all installed): later imports find
    the real library again; the drop-in modules under the library's names leave
    ``sys.modules`` (objects already handed out keep working).

    Examples
    --------
    >>> from irmetrics.compat import uninstall, installed
    >>> uninstall(); installed()
    []
    """
    for name in _check_names(names, sorted(_Finder.active) or DROPINS):
        _Finder.active.discard(name)
        for key in [k for k, m in sys.modules.items()
                    if (k == name or k.startswith(f"{name}.")) and _is_dropin(m)]:
            del sys.modules[key]
    if not _Finder.active and _FINDER in sys.meta_path:
        sys.meta_path.remove(_FINDER)


def installed() -> list[str]:
    """The libraries whose names give irmetrics' drop-ins now, sorted.

    Examples
    --------
    >>> from irmetrics.compat import installed
    >>> isinstance(installed(), list)
    True
    """
    return sorted(_Finder.active)


def names_from_environment(environ=None) -> list[str]:
    """The libraries named in ``IRMETRICS_DROPINS`` (comma-separated; unset, empty or
    ``all``: every one in :data:`DROPINS`).

    Examples
    --------
    >>> from irmetrics.compat.switch import names_from_environment
    >>> names_from_environment({"IRMETRICS_DROPINS": "pytrec_eval"})
    ['pytrec_eval']
    >>> names_from_environment({})
    ['pytrec_eval', 'ir_measures']
    """
    value = (os.environ if environ is None else environ).get(ENVIRONMENT_VARIABLE, "")
    names = [n.strip() for n in value.split(",") if n.strip()]
    if names in ([], ["all"]):
        return list(DROPINS)
    for name in names:
        if name not in DROPINS:
            raise parameter_error(ENVIRONMENT_VARIABLE, f"'all' or names among {sorted(DROPINS)}"
                                  " separated by commas", value)
    return names
