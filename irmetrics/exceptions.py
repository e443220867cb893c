"""Placeholder until the io branch lands (same names)."""


class IrMetricsError(Exception):
    pass


class InputFormatError(IrMetricsError, ValueError):
    pass


class DuplicateEntryError(InputFormatError):
    pass


class UnknownMeasureError(IrMetricsError, ValueError):
    def __init__(self, message, suggestions=()):
        super().__init__(message)
        self.suggestions = list(suggestions)


class ParameterError(IrMetricsError, ValueError):
    pass


class ShapeError(IrMetricsError, ValueError):
    pass
