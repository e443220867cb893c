"""The engine: pack() orders and labels runs into RankedLists; segment primitives and
gain tables are the building blocks every measure kernel uses; knn is the one exact
k-nearest-neighbour search (from_embeddings and the metric-learning drop-ins)."""
