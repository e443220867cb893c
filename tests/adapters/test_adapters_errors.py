"""Bad adapter input: one clear exception, naming the parameter, for every case."""

import math

import numpy as np
import pytest

from irmetrics.adapters import (as_array, from_embeddings, from_flat, from_match_mask,
                                from_matrix, from_neighbours)
from irmetrics.exceptions import DuplicateEntryError, ParameterError, ShapeError

S = np.array([[0.5, 0.1, 0.3], [0.2, 0.2, 0.9]])
R = np.array([[1, 0, 0], [0, 2, 1]])
E = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])

CASES = [
    # from_matrix
    (from_matrix, (S[0], R[0]), {}, ShapeError, "`scores` must be 2-D"),
    (from_matrix, (S, R[:, :2]), {}, ShapeError, "`relevance` must have the shape of `scores`"),
    (from_matrix, (np.where(S > 0.4, np.nan, S), R), {}, ParameterError, "`scores` must not contain NaN"),
    (from_matrix, (np.where(S > 0.4, -np.inf, S), R), {}, ParameterError, "`scores` must be finite; got -inf at index (0, 0)."),
    (from_matrix, (S, R + 0.5), {}, ParameterError, "`relevance` must hold integers"),
    (from_matrix, (S, R.astype(str)), {}, ParameterError, "`relevance` must hold integers"),
    (from_matrix, (S, R, [3]), {}, ShapeError, "`n` must have shape (2,)"),
    (from_matrix, (S, R, [3, 4]), {}, ParameterError, "`n` must be lengths in [0, 3]; got 4"),
    (from_matrix, (S, R, [-1, 2]), {}, ParameterError, "`n` must be lengths in [0, 3]; got -1"),
    (from_matrix, (S, R), {"k": 0}, ParameterError, "`k` must be a positive integer; got 0."),
    (from_matrix, (S, R), {"query_ids": ["a"]}, ShapeError, "`query_ids` must have length 2"),
    (from_matrix, (S, R), {"query_ids": ["a", "a"]}, ParameterError, "`query_ids` must be distinct"),
    (from_matrix, (S, R), {"doc_ids": ["x", "y z", "w"]}, ParameterError, "without whitespace"),
    (from_matrix, (S, R), {"doc_ids": ["x", "", "w"]}, ParameterError, "`doc_ids` must be non-empty"),
    (from_matrix, ([[0.1, 0.2], [0.3]], [[1, 0], [0]]), {}, ShapeError, "`scores` must be a rectangular"),
    # from_flat
    (from_flat, ([0.1, 0.2], [1, 0, 1], [0, 0, 0]), {}, ShapeError, "`target` must have the shape of `preds`"),
    (from_flat, ([0.1, 0.2], [1, 0], [0]), {}, ShapeError, "`indexes` must have the shape of `preds`"),
    (from_flat, ([0.1, math.nan], [1, 0], [0, 0]), {}, ParameterError, "`preds` must not contain NaN"),
    (from_flat, ([0.1, math.inf], [1, 0], [0, 0]), {}, ParameterError, "`preds` must be finite"),
    (from_flat, ([0.1, 0.2], [1, 0.5], [0, 0]), {}, ParameterError, "`target` must hold integers"),
    (from_flat, ([0.1, 0.2], [1, 0], [0.5, 0]), {}, ParameterError, "`indexes` must hold integers"),
    # from_neighbours
    (from_neighbours, ([[0, 1]], [[0], [1]]), {}, ShapeError, "`gt_ids` must have one row per query (1)"),
    (from_neighbours, ([[0, -1]], [[0]]), {}, ParameterError, "`retrieved_ids` must be non-negative"),
    (from_neighbours, ([[0, 1]], [[5]]), {"doc_ids": ["a", "b"]}, ParameterError, "`gt_ids` must be gallery indices in [0, 2)"),
    (from_neighbours, ([[0, 1, 0]], [[0]]), {}, DuplicateEntryError, "`retrieved_ids` must list each"),
    (from_neighbours, ([[0]], [[2, 2]]), {}, DuplicateEntryError, "`gt_ids` must list each"),
    (from_neighbours, ([[0, 1]], [[0]]), {"scores": [[0.1, 0.5]]}, ParameterError, "`scores` must be non-increasing"),
    (from_neighbours, ([[0, 1]], [[0]]), {"scores": [[0.1]]}, ShapeError, "`scores` must have the layout"),
    (from_neighbours, ([[0, 1]], [[0]]), {"scores": [[0.5, math.nan]]}, ParameterError, "`scores` must not contain NaN"),
    (from_neighbours, ([np.zeros((1, 2), int)], [[0]]), {}, ShapeError, "`retrieved_ids[0]` must be 1-D"),
    (from_neighbours, (np.zeros(3, int), [[0]]), {}, ShapeError, "`retrieved_ids` must be 2-D"),
    # from_match_mask
    (from_match_mask, ([True, False],), {}, ShapeError, "`match_mask` must be 2-D"),
    (from_match_mask, ([[True, False]], [[0.1]]), {}, ShapeError, "`distances` must have the shape"),
    (from_match_mask, ([[True, False]], [[0.1, math.nan]]), {}, ParameterError, "`distances` must not contain NaN"),
    (from_match_mask, ([[True, False]],), {"distance_threshold": 0.5}, ParameterError, "`distances` must be given"),
    (from_match_mask, ([[True, True]],), {"n_relevant": [1]}, ParameterError, "`n_relevant` must be at least the hits"),
    (from_match_mask, ([[True, True]],), {"n_relevant": [1, 2]}, ShapeError, "`n_relevant` must have shape (1,)"),
    (from_match_mask, ([[2, 0]],), {}, ParameterError, "`match_mask` must be boolean"),
    # from_embeddings
    (from_embeddings, (E, [0, 1]), {"k": 1}, ShapeError, "`query_labels` must have shape (3,)"),
    (from_embeddings, (E[0], [0]), {"k": 1}, ShapeError, "`query_embeddings` must be 2-D"),
    (from_embeddings, (E, [0, 1, 0]), {"k": 0}, ParameterError, "`k` must be a positive integer; got 0."),
    (from_embeddings, (E, [0, 1, 0]), {"k": 1, "metric": "manhattan"}, ParameterError, "`metric` must be one of"),
    (from_embeddings, (E, [0, 1, 0]), {"k": 1, "backend": "annoy"}, ParameterError, "`backend` must be one of"),
    (from_embeddings, (E, [0, 1, 0]), {"k": 1, "chunk_size": 0}, ParameterError, "`chunk_size` must be a positive integer; got 0."),
    (from_embeddings, (E, [0, 1, 0], E), {"k": 1}, ParameterError, "`gallery_labels` must be given exactly"),
    (from_embeddings, (E, [0, 1, 0], E[:, :1], [0, 1, 0]), {"k": 1}, ShapeError, "`gallery_embeddings` must have 2 dimensions"),
    (from_embeddings, (np.vstack([E, [[0.0, 0.0]]]), [0, 1, 0, 1]), {"k": 1}, ParameterError, "must be non-zero for metric='cosine'"),
    (from_embeddings, (np.where(E > 0, math.nan, E), [0, 1, 0]), {"k": 1}, ParameterError, "`query_embeddings` must not contain NaN"),
    (from_embeddings, (np.where(E > 0, math.inf, E), [0, 1, 0]), {"k": 1}, ParameterError, "`query_embeddings` must be finite"),
    (from_embeddings, (E * 1e200, [0, 1, 0]), {"k": 1, "metric": "dot"}, ParameterError, "got an overflow"),
    (from_embeddings, (E, [0.0, math.nan, 1.0]), {"k": 1}, ParameterError, "`query_labels` must not contain NaN"),
    (from_embeddings, (E, [0, 1, 0], E, ["a", "b", "c"]), {"k": 1}, ParameterError, "must be comparable"),
]


@pytest.mark.parametrize("func, args, kwargs, error, message", CASES,
                         ids=[f"{c[0].__name__}-{i}" for i, c in enumerate(CASES)])
def test_bad_input_raises(func, args, kwargs, error, message):
    with pytest.raises(error) as info:
        func(*args, **kwargs)
    assert message in str(info.value)
    assert isinstance(info.value, (ValueError, TypeError))


def test_as_array_requires_cpu_readable_tensors():
    class DeviceTensor:  # __dlpack__ that refuses (like a CUDA tensor), no __array__
        def __dlpack__(self, **kw):
            raise BufferError("device not supported")

        def __dlpack_device__(self):
            return (2, 0)

    with pytest.raises(ParameterError, match=r"`scores` must be readable on the CPU"):
        as_array(DeviceTensor(), "scores")
    with pytest.raises(ParameterError, match="`x` must be an array; got None"):
        as_array(None, "x")


def test_as_array_shares_memory_through_dlpack():
    base = np.arange(6.0).reshape(2, 3)

    class DLPackOnly:
        def __dlpack__(self, **kw):
            return base.__dlpack__(**kw)

        def __dlpack_device__(self):
            return base.__dlpack_device__()

    out = as_array(DLPackOnly(), "scores")
    assert out.shape == (2, 3) and np.shares_memory(out, base)


@pytest.mark.parametrize("name", ["irmetrics.adapters._lists", "irmetrics.adapters.matrix",
                                  "irmetrics.adapters.flat", "irmetrics.adapters.neighbours",
                                  "irmetrics.adapters.embeddings"])
def test_docstring_examples(name):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(name))
    assert result.attempted > 0 and result.failed == 0


def test_adapters_reachable_from_the_package():
    import irmetrics as irm

    qrels, run = irm.adapters.from_matrix([[0.5, 0.1]], [[0, 1]])
    assert irm.evaluate(qrels, run, ["recip_rank"]).aggregate()["recip_rank"] == 0.5
