"""The few lines of Python that recompute a page's result with the library, at the page's
current settings (shown in each page's "Python" expander; tests run them against the page)."""

from __future__ import annotations

from dataclasses import asdict

from core import Dataset
from .datasets import is_bundled


def _load(data: Dataset, bundled: bool) -> tuple[set, str]:
    """The ``core`` names and the line that give the snippet the page's data: the bundled set by
    name, else the user's own file read as the Data page read it (``meta["loaded_with"]``)."""
    source = data.meta.get("transformed_from")
    if source is not None:  # values transformed on the Data page
        names, load = _load(source, is_bundled(source))
        steps = ", ".join(f"{name}={value!r}" for name, value in data.meta["transform"].items()
                          if value not in (None, False))
        return names | {"transform_values"}, f"{load}\ndata = transform_values(data, {steps})"
    family = data.meta.get("family_options")
    images = data.family.images if data.family is not None else data
    if family is not None and images is not data:  # features of images chosen on the Data page
        names, load = _load(images, is_bundled(images))
        options = "".join(f", {name}={value!r}" for name, value in family["options"].items())
        return names | {"to_feature_family"}, f"{load}\ndata = to_feature_family(data, {family['family']!r}{options})"
    if bundled:
        return {"load_dataset"}, f"data = load_dataset({data.name!r})"
    recipe = data.meta.get("loaded_with")
    if recipe is None:  # made on the Data page from another set (a subset, coarser features)
        return {"load_table"}, (f"data = load_table({data.name!r}, open({data.name!r}, 'rb').read())"
                                "  # your file, with the choices made on the Data page")
    options = "".join(f", {name}={value!r}" for name, value in recipe["options"].items() if value is not None)
    files = recipe["files"]
    if recipe["function"] == "load_table":
        return {"load_table"}, f"data = load_table({files[0]!r}, open({files[0]!r}, 'rb').read(){options})"
    return {"load_images"}, f"data = load_images([(name, open(name, 'rb').read()) for name in {files!r}]{options})"


def _load_side(side: Dataset | None) -> tuple[set, str]:
    """The names and the line that read the side data uploaded on the Data page, as that page
    read them (:func:`core.load_side_data` with the current data as ``like``)."""
    files = (side.meta.get("loaded_with") or {}).get("files") if side is not None else None
    files = files or ["your side data file"]
    return {"load_side_data"}, (f"side_data = load_side_data([(name, open(name, 'rb').read()) for name in {files!r}], "
                                "like=data)  # the Data page's second upload")


def _code(names: set, lines: list[str], numpy: bool = False) -> str:
    return "\n".join((["import numpy as np"] if numpy else [])
                     + [f"from core import {', '.join(sorted(names))}", "", *lines])


def qalpha_snippet(data: Dataset, bundled: bool, params, side_mode: str, side_classes, n_pairs: int,
                   solver: str, top_k: int, side: Dataset | None = None, picked=None, path_lams=None) -> str:
    """Q-alpha page: the run the page makes (:class:`core.QAlphaParameters` and its ``run``, with
    the side data, pairs and solver the page uses) and the top ``top_k`` features. ``side``: the
    uploaded side data, when the page uses them; ``picked``: the rows picked on the map, when they
    are the side data; ``path_lams``: the λ grid, when the page shows the λ path's point at
    ``params.lam`` (warm-started along the path: the same weights as a cold run, in other
    iterations, which the snippet then reports as the page does)."""
    names, load = _load(data, bundled)
    names.add("QAlphaParameters")
    settings = ", ".join(f"{name}={value!r}" for name, value in asdict(params).items())
    lines = [load, f"params = QAlphaParameters({settings})"]
    if side_mode == "side classes":
        lines.append(f"main, side = data.split_by_class({list(side_classes)!r})  # the side classes are W")
        call = "params.run(main.X, labels=main.labels, side=side.X"
    elif side_mode == "uploaded side data":
        side_names, side_line = _load_side(side)
        names |= side_names
        lines += [side_line, "main, side = data, side_data"]
        call = "params.run(main.X, labels=main.labels, side=side.X"
    elif side_mode == "picked samples":
        lines += [f"picked = {sorted(int(i) for i in picked)!r}  # the samples picked on the map are W",
                  "main = data.subset_samples([i for i in range(data.n_samples) if i not in set(picked)])",
                  "side = data.subset_samples(picked)"]
        call = "params.run(main.X, labels=main.labels, side=side.X"
    elif side_mode == "pairs":
        names.add("pairs_from_labels")
        lines += ["main = data", f"pairs = pairs_from_labels(main.labels, {int(n_pairs)}, random_state={params.random_state})"]
        call = "params.run(main.X, labels=main.labels, pairs=pairs"
    else:
        lines.append("main = data")
        call = "params.run(main.X, labels=main.labels"
    if path_lams is not None and call.startswith("params.run(main.X, labels=main.labels, ") and not params.supervised:
        names.add("q_alpha_path")
        information = call.split("labels=main.labels, ", 1)[1]
        lines += [f"path = q_alpha_path(main.X, params.k, {information}, lams={[float(v) for v in path_lams]!r}, "
                  f"criterion=params.criterion, init=params.init, random_state=params.random_state, "
                  f"max_iter=params.max_iter, tol=params.tol, solver={solver!r})",
                  f"result = path.at({float(params.lam)!r})  # the page's result: the λ path's point"]
    else:
        lines.append(f"result = {call}, solver={solver!r})")
    lines += [f"top = result.top({int(top_k)})  # the K features the page selects",
              "print(result.converged, result.n_iter, [main.feature_names[j] for j in top[:10]])"]
    return _code(names, lines)


def kernel_snippet(data: Dataset, bundled: bool, k: int, kernel: str, options: dict, solve: dict,
                   max_iter: int) -> str:
    """Kernel Q-alpha page: :func:`core.kernel_q_alpha` with the page's kernel, its parameters and
    the step it runs (fast: power steps in float32; exact: the printed step in float64)."""
    names, load = _load(data, bundled)
    arguments = ", ".join(f"{name}={value!r}" for name, value in {**options, **solve}.items())
    return _code(names | {"kernel_q_alpha"}, [
        load, f"result = kernel_q_alpha(data.X, {int(k)}, {kernel!r}, {arguments}, max_iter={int(max_iter)})",
        "print(result.converged, result.n_iter, [data.feature_names[j] for j in result.top(10)])"])


def data_snippet(data: Dataset, bundled: bool) -> str:
    """Data page: the current data set loaded by the library as the page loaded it."""
    names, load = _load(data, bundled)
    return _code(names, [load, "print(data.X.shape, data.classes, data.feature_names[:5])"])


def topographic_snippet(data: Dataset, bundled: bool, k: int, rounds: int, lam: float) -> str:
    """Topographical map page: :func:`core.topographic_map` with the page's k, rounds and λ."""
    names, load = _load(data, bundled)
    return _code(names | {"topographic_map"}, [
        load, f"topo = topographic_map(data.X, {int(k)}, {int(rounds)}, {float(lam)!r}, solver='power')",
        "for r, alpha in enumerate(topo.alphas):  # each round's alpha, and each feature's coordinate",
        "    print(f'round {r + 1}:', [data.feature_names[j] for j in alpha.argsort()[::-1][:10]])"])


def haar_snippet(images: Dataset, bundled: bool, main_classes, side_classes, levels: int, lam: float,
                 solver: str, side: Dataset | None = None) -> str:
    """Haar page: the images' Haar coefficients (:func:`core.to_haar`), Q-alpha with the side
    classes (or ``side``, the uploaded side images, in the same basis) as side data, and the mean
    image of the main classes rebuilt from alpha-weighted coefficients."""
    names, load = _load(images, bundled)
    lines = [load.replace("data = ", "images = ", 1), f"haar = to_haar(images, {int(levels)})",
             f"main = np.isin(haar.labels, {list(main_classes)!r})"]
    if side is None:
        lines.append(f"side = haar.X[np.isin(haar.labels, {list(side_classes)!r})]")
    else:
        side_names, side_line = _load_side(side)
        names |= side_names
        lines += [side_line.replace("like=data", "like=images"),
                  "side = haar.family.basis.transform(side_data.X)  # the side images' Haar coefficients"]
    return _code(names | {"q_alpha", "to_haar"}, lines + [
        f"result = q_alpha(haar.X[main], {len(main_classes)}, side=side, lam={float(lam)!r}, solver={solver!r})",
        f"mean_image = images.X[np.isin(images.labels, {list(main_classes)!r})].mean(axis=0).reshape(images.image_shape)",
        "rebuilt = haar.family.basis.reconstruct(mean_image, result.alpha)[0]",
        "print(haar.family.basis.band_mass(result.alpha))"], numpy=True)


def slda_snippet(data: Dataset, bundled: bool, first, second, reg, k: int, method: str) -> str:
    """Sparse LDA tab: :func:`core.greedy_slda` on the two classes' samples, and the page's subset."""
    names, load = _load(data, bundled)
    return _code(names | {"greedy_slda"}, [
        load, f"keep = np.isin(data.labels, {[first, second]!r})",
        f"path = greedy_slda(data.X[keep], data.labels[keep], classes={(first, second)!r}, reg={reg!r})",
        f"subset = path.subset({int(k)}, {method!r})  # the k features the page shows",
        "print(path.lambda_max, [data.feature_names[j] for j in subset])"], numpy=True)


def spca_snippet(data: Dataset, bundled: bool, k: int) -> str:
    """Sparse PCA tab: :func:`core.greedy_spca` and the sparse eigenvector of cardinality k."""
    names, load = _load(data, bundled)
    return _code(names | {"greedy_spca", "sparse_eigenvector"}, [
        load, "path = greedy_spca(data.X)", f"vector = sparse_eigenvector(path, {int(k)})",
        f"print(path.dual_objective[{int(k) - 1}], path.upper_bound)"])


def compare_snippet(data: Dataset, bundled: bool, methods, supervised: dict, n_clusters: int, sizes, folds: int,
                    qalpha: dict | None) -> str:
    """Compare page: each method ranked on the training folds and judged on the held-out fold
    (:func:`core.held_out_curves`); the Q-alpha rows with the Q-alpha page's settings
    (:func:`core.q_alpha_ranker`)."""
    names, load = _load(data, bundled)
    names |= {"held_out_curves", "rank_features"}
    lines = [load, "", "def ranker(method, supervised):",
             "    return lambda X, y: rank_features(method, X, y if supervised else None, "
             f"n_clusters={int(n_clusters)})", ""]
    if qalpha is not None and qalpha.get("setup"):
        names.add("load_side_data")
        lines[1:1] = qalpha["setup"]
    rankers, qalpha_methods = [], ("Q-alpha", "Q-alpha (supervised)", "Q-alpha (across modules)")
    for method in methods:
        if method in qalpha_methods and qalpha is not None:
            names |= {"QAlphaParameters", "q_alpha_ranker"}
            params = ", ".join(f"{name}={value!r}" for name, value in qalpha["params"][method].items())
            side = qalpha["side"]
            ranker = f"q_alpha_ranker(QAlphaParameters({params}){side})"
            if method == "Q-alpha (across modules)":  # the plain ranking's first features across their modules
                names.add("ranking_across_modules")
                ranker = f"lambda X, y, rank={ranker}: ranking_across_modules(X, rank(X, y))"
            rankers.append(f"    {method!r}: {ranker},")
        else:
            rankers.append(f"    {method!r}: ranker({method!r}, {bool(supervised[method])}),")
    lines += ["rankers = {", *rankers, "}",
              f"curves = {{method: held_out_curves(data.X, data.labels, rank, {list(sizes)!r}, n_splits={int(folds)}, "
              "random_state=0)", "          for method, rank in rankers.items()}",
              "for method, values in curves.items():  # the best mean over the sizes, as the table shows",
              "    print(method, max(values['accuracy']), max(values['knn']))"]
    return _code(names, lines)


def figures_snippet(name: str, quick: bool, random_state: int, options: dict, data: Dataset | None = None,
                    bundled: bool = False) -> str:
    """Paper figures page: :func:`experiments.run_experiment` with the page's reproduction, seed and
    the protocol's open choices (and the current data set where the page runs on it)."""
    lines, names, on_data = [], set(), ""
    if "dataset" in options:
        names, load = _load(data, bundled)
        lines.append(load)
        on_data = ", dataset=data"
    choices = "".join(f", {option}={value!r}" for option, value in options.items() if option != "dataset")
    imports = ["from experiments import run_experiment"] + ([f"from core import {', '.join(sorted(names))}"] if names else [])
    return "\n".join([*imports, "", *lines,
                      f"result = run_experiment({name!r}, quick={bool(quick)}, random_state={int(random_state)}"
                      f"{choices}{on_data})",
                      "print(result.comparison)  # the paper's numbers beside ours",
                      "print([(claim.statement, claim.holds) for claim in result.claims])"])
