"""The documentation's examples run as written, and every entry point of the public face has one."""

import os
import re
import subprocess
import sys

import pytest

from conftest import ROOT

LIBRARY = ROOT / "docs" / "library.md"


def examples():
    return re.findall(r"```python\n(.*?)```", LIBRARY.read_text(), flags=re.S)


@pytest.mark.parametrize("number", range(len(examples())))
def test_library_example_runs(number, tmp_path):
    """Each example in a fresh interpreter with the repository on the path, as a reader would paste
    it (in a folder of its own: an example may write a file)."""
    code = examples()[number]
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, f"example {number}:\n{code}\n{done.stderr[-3000:]}"
    assert done.stdout.strip(), "an example shows its result"


def test_every_entry_point_has_an_example():
    import core

    code = "\n".join(examples())
    entry_points = ("q_alpha", "kernel_q_alpha", "topographic_map", "greedy_slda", "greedy_spca", "exact_slda",
                    "load_table", "load_images", "load_dataset", "list_datasets", "data_matrix", "rank_features",
                    "score_features", "make_projection", "QAlphaSelector", "QAlphaParameters", "to_feature_family",
                    "sparsity_gap", "pairs_from_labels", "q_alpha_path", "clustering_accuracy", "selection_stability", "class_markers",
                    "held_out_curves", "transform_values")
    for name in entry_points:
        assert name in core.__all__, name
        assert re.search(rf"from core import [^\n]*\b{name}\b", code), f"no example imports {name} from core"


def test_readme_stays_short_and_links_the_guides(tmp_path):
    readme = (ROOT / "README.md").read_text()
    example = re.findall(r"```python\n(.*?)```", readme, flags=re.S)[0]
    assert len(example.strip().splitlines()) <= 10
    done = subprocess.run([sys.executable, "-c", example], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-3000:]
    assert len(readme.splitlines()) <= 120  # issue 49: results live in docs/findings.md and docs/benchmarks.md
    for link in re.findall(r"\]\((docs/[^)#]+)", readme):
        assert (ROOT / link).exists(), link
    command = 'pip install -r requirements.txt && python -m pytest -n 3 --dist loadgroup -m "not slow"'
    ci = (ROOT / ".ci" / "run").read_text()
    assert command in readme and command in ci  # CI runs the README's command
    assert "\npython -m pytest -n 3 --dist loadgroup -m slow\n" in ci and "`python -m pytest -n 3 --dist loadgroup -m slow`" in readme  # and then the slow tier, which the README names
    for guide in ("library.md", "data.md", "scale.md", "benchmarks.md", "findings.md", "reproductions.md", "testing.md"):
        assert f"docs/{guide}" in readme, guide


def test_the_benchmarks_page_is_rendered_from_the_results_in_the_repository():
    """docs/benchmarks.md is what ``python -m benchmarks.render`` writes from benchmarks/results/
    (issue 49): no figure copied by hand, every benchmark with a section under a stable anchor,
    each result with its command, commit and machine."""
    import json

    from benchmarks import render

    page = (ROOT / "docs" / "benchmarks.md").read_text()
    assert page == render.render(), "run python -m benchmarks.render"
    for path in sorted((ROOT / "benchmarks").glob("bench_*.py")):
        assert f"\n## {path.stem}\n" in page and f"](#{path.stem})" in page, path.stem
    results = sorted((ROOT / "benchmarks" / "results").glob("*.json"))
    assert results
    for path in results:
        record = json.loads(path.read_text())
        assert record["name"] == path.stem and record["output"].strip()
        assert record["command"].startswith(f"python -m benchmarks.{path.stem}")
        assert record["commit"] and record["machine"]["cores"]
        assert f"at commit `{record['commit']}`" in page
