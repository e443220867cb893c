"""The engine: pack() orders and labels runs into RankedLists; segment primitives and
gain tables are the building blocks every measure kernel uses."""
