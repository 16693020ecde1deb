"""The few lines of Python that recompute a page's result with the library, at the page's
current settings (shown in each page's "Python" expander; tests run them against the page)."""

from __future__ import annotations

from dataclasses import asdict

from core import Dataset


def load_lines(data: Dataset, bundled: bool) -> list[str]:
    """How the snippet gets the page's data: the bundled set by name, else the user's own file."""
    if bundled:
        return ["from core import load_dataset", "", f"data = load_dataset({data.name!r})"]
    return ["from core import load_table  # or load_images for a folder or ZIP of images", "",
            f"data = load_table({data.name!r})  # the file you uploaded, with the same choices"]


def qalpha_snippet(data: Dataset, bundled: bool, params, side_mode: str, side_classes, n_pairs: int,
                   solver: str, top_k: int) -> str:
    """Q-alpha page: the run the page makes (:class:`core.QAlphaParameters` and its ``run``, with
    the side data, pairs and solver the page uses) and the top ``top_k`` features."""
    lines = load_lines(data, bundled)
    lines[0] += "\nfrom core import QAlphaParameters" + (", pairs_from_labels" if side_mode == "pairs" else "")
    settings = ", ".join(f"{name}={value!r}" for name, value in asdict(params).items())
    lines.append(f"params = QAlphaParameters({settings})")
    if side_mode == "side classes":
        lines.append(f"main, side = data.split_by_class({list(side_classes)!r})  # the side classes are W")
        call = "params.run(main.X, labels=main.labels, side=side.X"
    elif side_mode == "uploaded side data":
        lines.append("main, side = data, load_table('your side data')  # the Data page's second upload")
        call = "params.run(main.X, labels=main.labels, side=side.X"
    elif side_mode == "pairs":
        lines.append(f"main = data\npairs = pairs_from_labels(main.labels, {int(n_pairs)}, random_state={params.random_state})")
        call = "params.run(main.X, labels=main.labels, pairs=pairs"
    else:
        lines.append("main = data")
        call = "params.run(main.X, labels=main.labels"
    lines.append(f"result = {call}, solver={solver!r})")
    lines.append(f"top = result.top({int(top_k)})  # the K features the page selects")
    lines.append("print(result.converged, result.n_iter, [main.feature_names[j] for j in top[:10]])")
    return "\n".join(lines)


def kernel_snippet(data: Dataset, bundled: bool, k: int, kernel: str, options: dict, solve: dict,
                   max_iter: int) -> str:
    """Kernel Q-alpha page: :func:`core.kernel_q_alpha` with the page's kernel, its parameters and
    the step it runs (fast: power steps in float32; exact: the printed step in float64)."""
    lines = load_lines(data, bundled)
    lines[0] += "\nfrom core import kernel_q_alpha"
    arguments = ", ".join(f"{name}={value!r}" for name, value in {**options, **solve}.items())
    lines.append(f"result = kernel_q_alpha(data.X, {int(k)}, {kernel!r}, {arguments}, max_iter={int(max_iter)})")
    lines.append("print(result.converged, result.n_iter, [data.feature_names[j] for j in result.top(10)])")
    return "\n".join(lines)
