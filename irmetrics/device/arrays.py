"""Which arrays live on a device, and how they move: detection without importing torch.

An array's library is read from ``type(x).__module__`` (``torch``, ``cupy``, ...), then
from ``__array_namespace__`` (the array API standard); where it lives, from
``x.device`` (torch) or ``__dlpack_device__`` (DLPack). torch is imported only once a
torch tensor (or ``backend="torch"``) is in hand; CuPy arrays reach torch through
DLPack, without a copy.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from ..exceptions import ParameterError, ShapeError, brief_repr

#: ``backend`` values of the adapters that have a device road: ``"auto"`` takes it for
#: arrays on a device (GPU) and keeps numpy's zero-copy road for host arrays;
#: ``"torch"`` takes it whatever the arrays (CPU tensors and numpy arrays included:
#: the same code as on a GPU, for tests); ``"numpy"`` copies device arrays to the host.
BACKENDS = ("auto", "numpy", "torch")

#: DLPack device type of host memory (``kDLCPU``); any other type is a device.
_DLPACK_CPU = 1

_INSTALL_HINT = 'the device road needs torch: pip install "irmetrics-exact[torch]"'


def array_library(value) -> str | None:
    """Top-level module of the library that made ``value`` (``"numpy"``, ``"torch"``,
    ``"cupy"``, ...), or None for plain Python objects.

    Examples
    --------
    >>> array_library(np.zeros(2)), array_library([1.0])
    ('numpy', None)
    """
    if isinstance(value, np.ndarray):
        return "numpy"
    module: str | None = type(value).__module__.split(".")[0]
    if module in ("builtins", "__main__"):
        module = None
    if module is None and hasattr(value, "__array_namespace__"):
        try:
            module = value.__array_namespace__().__name__.split(".")[0]
        except (AttributeError, TypeError, ValueError, RuntimeError):  # a broken namespace
            module = None
    return module


def on_device(value) -> bool:
    """Whether ``value`` lives where numpy cannot read it (a GPU, MPS, ...).

    torch tensors say it through ``.device``, CuPy arrays always are, other arrays
    through DLPack's ``__dlpack_device__``. numpy arrays, lists and host tensors are not.

    Examples
    --------
    >>> on_device(np.zeros(3)), on_device([1, 2])
    (False, False)
    """
    library = array_library(value)
    if library in (None, "numpy"):
        return False
    if library == "torch":
        return getattr(getattr(value, "device", None), "type", "cpu") != "cpu"
    if library == "cupy":
        return True
    where = getattr(value, "__dlpack_device__", None)
    if where is None:
        return False
    try:
        return int(where()[0]) != _DLPACK_CPU
    except (AttributeError, TypeError, ValueError, RuntimeError, BufferError):
        return False  # no DLPack device: numpy's own intake decides


def wants_device(backend: str, *arrays) -> bool:
    """Whether an adapter takes the device road for ``arrays`` under ``backend``."""
    if backend == "torch":
        return True
    if backend == "auto":
        return any(on_device(a) for a in arrays if a is not None)
    return False


def import_torch():
    """torch, or ImportError with the install hint."""
    try:
        import torch
    except ImportError as exc:
        raise ImportError(_INSTALL_HINT) from exc
    return torch


def as_tensor(value, name: str, *, like=None, integers: bool = False):
    """``value`` as a torch tensor, never copied on its device when it is one already.

    torch tensors are detached (never modified); CuPy and other DLPack device arrays
    go through ``torch.from_dlpack``; host arrays become CPU tensors (zero copy for
    writable numpy arrays), or move to ``like``'s device when it is given. Complex
    values are refused in the host checks' words (``integers``: labels, ids).
    """
    torch = import_torch()
    if isinstance(value, torch.Tensor):
        tensor = value.detach()
    elif on_device(value):
        try:
            tensor = torch.from_dlpack(value)
        except Exception as exc:
            raise ParameterError(f"`{name}` must be a torch tensor or an array torch reads "
                                 f"through DLPack; got {type(value).__name__} ({exc}).") from exc
    else:
        array = as_array(value, name)  # objects, iterators, ragged lists: the host's words
        if array.dtype.kind not in "biuf":  # text, dates, ...: as the host's checks say it
            if integers:
                raise ParameterError(f"`{name}` must hold integers; got dtype {array.dtype}.")
            if array.dtype.kind in "US" and array.size:
                raise text_error(name, array.reshape(-1))
            raise ParameterError(f"`{name}` must hold real numbers; got dtype {array.dtype}.")
        if not array.flags.writeable or not array.flags.c_contiguous:
            array = np.array(array)  # torch wants writable memory; ours is never written
        tensor = torch.from_numpy(array)
    if tensor.is_complex():
        dtype = str(tensor.dtype).removeprefix("torch.")  # the numpy road's words
        kind = "integers" if integers else "real numbers"
        raise ParameterError(f"`{name}` must hold {kind}; got dtype {dtype}.")
    if like is not None and tensor.device != like.device:
        if tensor.device.type != "cpu":
            raise ParameterError(f"`{name}` must be on the device of the other arrays "
                                 f"({like.device}); got {tensor.device}.")
        tensor = tensor.to(like.device)
    return tensor


def to_host(value, name: str) -> np.ndarray:
    """A device array copied to a numpy array (torch tensors detached; dtypes numpy lacks,
    such as bfloat16, widened exactly to float32 first).

    Raises
    ------
    ParameterError
        One line, for an array that neither torch nor CuPy nor DLPack can bring to the
        host.
    """
    library = array_library(value)
    try:
        if library == "torch":
            tensor = value.detach()
            if tensor.is_floating_point() and tensor.dtype.itemsize < 4 and \
                    str(tensor.dtype) != "torch.float16":
                tensor = tensor.float()  # bfloat16, float8: numpy has no such dtype
            return tensor.cpu().numpy()
        if library == "cupy":
            return value.get()
        return np.from_dlpack(value, device="cpu", copy=True)
    except Exception as exc:
        raise ParameterError(f"`{name}` must be readable on the CPU; got "
                             f"{type(value).__name__}, which could not be copied there "
                             f"({type(exc).__name__}: {exc}).") from exc


def wide_integers(torch, tensor, host_check):
    """A uint64 tensor as int64 (torch has few uint64 kernels); values beyond int64 (they
    turn negative) are left to ``host_check``, the host's check of the same input,
    which raises its own message (it may pass: padding the host ignores)."""
    wide = tensor.to(torch.int64)
    if wide.numel() and bool((wide < 0).any()):
        host_check()
    return wide


def compute_dtype(torch, tensor):
    """The dtype the device computes in: float32 for float16/bfloat16/float32 inputs
    (their widening is exact), float64 for float64, integer and bool inputs, except on
    MPS (no float64 there: float32, with its rounding counted in the bound)."""
    if tensor.dtype == torch.float64 or not tensor.is_floating_point():
        return torch.float32 if tensor.device.type == "mps" else torch.float64
    return torch.float32


def matmul_rounding(torch, dtype, device) -> float:
    """Relative rounding of each input of a float32 matrix product on ``device`` under
    torch's current settings: 0 for IEEE float32 ("highest"), ``2**-10`` where TF32 may
    be used ("high", ``allow_tf32``: 10 stored bits, truncation allowed) and ``2**-7``
    where bfloat16 may be ("medium"; oneDNN on CPUs)."""
    if dtype != torch.float32:
        return 0.0
    modes = {str(torch.get_float32_matmul_precision())}
    backends = getattr(torch, "backends", None)
    for path in (("cuda", "matmul"), ("mkldnn", "matmul"), ("mkldnn",), ()):
        node = backends
        for part in path:
            node = getattr(node, part, None)
        modes.add(str(getattr(node, "fp32_precision", "")))
    if device.type == "cuda" and getattr(torch.backends.cuda.matmul, "allow_tf32", False):
        modes.add("tf32")
    if modes & {"medium", "bf16"}:
        return 2.0**-7
    if modes & {"high", "tf32"}:
        return 2.0**-10
    return 0.0


def as_array(value, name: str, *, allow_object: bool = False) -> np.ndarray:
    """``value`` as a numpy array, reading tensors through DLPack without importing them.

    Parameters
    ----------
    value : array_like, or an object with ``__dlpack__`` or ``__array__``
    name : str
        Parameter name used in error messages.
    allow_object : bool, default False
        Accept an object array (e.g. labels given as Python objects).

    Returns
    -------
    numpy.ndarray
        Shares memory with ``value`` where possible; callers must not write to it.

    Raises
    ------
    ParameterError
        ``value`` is ``None``, lives on a device that cannot copy it to the host, or holds
        objects that are not numbers (an iterator, text).
    ShapeError
        ``value`` is a ragged nested sequence.
    """
    if isinstance(value, np.ndarray):
        return value
    if value is None:
        raise ParameterError(f"`{name}` must be an array; got None.")
    if on_device(value):  # a GPU array: one copy to the host (adapters with a device
        return to_host(value, name)  # road take it before reaching here)
    if hasattr(value, "__dlpack__"):
        try:
            return np.from_dlpack(value)
        except (BufferError, TypeError, RuntimeError, ValueError) as exc:
            if array_library(value) == "torch":  # requires grad, or bfloat16: detach, widen
                return to_host(value, name)
            if not hasattr(value, "__array__"):
                raise ParameterError(
                    f"`{name}` must be readable on the CPU (for a tensor: "
                    f"tensor.detach().cpu()); got {type(value).__name__} ({exc})."
                ) from exc
    try:
        array = np.asarray(value)
    except ValueError as exc:  # ragged nested lists
        raise ShapeError(f"`{name}` must be a rectangular array; got a ragged sequence.") from exc
    except (RuntimeError, TypeError) as exc:  # e.g. a tensor that requires grad
        raise ParameterError(
            f"`{name}` must be convertible to a numpy array (for a tensor: "
            f"tensor.detach().cpu()); got {type(value).__name__} ({exc})."
        ) from exc
    if array.dtype == object and not allow_object:
        raise object_error(name, value, array)
    return array


def object_error(name: str, value, array: np.ndarray) -> Exception:
    """Why ``value`` became an object array: an iterator or other single object, text,
    rows of different lengths, or objects that are not numbers."""
    if array.ndim == 0:
        if isinstance(value, Iterator):
            return ParameterError(f"`{name}` must be an array or a list; got a"
                                  f" {type(value).__name__}, an iterator (pass list(...) or"
                                  " numpy.fromiter(...))")
        return ParameterError(f"`{name}` must be an array or a list; got {type(value).__name__}.")
    flat = array.reshape(-1)
    if len(flat) and all(isinstance(x, (str, bytes)) for x in flat[:1000]):
        return text_error(name, flat)
    if any(isinstance(x, (list, tuple, np.ndarray)) for x in flat[:1000]):
        return ShapeError(f"`{name}` must be a rectangular numeric array; got a ragged"
                          " sequence (rows of different lengths).")
    numbers = (int, float, np.number, bool, np.bool_)
    index = next((i for i, x in enumerate(flat) if not isinstance(x, numbers)), 0)
    where = tuple(int(i) for i in np.unravel_index(index, array.shape))
    return ParameterError(f"`{name}` must hold real numbers; got {brief_repr(flat[index])}"
                          f" ({type(flat[index]).__name__}) at index {where}.")


def text_error(name: str, flat: np.ndarray) -> ParameterError:
    example = brief_repr(flat[0].item() if isinstance(flat[0], np.generic) else flat[0])
    return ParameterError(f"`{name}` must hold real numbers; got text (e.g. {example}):"
                          " convert it first, e.g. numpy.asarray(values, dtype=float).")
