"""The file road's tie fix-up against the rule written as one sort.

The file road orders a chunk by score alone and then puts in doc-id order only the tie
groups whose entries carry different relevance codes (engine/stream.py). Here runs are
dense with tied scores, and their doc ids sort differently as bytes than as text or
numbers (``"Z" < "a"``, ``"a" < "ab"``, ``"é"`` after ``"z"``, ``"d10" < "d9"``), with
graded, negative and unjudged labels; the road must give the codes of
``pack(read_run(...))``, which orders every tie group (tests/engine/test_ordering_roads.py
checks it against ``rank_order``, the rule as one sort), on 1 and 4 threads and with
chunks cut anywhere. Planted bugs (doc ids ascending; no fix-up at all) fail it.
"""

from __future__ import annotations

import tempfile

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from irmetrics.engine.pack import encode_qrels, pack
from irmetrics.engine.stream import encode_qrels_file, pack_run_file
from irmetrics.io.trec import read_qrels, read_run
from tests._file_road import plain_chunk_bytes, write_texts

#: Doc ids whose byte order is neither their text order nor their numeric order.
DOC_IDS = ("a", "ab", "abc", "b", "Z", "z", "é", "éa", "ä", "d9", "d10", "d100", "0", "00",
           "A", "a0", "~", "ÿ", "中", "中文")


@st.composite
def tied_runs(draw):
    """Qrels and run text whose queries rank their documents with few distinct scores."""
    queries = [f"q{i}" for i in range(draw(st.integers(1, 4)))]
    qrels, lines = [], []
    for q in queries:
        docs = draw(st.lists(st.sampled_from(DOC_IDS), unique=True, min_size=1,
                             max_size=len(DOC_IDS)))
        for d in docs:
            label = draw(st.sampled_from([None, None, -1, 0, 1, 2]))
            if label is not None:
                qrels.append(f"{q} 0 {d} {label}\n")
        # descending scores with long runs of ties (what systems write), or any order
        scores = sorted((draw(st.sampled_from([0.5, 1.0, 2.0])) for _ in docs), reverse=True) \
            if draw(st.booleans()) else [draw(st.sampled_from([0.5, 1.0, 2.0])) for _ in docs]
        lines += [f"{q} Q0 {d} {rank} {s} run\n" for rank, (d, s) in enumerate(zip(docs, scores))]
    if not qrels:
        qrels.append(f"{queries[0]} 0 a 1\n")
    return "".join(qrels), "".join(lines)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=tied_runs(), threads=st.sampled_from([1, 4]),
       chunk_bytes=st.sampled_from([1, 30, 200, 0]))
def test_tie_fixup_gives_the_full_sort(data, threads, chunk_bytes):
    qrels_text, run_text = data
    with tempfile.TemporaryDirectory() as tmp:
        qrels_path, run_path = write_texts(tmp, qrels=qrels_text, run=run_text)
        full = pack(encode_qrels(read_qrels(qrels_path).df), read_run(run_path).df)
        with plain_chunk_bytes(chunk_bytes):
            road = pack_run_file(encode_qrels_file(qrels_path, threads=threads), run_path,
                                 threads=threads)
    assert road is not None  # plain UTF-8 text, one block per query: the file road
    assert road.query_ids.tolist() == full.query_ids.tolist()
    assert road.offsets.tolist() == full.offsets.tolist()
    assert road.code.tolist() == full.code.tolist()
