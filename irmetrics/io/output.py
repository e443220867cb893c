"""Writing an output file safely: never over an input, never half a file.

:func:`write_text` is what every output path of irmetrics goes through (``irmetrics
compare -o``, :meth:`Comparison.to_html`): it refuses a path that names one of the inputs
(the same file, through any link), and writes a regular file atomically -- the text goes
to a temporary file beside it, which then replaces the target in one step -- so that a
failed or interrupted write leaves the old file (or none), never a truncated one.
"""

from __future__ import annotations

import os
import tempfile

from ..checks import parameter_error


def same_file(path, other) -> bool:
    """Whether ``path`` and ``other`` name one existing file (links followed).

    Parameters
    ----------
    path, other : str or os.PathLike
        Anything else (``None``, a file object) names no file.

    Returns
    -------
    bool
        False when either does not exist or cannot be compared.

    Examples
    --------
    >>> import os, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> path = os.path.join(folder, "a.run")
    >>> with open(path, "w") as f:
    ...     _ = f.write("q1 Q0 d1 1 1.0 x\\n")
    >>> same_file(os.path.join(folder, ".", "a.run"), path)
    True
    >>> same_file(os.path.join(folder, "b.run"), path), same_file(None, path)
    (False, False)
    >>> import shutil; shutil.rmtree(folder)
    """
    try:
        return os.path.samefile(os.fspath(path), os.fspath(other))
    except (OSError, TypeError, ValueError):
        return False


def check_not_input(name: str, path, inputs) -> None:
    """Refuse an output ``path`` that is one of ``inputs`` (:func:`same_file`).

    Parameters
    ----------
    name : str
        How the caller calls the path, for the message (``"-o"``, ``"path"``).
    path : str or os.PathLike
        The output file.
    inputs : dict of str to path
        ``{description: path}`` of what was read; ``"-"`` (standard input) and values
        that are not paths are never the output.

    Raises
    ------
    ParameterError
        ``path`` names the same file as one of ``inputs``.

    Examples
    --------
    >>> import os, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> run = os.path.join(folder, "a.run")
    >>> with open(run, "w") as f:
    ...     _ = f.write("q1 Q0 d1 1 1.0 x\\n")
    >>> check_not_input("-o", os.path.join(folder, "out.txt"), {"run 'a.run'": run, "qrels": "-"})
    >>> check_not_input("-o", os.path.join(folder, ".", "a.run"), {"run 'a.run'": run})
    Traceback (most recent call last):
    ...
    irmetrics.exceptions.ParameterError: `-o` must be a file other than the inputs (it is run 'a.run', which would be overwritten); got '...a.run'.
    >>> import shutil; shutil.rmtree(folder)
    """
    for what, source in inputs.items():
        if isinstance(source, (str, os.PathLike)) and os.fspath(source) != "-" \
                and same_file(path, source):
            raise parameter_error(name, f"a file other than the inputs (it is {what}, which"
                                  " would be overwritten)", os.fspath(path))


def file_inputs(what: str, named: dict) -> dict:
    """``{"<what> 'name'": path}`` of the named inputs read from a file: the paths, and
    readers that name theirs (``.source``); standard input (``-``) is no file. What an
    output must never overwrite (:func:`check_not_input`).

    Examples
    --------
    >>> file_inputs("run", {"a": "a.run", "b": {"q1": {"d1": 1.0}}, "c": "-"})
    {"run 'a'": 'a.run'}
    """
    found = {}
    for name, value in named.items():
        path = value if isinstance(value, (str, os.PathLike)) else getattr(value, "source", None)
        if isinstance(path, (str, os.PathLike)) and os.fspath(path) != "-":
            found[f"{what} {name!r}"] = path
    return found


def write_text(path, text: str, *, name: str = "path", inputs=None) -> None:
    """Write ``text`` (UTF-8, ``\\n`` line ends) to ``path``, atomically when it is (or
    will be) a regular file; refuse when it is one of ``inputs``.

    Parameters
    ----------
    path : str or os.PathLike
    text : str
    name : str
        How the caller calls the path, for the error message (``"-o"``, ``"path"``).
    inputs : dict of str to path, optional
        What was read, ``{description: path}``; writing over one of them is refused.

    Raises
    ------
    ParameterError
        ``path`` is one of the inputs.
    OSError
        The file cannot be written (the old file, if any, is left as it was).

    Examples
    --------
    >>> import os, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> source = os.path.join(folder, "a.run")
    >>> write_text(source, "q1 Q0 d1 1 1.0 x\\n")
    >>> write_text(source, "table", name="-o", inputs={"run 'a.run'": source})
    Traceback (most recent call last):
    ...
    irmetrics.exceptions.ParameterError: `-o` must be a file other than the inputs (it is run 'a.run', which would be overwritten); got '...a.run'.
    """
    check_not_input(name, path, inputs or {})
    target = os.path.realpath(os.fspath(path))  # through a link, to the file it names
    data = text.encode("utf-8")
    if os.path.isfile(target) and not os.access(target, os.W_OK):
        # Replacing would succeed in a writable folder; a read-only file says "keep me".
        raise PermissionError(13, "Permission denied (the file is read-only)", os.fspath(path))
    if os.path.exists(target) and not os.path.isfile(target):
        # A device or pipe (/dev/stdout, a FIFO) cannot be replaced: write into it.
        with open(target, "wb") as handle:
            handle.write(data)
        return
    folder = os.path.dirname(target) or "."
    mode = (os.stat(target).st_mode & 0o7777 if os.path.exists(target)
            else 0o666 & ~_umask())
    try:
        descriptor, temporary = tempfile.mkstemp(dir=folder, suffix=".tmp",
                                                 prefix=f".{os.path.basename(target)}.")
    except OSError as exc:  # name the file asked for, not the temporary one
        raise type(exc)(exc.errno, exc.strerror, os.fspath(path)) from None
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, target)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


def _umask() -> int:
    """The process umask (read by setting it, then set back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


__all__ = ["check_not_input", "file_inputs", "same_file", "write_text"]
