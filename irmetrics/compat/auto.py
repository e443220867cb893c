"""``import irmetrics.compat.auto``: install the drop-ins named in ``IRMETRICS_DROPINS``.

``IRMETRICS_DROPINS=pytrec_eval,ir_measures`` (or unset, or ``all``: both). From then on
``import pytrec_eval`` and ``import ir_measures`` give irmetrics' drop-ins
(:func:`irmetrics.compat.install`); a library already imported is refused with
:class:`~irmetrics.exceptions.AlreadyImportedError`.
"""

from __future__ import annotations

from .switch import install, names_from_environment

__all__: list[str] = []

install(*names_from_environment())
