"""Hostile and extreme input: every case gets a clear InputError with its message, or a sensible
result; none gets another exception, a NaN, or a silent wrong answer.

The compression bombs are real files (made once per session in a temporary folder) and each is
refused in a fresh process whose peak memory is measured (VmHWM), against the bound of twice
the upload's size plus 200 MB.
"""

import io
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
from PIL import Image

from core import InputError
from core.selection.scorers import score_features
from core.selection.kernel_qalpha import kernel_q_alpha
from core.data.loaders import load_table
from core.selection.qalpha import q_alpha
from core.selection.topographic import topographic_map
from core.selection.slda import greedy_slda
from core.selection.spca import greedy_spca

ROOT = Path(__file__).resolve().parents[2]
RNG = np.random.default_rng(0)
X = RNG.normal(size=(20, 6))
Y = np.repeat([0, 1], 10)


def npy(array) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


# ---------------------------------------------------------------------------- refused, with the message
REFUSED = {
    "q_alpha on identical rows": (lambda: q_alpha(np.tile(RNG.normal(size=6), (20, 1)), 2),
                                  "Every feature is constant over the samples"),
    "q_alpha on data offset by 1e16": (lambda: q_alpha(1e16 + X, 2), "varies only by rounding at its magnitude"),
    "q_alpha with lam as text": (lambda: q_alpha(X, 2, side=X[:5], lam="1"), r"lam must be a number; got '1' \(str\)"),
    "q_alpha with lam 1e308": (lambda: q_alpha(X, 2, pairs=np.array([[0, 1], [2, 3]]), lam=1e308),
                               "lam must be at most 1e\\+12"),
    "q_alpha on complex data": (lambda: q_alpha(X + 1j, 2), "holds complex numbers"),
    "q_alpha with a NaN label": (lambda: q_alpha(X, labels=np.r_[np.zeros(19), np.nan]),
                                 r"1 sample\(s\) have a NaN label \(the first: sample 19\)"),
    "q_alpha with non-integer labels": (lambda: q_alpha(X, labels=np.linspace(0, 1, 20)),
                                        "not whole numbers"),
    "q_alpha with k as a float": (lambda: q_alpha(X, 2.0), "k \\(the number of clusters\\) must be an integer"),
    "q_alpha with tol NaN": (lambda: q_alpha(X, 2, tol=float("nan")), "tol must be a finite number"),
    "q_alpha on dates": (lambda: q_alpha(np.arange(20 * 6).reshape(20, 6).astype("datetime64[D]"), 2),
                         "dates or times"),
    "q_alpha on text": (lambda: q_alpha(np.array([["a", "b"], ["c", "d"]]), 1), "holds text"),
    "q_alpha on a sparse matrix with infinite stored values": (
        lambda: q_alpha(sp.csr_matrix(np.where(X > 1.5, np.inf, X)), 2), "sparse matrix with .* NaN or infinite"),
    "the gap criterion on a sparse matrix": (lambda: q_alpha(sp.csr_matrix(X), 2, criterion="gap"),
                                             "dense in-memory data only"),
    "the topographical map on a sparse matrix": (lambda: topographic_map(sp.csr_matrix(X), 2),
                                                 "sparse matrix; this function needs a dense array"),
    "ReliefF on a sparse matrix": (lambda: score_features("relieff", sp.csr_matrix(X), Y),
                                   "needs the data as a dense in-memory array"),
    "kernel_q_alpha with degree 1000 and coef0 1": (
        lambda: kernel_q_alpha(X, 2, kernel="poly", degree=1000, coef0=1.0), "reaches .* beyond float64's"),
    "kernel_q_alpha with gamma as text": (lambda: kernel_q_alpha(X, 2, kernel="rbf", gamma="5"),
                                          "gamma must be a number"),
    "mutual information with one sample per class": (
        lambda: score_features("mutual_information", X[:4], np.arange(4)), "needs at least 2 samples of each class"),
    "FSCA on an all-zero matrix": (lambda: score_features("fsca", np.zeros((20, 6))),
                                   "Every feature is constant"),
    "Fisher score with labels holding NaN": (lambda: score_features("fisher", X, np.r_[Y[:-1], np.nan]),
                                             "NaN label"),
    "sparse PCA on values near 1e200": (lambda: greedy_spca(1e200 * X), "variances, which sparse PCA reports"),
    "a label column index out of range": (lambda: load_table("t.csv", b"a,b\n1,2\n3,4\n", label_column=7),
                                          "there is no column 7 \\(columns 0 to 1\\)"),
    "a label column holding 1e19": (lambda: load_table("t.csv", b"a,b,y\n1,2,1e19\n3,4,1\n5,6,1\n", label_column="y"),
                                    "beyond the 64-bit range"),
    "an NPY of complex numbers": (lambda: load_table("t.npy", npy(X + 1j)), "complex numbers"),
    "an NPY of timedeltas": (lambda: load_table("t.npy", npy(np.arange(6).astype("timedelta64[s]").reshape(3, 2))),
                             "not numeric"),
    "a CSV cell of 200,000 characters in the header": (
        lambda: load_table("t.csv", b"a," + b"x" * 200_000 + b"\n1,2\n3,4\n"), "field larger than field limit"),
    "a table of one row": (lambda: load_table("t.csv", b"a,b,c\n1,2,3\n"), "1 sample\\(s\\)"),
    "a table of only text": (lambda: load_table("t.csv", b"a,b\nx,y\nz,w\n"), "0 feature\\(s\\)"),
    "a BOM and latin-1 bytes": (lambda: load_table("t.csv", "\ufeffé,b\n1,x\n".encode("latin-1", "replace")),
                                "feature"),
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_refused_with_a_clear_message(case):
    call, message = REFUSED[case]
    with pytest.raises(InputError, match=message):
        call()


# ---------------------------------------------------------------------------- sensible results, all finite
def test_unit_free_methods_rescale_exactly_instead_of_overflowing():
    """Q-alpha normalises every feature and sparse LDA's objective does not depend on the unit:
    values near 1e300 or 1e-300 give the result of the unscaled data."""
    reference = q_alpha(X, 2, random_state=0)
    for factor in (1e300, 1e-300, 2.0**900):
        scaled = q_alpha(X * factor, 2, random_state=0)
        assert np.allclose(scaled.alpha, reference.alpha, atol=1e-10) and scaled.converged
    path = greedy_slda(X, Y)
    for factor in (1e200, 1e-200):
        big = greedy_slda(X * factor, Y)
        assert np.array_equal(big.forward_order, path.forward_order)
        assert np.array_equal(big.backward_order, path.backward_order)
        assert np.allclose(big.dual_objective, path.dual_objective, rtol=1e-10)
    kernel = kernel_q_alpha(X * 1e300, 2, kernel="rbf")
    assert np.allclose(kernel.alpha, kernel_q_alpha(X, 2, kernel="rbf").alpha, atol=1e-10)


@pytest.mark.parametrize("method", ["variance", "fisher", "pearson", "laplacian", "relieff", "fsca", "ks", "surf",
                                    "multisurf", "mrmr", "spec", "mcfs", "udfs", "ndfs"])
def test_scores_on_values_near_1e300_are_finite_and_rank_as_unscaled(method):
    plain = score_features(method, X, Y)
    huge = score_features(method, X * 1e300, Y)
    assert np.isfinite(huge.scores).all() and huge.scale > 1e299
    assert np.array_equal(huge.ranking, plain.ranking)


def test_every_grey_level_of_a_constant_pixel_is_constant():
    """A pixel fixed at any grey level k/255 is left out (it used to survive the cancelling
    sum(x^2) - n mean^2 test as noise, and 29 of the 256 levels crashed the page)."""
    images = RNG.random((30, 12))
    for level in range(256):
        data = images.copy()
        data[:, 5] = level / 255
        result = q_alpha(data, 2)
        assert 5 in result.constant_features, level
        assert result.alpha[5] == 0.0 and np.isfinite(result.alpha).all()


def test_scores_never_minus_infinity():
    wrapper = score_features("forward_wrapper", X, Y, n_features_to_select=2).scores
    assert np.isfinite(wrapper).all() and np.unique(wrapper).size == wrapper.size  # two chosen, the rest by Fisher
    fsca = score_features("fsca", X, Y, n_features_to_select=2).scores
    assert np.isfinite(fsca).all() and np.unique(fsca).size == 3  # two ranked, the rest tied


def test_weights_of_both_signs_are_reported_not_hidden():
    """Strong pairwise side information makes the operator indefinite: the result says so."""
    result = q_alpha(X, 2, pairs=np.array([[i, i + 10] for i in range(10)]), lam=1e6)
    assert np.isfinite(result.objective)
    negative = -result.alpha[result.alpha < 0].sum()
    assert negative > 0.1 * np.abs(result.alpha).sum()  # the case does have mixed signs (28% here)
    assert any("% of the weights' mass is negative" in w for w in result.warnings)
    assert q_alpha(X, 2).warnings == ()  # and a plain run says nothing


def test_csv_with_a_long_text_cell_and_quoted_delimiters_loads():
    text = b'name,a,b\n"x, ' + b"y" * 150_000 + b'",1,2\n"z",3,4\n'
    data = load_table("t.csv", text)
    assert data.X.tolist() == [[1.0, 2.0], [3.0, 4.0]]


def test_a_text_cell_of_200000_characters_is_dropped_with_its_column():
    data = load_table("t.csv", b"a,b,c\n" + b"x" * 200_000 + b",1,2\n1,2,3\n")
    assert data.X.tolist() == [[1.0, 2.0], [2.0, 3.0]] and data.feature_names == ("b", "c")
    assert any("Dropped 1 column holding text: 'a'" in note for note in data.meta["load_report"])


def test_labels_read_from_bool_and_float_integers():
    assert list(q_alpha(X, labels=Y.astype(bool)).alpha.shape) == [6]
    assert score_features("fisher", X, Y.astype(float)).scores.shape == (6,)


# ---------------------------------------------------------------------------- bombs, in fresh processes
def _png(size):
    buffer = io.BytesIO()
    Image.new("L", (size, size)).save(buffer, format="PNG", optimize=True)
    return buffer.getvalue()


def _zeros_member(archive, name, header, n_bytes):
    with archive.open(name, "w", force_zip64=True) as member:
        member.write(header)
        chunk = bytes(1 << 26)
        for _ in range(n_bytes // len(chunk)):
            member.write(chunk)


@pytest.fixture(scope="module")
def bombs(tmp_path_factory):
    """Each a small file that claims or expands to gigabytes."""
    folder = tmp_path_factory.mktemp("bombs")
    made = {}
    blank = _png(4096)
    path = folder / "blank_faces.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for i in range(30):
            archive.writestr(f"person/{i}.png", blank)
    made["30 blank 4096 x 4096 PNGs in a ZIP"] = ("images", path, "per-upload budget")

    # each bomb just over its limit: making them is most of this fixture's time
    path = folder / "zeros.npz"  # 20,000 x 15,000 float64 zeros: 2.4 GB, over the 2 GiB budget
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f8", "fortran_order": False, "shape": (20_000, 15_000)})
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        _zeros_member(archive, "X.npy", header.getvalue(), 20_000 * 15_000 * 8)
    made["an NPZ of 2.4 GB of zeros"] = ("table", path, "per-upload budget")

    path = folder / "huge.npy"  # the header declares 10^6 x 10^6
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f8", "fortran_order": False, "shape": (10**6, 10**6)})
    path.write_bytes(header.getvalue() + bytes(64))
    made["an NPY whose header declares 10^6 x 10^6"] = ("table", path, "per-upload budget")

    path = folder / "sparse.mat"  # 40,000 x 40,000 with 2 non-zeros
    matrix = sp.csc_matrix(([1.0, 2.0], ([0, 39_999], [0, 39_999])), shape=(40_000, 40_000))
    scipy.io.savemat(path, {"X": matrix})
    made["a MAT sparse 40,000 x 40,000 with 2 non-zeros"] = ("table", path, "as a dense matrix")

    path = folder / "zeros.csv.gz"  # 2.3 GB of "0,0,...": more than the budget once decompressed
    import zlib

    line = b",".join([b"0"] * 1000) + b"\n"
    compressor = zlib.compressobj(1, zlib.DEFLATED, 31)
    with open(path, "wb") as out:
        block = line * ((1 << 26) // len(line))
        for _ in range(2_300_000_000 // len(block)):
            out.write(compressor.compress(block))
        out.write(compressor.flush())
    made["a CSV.gz that decompresses to 2.3 GB"] = ("table", path, "decompressed")

    path = folder / "members.zip"  # four 600 MB members named like images: 2.4 GB, over the 2 GiB budget
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        for name in "abcd":
            _zeros_member(archive, f"x/{name}.png", b"", 600 << 20)
    made["four 600 MB members in a ZIP"] = ("images", path, "would unpack to")
    return made


CHILD = """
import json, sys
from pathlib import Path
sys.path.insert(0, {root!r})
from core import InputError
from core.data.loaders import load_images, load_table

def high_water():
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024

path = Path(sys.argv[1])
data = path.read_bytes()
before = high_water()
try:
    if sys.argv[2] == "images":
        load_images([(path.name, data)])
    else:
        load_table(path.name, data)
    message = None
except InputError as error:
    message = str(error)
print(json.dumps(dict(message=message, added=high_water() - before, size=len(data))))
"""


@pytest.mark.slow  # a fresh interpreter per bomb: the slow tier (docs/testing.md)
def test_bombs_are_refused_before_they_expand(bombs):
    script = CHILD.format(root=str(ROOT))
    for name, (kind, path, expected) in bombs.items():
        output = subprocess.run([sys.executable, "-c", script, str(path), kind], capture_output=True,
                                text=True, check=True, timeout=120).stdout
        outcome = json.loads(output.strip().splitlines()[-1])
        assert outcome["message"] is not None, f"{name} was loaded"
        assert expected in outcome["message"], (name, outcome["message"])
        assert "not a readable" not in outcome["message"], (name, outcome["message"])
        bound = 2 * outcome["size"] + (200 << 20)
        print(f"{name}: {outcome['size'] / 2**20:.2f} MB upload, peak +{outcome['added'] / 2**20:.0f} MB, "
              f"bound {bound / 2**20:.0f} MB")
        assert outcome["added"] < bound, f"{name}: peak {outcome['added'] / 2**20:.0f} MB over the bound"


def test_mat_of_zeros_over_the_budget_is_refused_from_its_header():
    buffer = io.BytesIO()
    scipy.io.savemat(buffer, {"X": np.zeros((400, 400))}, do_compression=True)
    assert len(buffer.getvalue()) < 20_000
    from core.limits import LoadLimits

    with pytest.raises(InputError, match=r"'X' would need 1.2 MB in memory, more than the per-upload budget of 1.0 MB"):
        load_table("zeros.mat", buffer.getvalue(), limits=LoadLimits(max_decoded_bytes=1 << 20))


def test_very_wide_csvs_that_used_to_hang():
    """A 1 x 200,000 and a 2 x 200,000 CSV (the issue saw both still loading after 300 s):
    refused and loaded at once."""
    import time

    values = np.round(RNG.normal(size=(2, 200_000)), 4)
    header = ",".join(f"g{j}" for j in range(200_000))
    rows = [",".join(f"{v:g}" for v in row) for row in values]
    start = time.perf_counter()
    with pytest.raises(InputError, match="1 sample\\(s\\)"):
        load_table("one.csv", (header + "\n" + rows[0] + "\n").encode())
    data = load_table("two.csv", (header + "\n" + "\n".join(rows) + "\n").encode())
    assert data.X.shape == (2, 200_000) and np.allclose(data.X, values)
    assert time.perf_counter() - start < 60  # a hang guard, not a benchmark (bench_load.py times it)


def test_many_columns_with_a_repeated_name_are_checked_in_linear_time():
    """The duplicate-name check counted each name against every other (the issue measured 685 s
    for an 800 kB CSV); the repeated name is found and named."""
    names = [f"c{j}" for j in range(60_000)] + ["c7"]
    text = (",".join(names) + "\n" + ",".join("1" for _ in names) + "\n" + ",".join("2" for _ in names) + "\n")
    with pytest.raises(InputError, match="the header repeats the column name\\(s\\) 'c7'"):
        load_table("t.csv", text.encode())
