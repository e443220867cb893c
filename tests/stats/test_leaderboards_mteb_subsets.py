"""MTEB result files of multilingual tasks: a benchmark averages only its own subsets.

MTEB's published files (embeddings-benchmark/results) hold every subset a model was run
on; MTEB(eng, v2) takes only ``"en-en"`` of STS17. Files of the same shape, written here.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from irmetrics import leaderboards as lb

# (model folder, {hf_subset: main_score}) for STS17; ArguAna has one "default" subset
STS17 = {"org__a": {"en-en": 0.9, "de-de": 0.1, "ko-ko": 0.2},
         "org__b": {"en-en": 0.5, "de-de": 0.8, "ko-ko": 0.9},
         "org__c": {"de-de": 0.7, "ko-ko": 0.7}}  # run without the English subset
ARGUANA = {"org__a": 0.4, "org__b": 0.6, "org__c": 0.5}


def _write(root, model, task, subsets):
    folder = root / "results" / model / "0123abcd"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "model_meta.json").write_text(json.dumps(
        {"name": model.replace("__", "/"), "revision": "0123abcd"}))
    scores = {"test": [{"hf_subset": name, "languages": ["eng-Latn"], "main_score": value}
                       for name, value in subsets.items()]}
    (folder / f"{task}.json").write_text(json.dumps(
        {"dataset_revision": "x", "task_name": task, "evaluation_time": None,
         "mteb_version": "1.38.0", "scores": scores}))


@pytest.fixture
def results(tmp_path):
    for model, subsets in STS17.items():
        _write(tmp_path, model, "STS17", subsets)
        _write(tmp_path, model, "ArguAna", {"default": ARGUANA[model]})
    return tmp_path / "results"


def test_subsets_pick_the_benchmarks_subset(results):
    everything = lb.from_mteb(results)
    sts = everything.scores[everything.tasks.index("STS17")][0]
    # without `subsets`: the mean over all of a model's subsets
    assert sts[everything.systems.index("org/a")] == pytest.approx(0.4)
    english = lb.from_mteb(results, subsets={"STS17": ["en-en"]})
    assert english.systems == ["org/a", "org/b"]
    assert english.left_out["systems"] == [("org/c", ["STS17"])]
    np.testing.assert_allclose(english.scores[english.tasks.index("STS17")][0], [0.9, 0.5])
    np.testing.assert_allclose(english.scores[english.tasks.index("ArguAna")][0], [0.4, 0.6])
    # the mean of task means flips with the subsets: b leads on all subsets, a on English
    mean = {s: lb.summary_table(x).sort("mean_task", descending=True)["system"][0]
            for s, x in [("all", everything), ("en", english)]}
    assert mean == {"all": "org/b", "en": "org/a"}


def test_subsets_average_several_and_ignore_other_tasks(results):
    b = lb.from_mteb(results, subsets={"STS17": ["de-de", "ko-ko"], "Other": ["x"]})
    assert b.systems == ["org/a", "org/b", "org/c"]
    np.testing.assert_allclose(b.scores[b.tasks.index("STS17")][0], [0.15, 0.85, 0.7])
    assert lb.from_mteb(results, subsets={"STS17": []}).tasks == ["ArguAna"]
