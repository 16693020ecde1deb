"""The few lines of Python that recompute a page's result with the library, at the page's
current settings (shown in each page's "Python" expander; tests run them against the page)."""

from __future__ import annotations

from dataclasses import asdict

from core import Dataset


def _load(data: Dataset, bundled: bool) -> tuple[set, str]:
    """The ``core`` names and the line that give the snippet the page's data: the bundled set by
    name, else the user's own file."""
    if bundled:
        return {"load_dataset"}, f"data = load_dataset({data.name!r})"
    return {"load_table"}, f"data = load_table({data.name!r})  # the file you uploaded (load_images for images)"


def _code(names: set, lines: list[str]) -> str:
    return "\n".join([f"from core import {', '.join(sorted(names))}", "", *lines])


def qalpha_snippet(data: Dataset, bundled: bool, params, side_mode: str, side_classes, n_pairs: int,
                   solver: str, top_k: int) -> str:
    """Q-alpha page: the run the page makes (:class:`core.QAlphaParameters` and its ``run``, with
    the side data, pairs and solver the page uses) and the top ``top_k`` features."""
    names, load = _load(data, bundled)
    names.add("QAlphaParameters")
    settings = ", ".join(f"{name}={value!r}" for name, value in asdict(params).items())
    lines = [load, f"params = QAlphaParameters({settings})"]
    if side_mode == "side classes":
        lines.append(f"main, side = data.split_by_class({list(side_classes)!r})  # the side classes are W")
        call = "params.run(main.X, labels=main.labels, side=side.X"
    elif side_mode == "uploaded side data":
        names.add("load_table")
        lines.append("main, side = data, load_table('your side data')  # the Data page's second upload")
        call = "params.run(main.X, labels=main.labels, side=side.X"
    elif side_mode == "pairs":
        names.add("pairs_from_labels")
        lines += ["main = data", f"pairs = pairs_from_labels(main.labels, {int(n_pairs)}, random_state={params.random_state})"]
        call = "params.run(main.X, labels=main.labels, pairs=pairs"
    else:
        lines.append("main = data")
        call = "params.run(main.X, labels=main.labels"
    lines += [f"result = {call}, solver={solver!r})",
              f"top = result.top({int(top_k)})  # the K features the page selects",
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
