"""pytest setup: import seqgrad from the build tree (BUILD/python, BUILD from SEQGRAD_BUILD,
default build/) unless it is installed; one small date run shared by the run tests."""

import os
import sys
import tempfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("SEQGRAD_BUILD", os.path.join(ROOT, "build"))
sys.path.insert(0, os.path.join(BUILD, "python"))


# A date model small enough to train in a few seconds on 2 cores: it need not be good, only a
# real run (config, vocabularies, checkpoints, metrics) for the run API.
SMALL_DATES = {
    "data": {"task": "dates", "tokenizer": "char", "lowercase": True, "dates_train": 1200,
             "dates_valid": 100, "dates_test": 60, "max_source_len": 40, "max_target_len": 12},
    "model": {"embedding_size": 16, "hidden_size": 48, "attention": "bahdanau",
              "attention_size": 32},
    "train": {"batch_size": 32, "epochs": 2, "lr": 0.004, "log_every": 10, "patience": 0,
              "max_valid_decode": 100},
    "decode": {"max_length": 12},
    "output": {"explore": 0},
}


@pytest.fixture(scope="session")
def small_run():
    import seqgrad
    folder = tempfile.mkdtemp(prefix="seqgrad_pytest_")
    records = []
    run = seqgrad.train(SMALL_DATES, progress=records.append,
                        **{"output.run_dir": os.path.join(folder, "dates")})
    run.progress_records = records
    return run
