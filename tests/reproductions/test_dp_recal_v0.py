"""The v0 experiments of DP-RECAL (reproductions/dp_recal/v0.py): parameters with provenance, Table V reuses
v0 Fig. 4's ring runs, a real run on a tiny covtype file (complete graph, closed-form message counts),
covtype rows say "data not available", Table V's printed numbers beside ours."""

import bz2
import hashlib

import numpy as np
import pandas as pd
import pytest

from dpverify.reproductions.data.datasets import DATA_ENV
from dpverify.reproductions.dp_recal import curves, v0
from dpverify.reproductions.run.experiments import find_experiment

IDS = ("v0-figure-2", "v0-figure-3", "v0-figure-4", "v0-table-5")


@pytest.mark.parametrize("profile", ["quick", "paper"])
def test_configs_load_with_provenance_and_table_5_reuses_the_ring_runs_of_figure_4(profile):
    configs = {i: find_experiment("dp-recal", i).config(profile) for i in IDS}
    for config in configs.values():
        assert all(p.source in ("paper", "default") and p.note for p in config.parameters.values())
        assert config["loss"] == "linear" and config["lasso"] == config["ridge"] == 0.5
    assert configs["v0-figure-4"]["graphs"] == ["ring", "complete"] and configs["v0-table-5"]["graphs"] == ["ring"]
    assert configs["v0-figure-3"]["epsilons"] == [1.0, 5.0, 10.0]
    figure_4 = {t.key: t for t in v0.build_tasks(configs["v0-figure-4"])}
    table_5 = v0.build_tasks(configs["v0-table-5"])
    assert [t.key for t in table_5] == ["dp-recal/v0-figure-4/covtype/ring", "dp-recal/v0-figure-4/mnist-v0/ring"]
    for task in table_5:   # same key, function and parameters: the same content hash, so the cache serves it
        assert task.content_hash(1) == figure_4[task.key].content_hash(1)
    expected = {"quick": (30, 100), "paper": (600, None)}[profile]
    assert (table_5[0].params["plf"], table_5[0].params["samples_per_agent"]) == expected


def _tiny_covtype(directory, rows=64, seed=0):
    rng = np.random.default_rng(seed)
    lines = []
    for _ in range(rows):
        features = " ".join(f"{j}:{v:.3f}" for j, v in zip(range(1, 55), rng.uniform(0, 5, 54)))
        lines.append(f"{rng.choice([1, 2])} {features}")
    path = directory / "covtype.libsvm.binary.bz2"
    path.write_bytes(bz2.compress(("\n".join(lines) + "\n").encode()))
    (directory / "SHA256SUMS").write_text(f"{hashlib.sha256(path.read_bytes()).hexdigest()}  {path.name}\n")


def test_a_run_on_a_tiny_covtype_file_counts_messages_in_closed_form(tmp_path, monkeypatch):
    _tiny_covtype(tmp_path)
    monkeypatch.setenv(DATA_ENV, str(tmp_path))
    results = curves.simulate_dataset(
        np.random.default_rng(0), dataset="covtype", loss="linear", lasso=0.5, ridge=0.5,
        algorithms=["dp-ic-admm-25", "dp-nids-28", "dp-recal"], epsilons=[10.0], plf=5, delta=1e-3, decay=1.05,
        clip=1.0, replicas=2, graph="complete", samples_per_agent=6)
    final = results[results.final]
    assert set(final.graph) == {"complete"} and (final.cpu_seconds > 0).all()
    complete_edges = 8 * 7 // 2
    assert set(final[final.algorithm == "dp-ic-admm-25"].messages) == {5 * 2 * complete_edges}   # 2|E| per iteration
    assert set(final[final.algorithm == "dp-nids-28"].messages) == {5 * 2 * complete_edges}
    recal = final[final.algorithm == "dp-recal"]
    assert (recal.messages == recal.iterations).all() and (recal.plf == 5).all()               # one baton per iteration
    assert recal.iterations.min() >= 5                                                        # PLF 5 needs >= 5 iterations


def test_covtype_rows_say_data_not_available(tmp_path, monkeypatch):
    monkeypatch.setenv(DATA_ENV, str(tmp_path))
    results = curves.simulate_dataset(
        np.random.default_rng(0), dataset="covtype", loss="linear", lasso=0.5, ridge=0.5, algorithms=["dp-recal"],
        epsilons=[10.0], plf=5, delta=1e-3, decay=1.05, clip=1.0, replicas=2, graph="ring")
    assert len(results) == 1 and results.status.iloc[0].startswith("data not available: covtype data not available")
    table = v0.table_5_rows(results)
    assert list(table.algorithm) == ["DP-NIDS", "DP-PG-EXTRA", "DP-IC-ADMM", "DP-RW-ADMM", "DP-RECAL"]
    assert table.note.str.startswith("data not available").all() and list(table.Time_printed) == [55.3, 55.5, 56.5, 53.9, 54.5]


def test_table_5_puts_the_printed_numbers_beside_ours():
    rows = []
    for key, messages, cpu in (("dp-nids-28", 9600.0, 40.0), ("dp-recal", 4000.0, 20.0)):
        for replica in range(4):
            rows.append({"dataset": "mnist-v0", "graph": "ring", "algorithm": key, "replica": replica, "final": True,
                         "status": "ok", "cpu_seconds": cpu, "messages": messages, "plf": 600.0, "accuracy": 0.5,
                         "relative_error": 1e-6 * (replica + 1) if key == "dp-nids-28" else 0.0, "x_star_norm": 0.0})
    table = v0.table_5_rows(pd.DataFrame(rows)).set_index("id")
    nids = table.loc["dp-nids-28"]
    assert nids.cpu_seconds_per_run == 10.0 and nids.Time_relative_difference == pytest.approx(10.0 / 302.6 - 1)
    assert nids.Comm_relative_difference == 0.0 and nids.RE_mean == pytest.approx(2.5e-6)
    assert nids.Acc_as_RE_relative_difference == pytest.approx(2.5e-6 / 8.7e-6 - 1)
    recal = table.loc["dp-recal"]
    assert recal.Comm_relative_difference == pytest.approx(4000 / 4800 - 1) and recal.RE_mean == 0.0
    assert table.loc["dp-extra-27"].note == "not run"
