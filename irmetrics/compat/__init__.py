"""Drop-in replacements for other libraries' evaluation APIs, computed by irmetrics.

Each module mirrors one library's public signatures, takes numpy arrays (or any
object with ``__array__``, e.g. CPU tensors) and returns numpy arrays or Python
numbers; none imports torch or TensorFlow.
"""
