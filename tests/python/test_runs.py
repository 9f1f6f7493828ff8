"""Runs from Python: train with a progress callback, load, translate (attention as numpy),
saliency, gradient flow, eval, bleu, and the explorer shown inline."""

import numpy as np
import pytest

import seqgrad


def test_train_reports_progress_and_returns_the_run(small_run):
    records = small_run.progress_records
    # a record every train.log_every = 10 steps of the 2 epochs of 38 batches
    assert [r["step"] for r in records] == list(range(10, 76, 10))
    assert records[-1]["total_steps"] == 76
    assert records[-1]["loss"] < records[0]["loss"]
    assert small_run.summary["steps"] == 76 and not small_run.summary["interrupted"]
    assert small_run.config["model"]["hidden_size"] == 48


def test_translate_gives_hypotheses_scores_and_attention(small_run):
    t = small_run.translate("march 3, 2001", beam=3, nbest=2)
    assert len(t.nbest) == 2 and t.nbest[0].score >= t.nbest[1].score
    assert t.source_tokens[-1] == "<eos>"
    a = t.attention
    assert isinstance(a, np.ndarray) and a.dtype == np.float32
    assert a.shape == (len(t.nbest[0].tokens), len(t.source_tokens))
    np.testing.assert_allclose(a.sum(1), 1, rtol=1e-5)
    many = small_run.translate(["1 jan 1999", "december 25, 2020"], beam=1)
    assert len(many) == 2 and all(isinstance(x.text, str) for x in many)
    with pytest.raises(ValueError, match="nbest"):
        small_run.translate("1 jan 1999", beam=2, nbest=3)


def test_saliency_gradflow_and_eval(small_run):
    s = small_run.saliency("march 3, 2001", method="grad_norm")
    assert s["saliency"].shape == s["attention"].shape
    assert (s["saliency"] >= 0).all() and s["saliency"].sum() > 0
    with pytest.raises(ValueError, match="integrated_gradients"):
        small_run.saliency("march 3, 2001", method="no_such_method")
    flow = small_run.gradflow("march 3, 2001")
    assert len(flow["embedding"]) == len(s["source_tokens"])
    result = small_run.eval(metrics="bleu,chrf", limit=20)
    assert set(result["scores"]) == {"bleu", "chrf"}
    assert 0 <= result["exact_match"] <= 100 and result["sentences"] == 20
    again = seqgrad.load_run(small_run.run_dir)
    assert again.translate("march 3, 2001").text == small_run.translate("march 3, 2001").text


def test_bleu_matches_sacrebleu_on_a_known_pair():
    hyp = ["the cat sat on the mat"]
    assert seqgrad.bleu(hyp, ["the cat sat on the mat"]).score == pytest.approx(100)
    score = seqgrad.bleu(["the cat is on the mat"], ["the cat sat on the mat"])
    assert 0 < score.score < 100 and len(score.precisions) == 4
    with pytest.raises(ValueError, match="1.*2|2.*1"):
        seqgrad.bleu(hyp, ["a", "b"])


def test_explore_is_shown_inline_in_an_iframe(small_run, tmp_path):
    page = seqgrad.explore(small_run, limit=3, gradients=False)
    assert page.html.startswith("<!DOCTYPE html>")
    inline = page._repr_html_()
    assert inline.startswith("<iframe srcdoc=\"") and "</script>" not in inline
    path = page.save(str(tmp_path / "explore.html"))
    assert open(path, encoding="utf-8").read() == page.html
