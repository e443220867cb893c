"""Drop-in replacements for other libraries' evaluation APIs, computed by irmetrics.

Each module mirrors one library's public signatures, takes numpy arrays (or any
object with ``__array__``, e.g. CPU tensors) and returns numpy arrays or Python
numbers; none imports torch or TensorFlow, except :mod:`.torchmetrics`, whose
classes are real torchmetrics Metrics (tensors in and out) when torch and
torchmetrics are installed, and the numpy API otherwise.
"""
