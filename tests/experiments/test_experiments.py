"""Paper reproductions: the quick version of each runs, and its numbers bear out the paper's
qualitative claims (checked here on the tables, independently of the results' own claim list)."""

import json
import re
import subprocess
import sys
import time

import numpy as np
import pytest

from conftest import ROOT
from core import InputError
from core.data.dataset import Dataset
from experiments import EXPERIMENTS, experiment_figures, load_experiments, run_experiment, save_result
from experiments.tables import (BASE_PROTOCOL, PAPER_WINE, PROTOCOL_VARIATIONS, UCI_RULE, _alpha_features, _combination_label,
                                     _protocol_turns, _setting_label)
from core.selection.sparsity import sparsity_gap
from core.validation import zscores


load_experiments()
_CACHE, _WALL = {}, {}
#: The reproductions whose quick run takes seconds to a minute on a 2-core machine: their tests
#: are in the slow tier (``-m slow``), which CI runs after the README's test command
#: (docs/testing.md); the others (each under a second) stay in the README's command.
HEAVY = {"ar_faces", "ar_faces_automatic", "face_sets_label_free", "uci_side", "uci_sensitivity", "unsupervised_benchmark",
         "weston_svm", "slda_pixels"}
slow = pytest.mark.slow


def quick(name, **options):
    """Each quick experiment runs once per test session (its wall time, measured around the call,
    in ``_WALL``)."""
    key = (name, tuple(sorted(options.items())))
    if key not in _CACHE:
        start = time.perf_counter()
        _CACHE[key] = run_experiment(name, quick=True, random_state=0, **options)
        _WALL[key] = time.perf_counter() - start
    return _CACHE[key]


def test_registry_lists_every_reproduction_of_the_issue():
    assert set(EXPERIMENTS) == {"positivity", "sparsity", "weston_svm", "topographic", "ar_faces",
                                "ar_faces_automatic", "uci_side", "uci_sensitivity", "slda_pixels", "spca_faces", "ben_dor",
                                "unsupervised_benchmark", "face_sets_label_free"}


@pytest.mark.parametrize("name", [pytest.param(name, marks=slow) if name in HEAVY else name for name in sorted(EXPERIMENTS)])
def test_result_is_complete_and_saves(name, tmp_path):
    result = quick(name)
    assert result.name == name and len(result.table) > 0 and len(result.summary) > 0
    assert list(result.comparison.columns) == ["quantity", "paper", "ours"] and len(result.comparison) > 0
    assert result.claims and all(claim.evidence for claim in result.claims)
    assert 0 < result.seconds <= _WALL[(name, ())]  # the run's own time, within the call around it
    # its figures, registered beside it, cite the paper by authors (what a reader of the page can follow)
    titles = [figure.layout.title.text or "" for figure in experiment_figures(result)]
    assert titles and not any(re.search(r"\[(WS03|SW04|MWA07|Sha)\]|(^|\W)00[0-4]\b", title) for title in titles), titles
    numeric = result.table.select_dtypes("number")
    assert np.isfinite(numeric.to_numpy(dtype=float)[~np.isnan(numeric.to_numpy(dtype=float))]).all()
    paths = save_result(result, tmp_path)
    summary = json.loads((tmp_path / f"{name}.json").read_text())
    assert summary["name"] == name and len(summary["claims"]) == len(result.claims)
    assert (tmp_path / f"{name}.csv").read_text().count("\n") == len(result.table) + 1
    assert all(path.exists() for path in paths)


def test_positivity_fig1a():
    table = quick("positivity").table
    paper = table[table.distribution == "N(1/6, 2/36)"]
    assert paper[paper.n >= 20].probability.min() >= 0.95
    assert paper[paper.n <= 3].probability.max() < 1.0  # small matrices are not always positive
    weak = table[table.distribution == "N(0.1, 1)"]
    assert weak.probability.max() < 0.5  # the weak mean needs far larger n (paper: > 500)


def test_sparsity_fig1b():
    table = quick("sparsity").table
    assert table.non_negative.all()
    weston = table[table.data == "Weston linear"]
    assert (weston.relevant_in_top3 == 3).all() and weston.sparsity_gap.max() <= 20


@slow
def test_weston_svm_fig2():
    table = quick("weston_svm").table
    linear = table[table.problem == "linear"].groupby(["method", "n_train"]).test_error.mean()
    for size in (20, 50, 100):
        assert linear["Q-alpha supervised", size] < linear["SVM, all features", size]
    assert linear["Q-alpha unsupervised", 100] <= linear["Q-alpha supervised", 100] + 0.1
    assert linear["Q-alpha supervised", 100] <= linear["Q-alpha supervised", 20]
    nonlinear = table[table.problem == "non-linear"].groupby(["method", "n_train"]).test_error.mean()
    assert nonlinear["Q-alpha unsupervised", 100] < nonlinear["SVM, all features", 100] - 0.1
    # supervised Q-alpha picks relevant features
    chosen = table[(table.problem == "linear") & (table.method == "Q-alpha supervised")].relevant_chosen
    assert chosen.mean() >= 1.9


def test_topographic_fig2():
    result = quick("topographic")
    table = result.table
    for seed, part in table.groupby("seed"):
        weights = part.groupby(["round", "group"]).alpha.sum().unstack()
        first = "1,2,3" if weights.loc[1, "1,2,3"] > weights.loc[1, "A,B,C"] else "A,B,C"
        second = "A,B,C" if first == "1,2,3" else "1,2,3"
        assert weights.loc[2, second] > weights.loc[2, first]  # round 2 finds the other solution
        for r in (1, 2):
            rows = part[part["round"] == r]
            assert rows[rows.group == "hybrid"].alpha.min() > rows[rows.group == "irrelevant"].alpha.max()
    assert result.arrays["alphas"].shape == (2, 20)


@slow
def test_ar_faces_fig3():
    result = quick("ar_faces")
    means = result.table.groupby("method").test_index.mean()
    assert means["Q-alpha-SI"] > means["PCA"] + 0.2 and means["Q-alpha-SI"] > means["raw pixels"] + 0.2
    assert 0.4 <= means["Q-alpha-SI"] <= 1.0
    alphas = result.arrays["sorted alphas"]
    assert alphas.shape == (6, 2410) and (alphas[:, -1] >= -1e-6 * alphas[:, 0]).all()
    assert result.arrays["mean face per run"].shape == (6, 60, 40)
    assert result.arrays["first run people"].shape == (5, 8, 60, 40)
    bars = experiment_figures(result)[0]  # Fig. 3a with the paper's numbers beside ours
    assert bars.data[1].name == "the paper"
    assert dict(zip(bars.data[1].x, bars.data[1].y)) == {"Q-alpha-SI": 0.64, "SDR-SI": 0.39}
    # SDR-SI learns from the pixels and the side person: well above chance and the raw pixels
    assert means["SDR-SI"] > means["raw pixels"] and means["SDR-SI"] > 0.2
    assert result.table[result.table.method == "SDR-SI"].converged.all()


@slow
def test_ar_faces_variants_are_options():
    """The variants once measured by a one-off script: standardised coefficients, k chosen on the
    training images. Each changes only Q-alpha-SI's row, and says which k it chose."""
    plain = quick("ar_faces")
    variant = quick("ar_faces", standardize=True, tune_k=True)
    assert variant.parameters["standardize"] and variant.parameters["k"] == [2, 3, 5, 8]
    chosen = variant.table[variant.table.method == "Q-alpha-SI"].parameters
    assert all("'k': " in p for p in chosen) and not any("'k'" in p for p in plain.table.parameters)
    others = plain.table.method != "Q-alpha-SI"
    assert np.allclose(variant.table[others].test_index, plain.table[others].test_index)
    q = (plain.table.method == "Q-alpha-SI")
    assert not np.allclose(variant.table[q].test_index, plain.table[q].test_index)


@slow
def test_ar_faces_automatic_runs_the_papers_protocol_without_labels():
    """The same runs as ar_faces (its tuned Q-alpha-SI and raw pixels rows equal ar_faces' own);
    k and λ come from the rule's grid, and the rule is handed no labels."""
    from core.selection import automatic

    seen = []

    class Seen(Exception):
        """Raised by the spy once it has the rule's first call: each run calls it alike, and the
        rest of a run (50 s in quick mode) would check nothing more."""

    def spy(X, **options):
        seen.append(options)
        raise Seen

    result = quick("ar_faces_automatic")
    plain = quick("ar_faces").table
    table = result.table
    for ours, theirs in (("Q-alpha-SI, tuned with labels (the paper)", "Q-alpha-SI"), ("raw pixels", "raw pixels")):
        assert np.allclose(table[table.method == ours].test_index, plain[plain.method == theirs].test_index)
    picks = table[table.method == "Q-alpha-SI, automatic"]
    assert set(picks.k) <= {5, 10} and set(picks.lam) <= {0.1, 1.0, 10.0} and len(picks) == 6
    counts = table[table.method == "Q-alpha-SI, automatic k and λ, top at the sparsity gap"].weighting
    assert all(re.fullmatch(r"top \d+", w) for w in counts)
    import experiments.faces as faces
    original = automatic.choose_settings
    automatic.choose_settings = spy
    try:
        with pytest.raises(Seen):
            faces.ar_faces_automatic(quick=True, random_state=1)
    finally:
        automatic.choose_settings = original
    assert len(seen) == 1 and "labels" not in seen[0] and seen[0]["n_clusters"] == 5


def test_side_purity_against_a_loop_over_the_side_images():
    """The side images' normalised neighbour precision, counted image by image."""
    from experiments.faces import _side_purity

    rng = np.random.default_rng(3)
    main, side = rng.normal(size=(12, 5)), rng.normal(0.8, 1.0, size=(5, 5))
    everything = np.vstack([main, side])
    precisions = []
    for i in range(12, 17):
        distances = np.linalg.norm(everything - everything[i], axis=1)
        distances[i] = np.inf
        nearest = np.argsort(distances, kind="stable")
        precisions.append(np.mean([np.mean(nearest[:k] >= 12) for k in range(1, 5)]))
    chance = 4 / 16
    assert np.isclose(_side_purity(main, side), (np.mean(precisions) - chance) / (1 - chance), atol=1e-12)
    assert _side_purity(main, side + 100.0) == pytest.approx(1.0)  # the side images far from the rest


@slow
def test_face_sets_label_free_choices_follow_their_scores():
    """Each choice is the grid setting its own score ranks first in that run: the paper's by the
    training index (labels), the label-free ones by side purity and by k-means' stability."""
    table = quick("face_sets_label_free").table
    grid = table[table.grid.eq(True)]
    assert set(table.set) == {"ORL", "pixraw10P", "warpAR10P"} and grid.side_purity.between(-1, 1).all()
    for (name, run), part in grid.groupby(["set", "run"]):
        rows = table[(table.set == name) & (table.run == run)].set_index("method")
        for method, score in (("tuned with labels (the paper)", "train_index"), ("λ and top by side purity", "side_purity"),
                              ("λ and top by k-means stability", "stability")):
            first = part.loc[part[score].idxmax()]
            assert (rows.loc[method, "lam"], rows.loc[method, "top"]) == (first.lam, first.top), (name, run, method)
            assert rows.loc[method, "test_index"] == pytest.approx(first.test_index)
    with pytest.raises(InputError, match="sets must name"):
        run_experiment("face_sets_label_free", quick=True, sets=["Yale"])


@slow
def test_uci_side_wine_row():
    rule = quick("uci_side")  # the study's rule
    assert {key: rule.parameters[key] for key in UCI_RULE} == {**UCI_RULE, "standardize": list(UCI_RULE["standardize"])}
    assert "standardised: raw data, PCA, CPCA" in rule.data
    assert rule.summary.set_index("method").hungarian_mean["Q-alpha-SI"] >= 0.93
    # the paper's setting: lambda 0.1, k = c, the baselines on the data as given
    result = quick("uci_side", lam=0.1, k="c", standardize=False)
    summary = result.summary.set_index("method")
    assert summary.hungarian_mean["Q-alpha-SI"] >= 0.93
    assert summary.xing_mean["Q-alpha-SI"] > summary.xing_mean["raw data"] + 0.1
    # the paper's raw-data and PCA numbers (0.7280) are the pairwise score on the data as given
    assert abs(summary.xing_mean["raw data"] - 0.728) < 0.02
    bars = experiment_figures(result)[0]  # the wine row of the paper's table beside ours
    assert dict(zip(bars.data[1].x, bars.data[1].y)) == {m: PAPER_WINE[m] for m in summary.index if m in PAPER_WINE}
    assert set(summary.index) == {"raw data", "Q-alpha-SI", "PCA", "CPCA", "OPCA", "SDR-SI"}
    assert summary.hungarian_mean["SDR-SI"] > 0.5  # two or more cultivars clustered: above chance


def test_uci_side_on_a_loaded_table_and_bad_tables():
    rng = np.random.default_rng(0)
    labels = np.repeat([0, 1, 2], 20)
    X = rng.normal(size=(60, 8))
    X[:, 0] += 3 * (labels == 1)
    X[:, 1] += 3 * (labels == 2)
    table = Dataset(X, labels=labels, name="uploaded.csv")
    result = run_experiment("uci_side", quick=True, dataset=table)
    assert "uploaded.csv" in result.data and result.comparison.paper.eq("—").all()
    with pytest.raises(InputError, match="at least 2 classes"):
        run_experiment("uci_side", quick=True, dataset=Dataset(X, labels=np.zeros(60, dtype=int)))
    with pytest.raises(InputError, match="does not take"):
        run_experiment("uci_side", quick=True, colour="red")
    for option, message in [(dict(k="3c"), "k must be"), (dict(k=0), "k must be"), (dict(weighting="cube"), "weighting must"),
                            (dict(lam=-1.0), "lam must"), (dict(standardize="yes"), "standardize must"),
                            (dict(weight_zscores=1), "weight_zscores must")]:
        with pytest.raises(InputError, match=message):
            run_experiment("uci_side", quick=True, dataset=table, **option)


def test_protocol_turns():
    rng = np.random.default_rng(3)
    three = Dataset(rng.normal(size=(30, 4)), labels=np.repeat(["a", "b", "c"], 10))
    turns = _protocol_turns(three, 0)
    assert [t.side_class for t in turns] == ["a", "b", "c"]
    for turn, side_class in zip(turns, "abc"):  # [SW04]: one class is the side data, the others are clustered
        assert np.array_equal(turn.side, three.X[three.labels == side_class])
        assert np.array_equal(turn.main, three.X[three.labels != side_class])
        assert turn.n_clusters == 2 and side_class not in set(turn.truth)
    # two classes: a random half of one class is the side data, the rest of both classes is clustered
    two = Dataset(rng.normal(size=(21, 3)), labels=np.r_[np.zeros(11, int), np.ones(10, int)])
    turns = _protocol_turns(two, 5)
    for turn, side_class, size in zip(turns, (0, 1), (11, 10)):
        assert turn.side.shape[0] == size // 2 and turn.main.shape[0] == 21 - size // 2
        assert turn.n_clusters == 2 and np.sum(turn.truth == side_class) == size - size // 2
        rows = {tuple(row) for row in two.X}
        assert {tuple(r) for r in turn.side} | {tuple(r) for r in turn.main} == rows
        assert not {tuple(r) for r in turn.side} & {tuple(r) for r in turn.main}
        assert {tuple(r) for r in turn.side} <= {tuple(r) for r in two.X[two.labels == side_class]}
    again = _protocol_turns(two, 5)
    assert all(np.array_equal(a.side, b.side) for a, b in zip(turns, again))  # deterministic given the seed
    with pytest.raises(InputError, match="at least 4 samples"):
        _protocol_turns(Dataset(rng.normal(size=(5, 3)), labels=np.r_[0, 0, 0, 1, 1]), 0)


def test_alpha_enters_kmeans_as_named():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(12, 6)) * np.arange(1, 7)
    alpha = np.array([0.8, 0.55, 0.2, 0.05, 0.0, -1e-12])
    assert np.allclose(_alpha_features(X, alpha, "sqrt_alpha", weight_zscores=True), zscores(X) * np.sqrt(np.clip(alpha, 0, None)))
    assert np.allclose(_alpha_features(X, alpha, "alpha", weight_zscores=False), X * np.clip(alpha, 0, None))
    top = _alpha_features(X, alpha, "gap", True)
    assert top.shape[1] == sparsity_gap(alpha) and np.allclose(top, zscores(X)[:, :top.shape[1]])
    with pytest.raises(InputError, match="weighting must"):
        _alpha_features(X, alpha, "cube", True)


@slow
def test_uci_side_on_two_classes_and_its_options():
    rng = np.random.default_rng(6)
    labels = np.arange(40) % 2
    X = rng.normal(size=(40, 5))
    X[:, 0] += 8.0 * labels  # one informative feature among five
    two = quick("uci_side", dataset=Dataset(X, labels=labels, name="two classes"))
    assert "two classes" in two.data and "a random half of each class in turn is the side data" in two.data
    assert set(two.table.side_class) == {"0", "1"} and two.summary.set_index("method").hungarian_mean["Q-alpha-SI"] > 0.95
    base = quick("uci_side")
    variant = quick("uci_side", weighting="gap", k="2c")
    assert variant.parameters["weighting"] == "gap" and variant.parameters["k"] == "2c"
    others = base.table.method != "Q-alpha-SI"  # only Q-alpha-SI's rows depend on these choices
    assert np.allclose(variant.table[others].hungarian, base.table[others].hungarian)
    q = base.table.method == "Q-alpha-SI"
    assert not np.allclose(variant.table[q].hungarian, base.table[q].hungarian)


@slow
def test_uci_sensitivity():
    result = quick("uci_sensitivity")
    summary = result.summary
    labels = {"base"} | {_setting_label(choice, value) for choice, values in PROTOCOL_VARIATIONS.items() for value in values}
    for name in ("wine", "iris"):
        of_set = summary[summary.dataset == name]
        assert labels <= set(of_set[of_set.method == "Q-alpha-SI"].setting)
        for method in ("PCA", "CPCA", "OPCA"):
            for scaling in ("as given", "standardised"):
                cells = of_set[of_set.method == method].set_index("setting").hungarian_mean
                # the dimension chosen in hindsight is at least as good as the fixed one
                assert cells[f"{scaling}, best dims"] >= cells[f"{scaling}, dims = c"] - 1e-12
    assert (summary.runs == 3).all() and summary.hungarian_std.notna().all()
    # the base cell is uci_side's Q-alpha-SI on the same k-means seeds (its first 3 runs of 5)
    wine = quick("uci_side", lam=0.1, k="c", standardize=False).table  # the base setting
    same = wine[(wine.method == "Q-alpha-SI") & (wine.run < 3)].groupby("run").hungarian.mean()
    base = summary[(summary.dataset == "wine") & (summary.setting == "base")].iloc[0]
    assert np.isclose(base.hungarian_mean, same.mean()) and np.isclose(base.hungarian_std, same.std())
    # the rule follows the criterion: the best of the combinations of each choice's two best settings
    q = summary[summary.method == "Q-alpha-SI"].groupby("setting").hungarian_mean.mean()
    rule = result.parameters["rule"]
    combinations = [setting for setting in q.index if setting.startswith("combination: ")]
    assert len(combinations) == 2 ** len(PROTOCOL_VARIATIONS)
    for choice, values in PROTOCOL_VARIATIONS.items():
        scores = {BASE_PROTOCOL[choice]: q["base"], **{value: q[_setting_label(choice, value)] for value in values}}
        assert scores[rule[choice]] >= sorted(scores.values())[-2]  # one of the choice's two best
    assert q[_combination_label(rule)] == q[combinations].max()
    figure = experiment_figures(result)[0]
    assert list(figure.data[0].x) == ["wine", "iris"] and len(figure.data[0].y) == len(summary) // 2
    assert all("±" in cell for row in figure.data[0].text for cell in row)


@slow
def test_slda_pixels_fig7_to_16():
    result = quick("slda_pixels")
    table = result.table
    curves = table[table.measure == "GRQ objective"].pivot_table(index=["problem", "k"], columns="method",
                                                                 values="objective")
    assert (curves.fisher <= curves.dual * (1 + 1e-9)).mean() >= 0.95
    assert (curves.bound <= curves.dual * (1 + 1e-9)).all()  # Eq. (5) bounds the best subset
    for problem, part in curves.groupby(level="problem"):
        assert np.all(np.diff(part.forward.to_numpy()) >= -1e-9 * part.forward.max())
    gp = result.summary
    for problem, part in gp.groupby("problem"):
        sparse = part[part.k <= 10]
        assert (sparse[sparse.method == "GSLDA"].test_error.mean()
                <= sparse[sparse.method == "Fisher thresholding"].test_error.mean() + 0.02)
        single = part[part.method == "optimal single pixel"].test_error.iloc[0]
        assert single < 0.5 * 0.9
        assert part.test_information.max() <= 1.0 + 1e-9


def test_spca_faces_fig3_4():
    result = quick("spca_faces")
    table = result.table
    assert np.all(np.diff(table.forward) >= -1e-12) and np.all(np.diff(table.backward) >= -1e-9)
    assert table.share_of_full.iloc[len(table) // 2 - 1] >= 0.9
    assert (abs(table.forward - table.backward) / table.dual).max() <= 0.05
    assert result.arrays["sparse mask"].sum() == len(table) // 2
    assert result.arrays["full eigenfaces"].shape[0] == 8


def test_ben_dor_study():
    """What holds of the talk's claims on our generator: high accuracy near the leukemia setting
    and selection at least as good as all genes. (Its e = 0.995 and s = 1000 claims do not hold
    here; the result reports them as failing claims, and the README says so.)"""
    result = quick("ben_dor")
    summary = result.summary
    e = summary[summary.parameter == "e"].set_index("value")
    assert e.accuracy_selected_mean[0.9] >= 0.9
    assert summary.accuracy_selected_mean.mean() >= summary.accuracy_all_mean.mean() - 0.02
    assert summary.selection_precision_mean.between(0, 1).all()
    assert {claim.holds for claim in result.claims} == {True, False}  # both outcomes are reported


@slow
def test_unsupervised_benchmark():
    result = quick("unsupervised_benchmark")
    table = result.table
    extraction = {"PCA (extracted)", "kernel PCA (extracted)", "LPP (extracted)", "LLE (extracted)",
                  "Isomap (extracted)"}
    assert set(table.method) == {"Q-alpha", "variance", "Laplacian score", "FSCA", "SPEC", "MCFS", "UDFS", "NDFS"} | extraction
    # extraction at the K the selections were scored at (K dimensions for K features); Isomap's
    # geodesic kernel on these small sets has too few positive eigenvalues for the largest K
    sizes = table.groupby(["dataset", "method"]).K.apply(set).unstack()
    assert all((sizes[m] == sizes["Q-alpha"]).all() for m in extraction - {"Isomap (extracted)"})
    assert all(isomap <= full and len(isomap) > 0 for isomap, full in zip(sizes["Isomap (extracted)"], sizes["Q-alpha"]))
    assert "best mean accuracy over K (extraction)" in " ".join(result.comparison.quantity)
    # each method's ranking is timed once per data set, within the whole run
    per_ranking = table.groupby(["dataset", "method"]).seconds.agg(["min", "max"])
    assert (per_ranking["min"] == per_ranking["max"]).all() and (per_ranking["min"] > 0).all()
    assert per_ranking["min"].sum() <= result.seconds
    assert table.accuracy.between(0, 1).all() and table.nmi.between(0, 1).all()
    by_set = table.groupby(["dataset", "method"]).accuracy.mean().unstack()
    assert (by_set["Q-alpha"] >= by_set["variance"]).sum() * 2 >= len(by_set)


@pytest.mark.slow  # the command line in processes of its own: the slow tier (docs/testing.md)
def test_command_line(tmp_path):
    listing = subprocess.run([sys.executable, "-m", "experiments", "list"], cwd=ROOT,
                             capture_output=True, text=True, timeout=60)
    assert listing.returncode == 0 and "Wolf & Shashua 2003 Fig. 1a" in listing.stdout
    load_experiments()
    listed = [line.split()[0] for line in listing.stdout.splitlines()]
    assert listed == list(EXPERIMENTS)  # every reproduction, in the registry's order
    run = subprocess.run([sys.executable, "-m", "experiments", "run", "positivity", "--quick", "--seed", "3",
                          "--out", str(tmp_path)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    # the probability dips from n = 2 to n = 3 (tests/experiments/test_claims.py): the claim that it grows
    # fails (exit code 1) or, with the quick version's 50 trials, may be undecided (0); it never holds
    assert run.returncode in (0, 1), run.stderr
    assert "The probability grows with n" in run.stdout and "[holds] The probability grows" not in run.stdout
    assert "very close to 1" in run.stdout and (tmp_path / "positivity.csv").exists()
    assert json.loads((tmp_path / "positivity.json").read_text())["parameters"]["random_state"] == 3
    # iris: the options' parsing is the point, and iris's run takes 2 s against wine's 7 s
    options = subprocess.run([sys.executable, "-m", "experiments", "run", "uci_side", "--quick", "--option", "lam=1",
                              "--option", "dataset=iris", "--option", 'standardize=["PCA"]', "--out", str(tmp_path)],
                             cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert options.returncode in (0, 1), options.stderr  # 1: a claim does not hold with these options
    saved = json.loads((tmp_path / "uci_side.json").read_text())["parameters"]
    assert saved["lam"] == 1 and saved["data"] == "iris" and saved["standardize"] == ["PCA"]
    wrong = subprocess.run([sys.executable, "-m", "experiments", "run", "uci_side", "--quick", "--option", "lam"],
                           cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert wrong.returncode == 2 and "KEY=VALUE" in wrong.stderr
    bad = subprocess.run([sys.executable, "-m", "experiments", "run", "fig99", "--quick"], cwd=ROOT,
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "Unknown experiment" in bad.stderr


def test_deterministic_given_seed():
    first = run_experiment("topographic", quick=True, random_state=4)
    second = run_experiment("topographic", quick=True, random_state=4)
    assert first.table.equals(second.table)
    with pytest.raises(InputError, match="random_state"):
        run_experiment("topographic", random_state=-1)
