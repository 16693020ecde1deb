"""The normalised features as products (core/matrix/normalised.py): every form's products against
the normalised matrix computed directly, the sliced preparation, and dense float32 data taken
without a normalised copy."""

import numpy as np
import pytest

from core.matrix import data_matrix, kinds, normalised, threads
from core.matrix.normalised import preprocess_features
from core.selection.qalpha import q_alpha
from test_matrix import sparse_counts
from conftest import as_backend

da = pytest.importorskip("dask.array")


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_block_slices_cover_the_block(monkeypatch, dtype):
    """Float32 chunks are cast slice by slice into one reused buffer: every slice must be its own."""
    import core.matrix.kinds as largedata

    X, _ = sparse_counts(300, 120)
    X = X.astype(dtype)
    monkeypatch.setattr(largedata, "SLICE_BYTES", 8 * 120 * 7)  # slices of 7 rows
    monkeypatch.setattr(largedata, "MIN_SLICE_ROWS", 1)
    features = data_matrix(da.from_array(X, chunks=(100, 50))).normalised()
    reference = data_matrix(X.astype(np.float64)).normalised()
    W = np.random.default_rng(0).standard_normal((features.n_kept, 2))
    for mine, theirs in zip(features.fused(W), reference.fused(W)):
        assert np.allclose(mine, theirs, atol=1e-12)


@pytest.mark.parametrize("name", ["sparse", "dask", "dask-sparse", "float32", "float32-threads"])
def test_implicit_products_equal_the_normalised_matrix(name, monkeypatch):
    """Every product of the implicit forms against the explicit normalised matrix. Dense float32
    data (counts, exact in float32) take the implicit form too; "float32-threads" splits every
    product's rows over the cores, in slices of 5 rows."""
    X, _ = sparse_counts()
    Mt, kept, mean, scale = preprocess_features(X)
    if name == "float32-threads":
        monkeypatch.setattr(normalised, "SMALL_PRODUCT_WORK", 0)
        monkeypatch.setattr(kinds, "SLICE_BYTES", 8 * X.shape[1] * 5)
        monkeypatch.setattr(kinds, "MIN_SLICE_ROWS", 1)
    features = data_matrix(X.astype(np.float32) if name.startswith("float32") else as_backend(X, name)).normalised()
    assert features.Mt is None  # never formed
    assert np.array_equal(features.kept, kept) and X.shape[1] // 2 not in features.kept
    assert np.allclose(features.mean, mean) and np.allclose(features.scale, scale)
    rng = np.random.default_rng(1)
    W, T0 = rng.standard_normal((kept.size, 3)), rng.standard_normal((X.shape[0], 2))
    T, U = features.fused(W)
    assert np.allclose(T, Mt @ W, atol=1e-12) and np.allclose(U, T.T @ Mt, atol=1e-12)
    assert np.allclose(features.times(W), Mt @ W, atol=1e-12)
    assert np.allclose(features.transposed_times(T0), T0.T @ Mt, atol=1e-12)
    weights = rng.random(kept.size)
    assert np.allclose(features.weighted_gram(weights), Mt @ np.diag(weights) @ Mt.T, atol=1e-12)
    assert np.allclose(features.gram(), Mt.T @ Mt, atol=1e-12)
    assert np.allclose(features.rows([4, 0, 9]), Mt[[4, 0, 9]], atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_sliced_preparation_on_threads_equals_the_direct_formula(monkeypatch, dtype):
    """Data of over a million values take the sliced path on every core: with a constant feature
    (so the kept columns are gathered slice by slice), an offset of 1e6 (so a sum of squares
    about zero would cancel) and slices of 32 rows, Mt is (X - mean) / ||X - mean|| as NumPy
    computes it directly, and its products (slices in cache, rows split over the cores) are Mt's."""
    import core.matrix.kinds as kinds
    from core.matrix.normalised import DenseFeatures

    monkeypatch.setattr(kinds, "SLICE_BYTES", 1)  # the floor: slices of MIN_SLICE_ROWS rows
    monkeypatch.setattr(kinds, "SCAN_SLICE_BYTES", 1)
    rng = np.random.default_rng(5)
    X = 1e6 + rng.standard_normal((3001, 800))
    X[:, 7] = 3.0
    assert X.size >= threads.PARALLEL_VALUES
    Mt, kept, mean, scale = preprocess_features(X, dtype=dtype)
    centred = X[:, kept] - X[:, kept].mean(axis=0)
    expected = centred / np.linalg.norm(centred, axis=0)
    assert np.array_equal(kept, np.delete(np.arange(800), 7)) and Mt.dtype == dtype
    assert np.allclose(Mt, expected, rtol=0, atol=1e-9 if dtype == np.float64 else 1e-6)
    assert np.allclose(mean, X[:, kept].mean(axis=0), rtol=1e-15, atol=0)
    assert np.allclose(scale, np.linalg.norm(centred, axis=0), rtol=1e-8, atol=0)
    if dtype == np.float64:  # squares that would overflow: the moments read again, scaled
        huge, huge_kept, huge_mean, _ = preprocess_features(X * 1e200)
        assert np.array_equal(huge_kept, kept) and np.allclose(huge, Mt, rtol=0, atol=1e-9)
        assert np.allclose(huge_mean, mean * 1e200, rtol=1e-15, atol=0)
    features = DenseFeatures(X)
    W = rng.standard_normal((kept.size, 13))  # 3e7 multiply-adds: the sliced products
    T, U = features.fused(W)
    assert np.allclose(T, features.Mt @ W, rtol=0, atol=1e-11)
    assert np.allclose(U, (features.Mt @ W).T @ features.Mt, rtol=0, atol=1e-10)


def test_float32_data_take_no_normalised_copy(monkeypatch):
    """Dense float32 input stays float32 in the DataMatrix (dense() gives float64 on request), and
    Q-alpha's normalised features are products with it: no float64 copy of any size (a stored Mt
    was twice the input's bytes), the weights those of the run on the float64 copy. The gap
    criterion, which reads Mt itself, still stores it."""
    import tracemalloc

    rng = np.random.default_rng(8)
    # samples above GRAM_LIMIT (no q x q Gram matrix); three groups, each with 4 features of its own
    X = rng.standard_normal((6000, 300)).astype(np.float32)
    monkeypatch.setattr(kinds, "SLICE_BYTES", 256 << 10)  # the products' slices: small beside these data
    groups = rng.integers(0, 3, X.shape[0])
    X[:, :12] += 2.0 * (groups[:, None] == np.arange(12) // 4)
    X[:, 3] += 40.0
    data = data_matrix(X)
    assert data.values.dtype == np.float32 and data.values is X
    assert data.dense().dtype == np.float64 and np.array_equal(data.dense(), X.astype(np.float64))
    assert data.dense() is data.dense() and not data.dense().flags.writeable  # one copy, shared read-only
    q_alpha(X[:50, :20], 2)  # imports on first use are not the run's memory
    tracemalloc.start()
    features = data_matrix(X).normalised()
    preparation = tracemalloc.get_traced_memory()[1]
    tracemalloc.reset_peak()
    result = q_alpha(X, 3)
    run = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert features.Mt is None and features.dtype == np.float64
    # the stored Mt took 2.0x the input's bytes, a float64 copy first 4.0x
    assert preparation < 0.3 * X.nbytes and run < 1.0 * X.nbytes, (preparation / X.nbytes, run / X.nbytes)
    reference = q_alpha(X.astype(np.float64), 3)
    assert np.allclose(result.alpha, reference.alpha, rtol=0, atol=1e-10) and result.converged
    assert data_matrix(X).normalised(stored=True).Mt.dtype == np.float64
    few = X[:300, :40]
    gap = q_alpha(few, 3, criterion="gap", max_iter=3)
    assert np.allclose(gap.alpha, q_alpha(few.astype(np.float64), 3, criterion="gap", max_iter=3).alpha, atol=1e-12)


def test_float32_products_with_an_offset_lose_only_what_the_correction_costs():
    """The centring is a rank-one correction on the raw float32 values: with features near 1,000
    of spread 1 it costs about eps * 1,000 of a product, far below the float32 values' own
    resolution (6e-5 at 1,000). Against the normalised matrix computed directly in float64."""
    rng = np.random.default_rng(12)
    X = (1000.0 + rng.standard_normal((500, 300)) * rng.uniform(0.5, 2.0, 300)).astype(np.float32)
    exact = X.astype(np.float64) - X.astype(np.float64).mean(axis=0)
    exact /= np.linalg.norm(exact, axis=0)
    features = data_matrix(X).normalised()
    W = rng.standard_normal((300, 4))
    T, U = features.fused(W)
    assert features.Mt is None
    assert np.abs(T - exact @ W).max() < 1e-10 and np.abs(U - (exact @ W).T @ exact).max() < 1e-10
    weights = rng.random(300)
    assert np.abs(features.weighted_gram(weights) - (exact * weights) @ exact.T).max() < 1e-12
    assert np.abs(features.gram() - exact.T @ exact).max() < 1e-10


def test_float32_data_with_few_samples_take_no_normalised_copy_for_their_gram_matrix():
    """Up to GRAM_LIMIT samples the start comes from the q x q matrix Mt diag(w) Mt^T, summed
    from blocks of normalised columns: batches of rows as products took five n x batch float64
    arrays (200 x 50,000 float32: 5.1x the input's bytes); the stored Mt alone would be 2x."""
    import tracemalloc

    X = np.random.default_rng(3).standard_normal((200, 50000)).astype(np.float32)
    X[:100, :5] += 3.0
    q_alpha(X[:50, :20], 2)  # imports on first use are not the run's memory
    tracemalloc.start()
    result = q_alpha(X, 2, max_iter=3)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 1.0 * X.nbytes, peak / X.nbytes
    assert np.allclose(result.alpha, q_alpha(X.astype(np.float64), 2, max_iter=3).alpha, rtol=0, atol=1e-10)


def test_sparse_data_with_a_large_common_offset_are_centred_without_cancellation():
    """Values 1e8 + N(0, 1) as CSR: the rank-one centring lost every digit of the weighted Gram
    matrix and Q-alpha found none of the 8 planted features. Such columns are full, so they are
    centred as a dense copy (no larger than the CSR), and the run equals the ndarray's; a truly
    sparse matrix keeps its products."""
    from scipy import sparse

    from core.matrix import data_matrix
    from core.matrix.normalised import DenseFeatures, SparseFeatures
    from core.selection.qalpha import q_alpha

    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 200))
    X[30:, :8] += 2.0
    X += 1e8
    dense, csr = q_alpha(X, 2), q_alpha(sparse.csr_matrix(X), 2)
    assert set(csr.top(8)) == set(dense.top(8)) == set(range(8))
    assert np.abs(csr.alpha - dense.alpha).max() <= 1e-10
    assert isinstance(data_matrix(sparse.csr_matrix(X)).normalised(), DenseFeatures)
    counts = sparse.random(200, 1_000, density=0.01, format="csr", random_state=0)
    assert isinstance(data_matrix(counts).normalised(), SparseFeatures)


@pytest.mark.parametrize("chunks", ["dense", "sparse"])
def test_chunked_data_with_a_large_common_offset_are_centred_block_by_block(chunks):
    """Values 1e8 + N(0, 1) as a Dask array: centred by the rank-one correction, Q-alpha's weights
    were 2.8e-6 (dense chunks) and 1.3e-6 (sparse chunks) from the ndarray run's. Each block is
    now centred before its products: within the values' own resolution (1e8 eps = 1.5e-8) of it."""
    from scipy import sparse

    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 200))
    X[30:, :8] += 2.0
    X += 1e8
    chunked = da.from_array(X, chunks=(20, 100))
    if chunks == "sparse":
        chunked = chunked.map_blocks(sparse.csr_matrix)
    features = data_matrix(chunked).normalised()
    assert features.centred_in_blocks
    dense, by_blocks = q_alpha(X, 2), q_alpha(chunked, 2)
    assert set(by_blocks.top(8)) == set(dense.top(8)) == set(range(8))
    assert np.abs(by_blocks.alpha - dense.alpha).max() <= 1e-7
    W = rng.standard_normal((features.n_kept, 3))  # the products themselves, against the stored form
    stored = data_matrix(X).normalised()
    np.testing.assert_allclose(features.times(W), stored.times(W), rtol=0, atol=1e-6)
    np.testing.assert_allclose(features.transposed_times(stored.times(W)), stored.transposed_times(stored.times(W)),
                               rtol=0, atol=1e-5)
    assert not data_matrix(da.from_array(X - 1e8, chunks=(20, 100))).normalised().centred_in_blocks


@pytest.mark.parametrize("block_columns", [16, 1024])
@pytest.mark.parametrize("negative_share", [0.0, 0.02, 0.2, 0.6, 1.0])
def test_the_weighted_gram_matrix_with_negative_weights_equals_the_direct_product(monkeypatch, negative_share,
                                                                                  block_columns):
    """Weights of both signs (the ascent's iterates): blocks of 16 columns, some with a few negative
    weights (a symmetric update less the correction), some with many (one general product), or all
    200 in one block, against ``Mt diag(w) Mt^T`` formed directly; exactly symmetric where every
    block took the update."""
    monkeypatch.setattr(normalised, "GRAM_BLOCK_COLUMNS", block_columns)
    rng = np.random.default_rng(5)
    X = rng.standard_normal((12, 200))
    features = data_matrix(X).normalised()
    Mt = features.Mt
    weights = rng.random(200)
    flipped = rng.random(200) < negative_share
    weights[flipped] *= -0.5
    direct = (Mt * weights) @ Mt.T
    gram = features.weighted_gram(weights)
    assert np.abs(gram - direct).max() <= 1e-13 * np.abs(direct).max()
    if negative_share <= 0.02:
        assert np.array_equal(gram, gram.T)


def test_a_thin_pass_over_wide_data_split_over_the_cores_equals_one_product(monkeypatch):
    """While BLAS runs on one thread, ``Q^T Mt`` of wide data is cut into column ranges, one per
    core (made 4 here), each written in place: the whole product, every column once."""
    monkeypatch.setattr(threads, "cores", lambda: 4)
    monkeypatch.setattr(normalised, "cores", lambda: 4)
    monkeypatch.setattr(normalised, "PARALLEL_VALUES", 1)
    monkeypatch.setattr(normalised, "SPLIT_ROW_BYTES", 8)
    rng = np.random.default_rng(6)
    features = data_matrix(rng.standard_normal((7, 103))).normalised()
    Q = rng.standard_normal((7, 3))
    parts = []
    real = normalised.map_on_cores
    monkeypatch.setattr(normalised, "map_on_cores", lambda f, *ranges, **kw: parts.extend(zip(*ranges)) or real(f, *ranges, **kw))
    with threads.one_blas_thread():
        split = features.transposed_times(Q)
    assert [stop - start for start, stop in parts] == [25, 26, 26, 26]  # four ranges, every column once
    np.testing.assert_allclose(split, Q.T @ features.Mt, rtol=0, atol=1e-13)
    parts.clear()
    features.transposed_times(Q)  # BLAS's own threads: one product
    assert parts == []


@pytest.mark.parametrize("columns", [1, 2, 3, 4])
def test_a_thin_product_by_matrix_vector_products_over_column_blocks_equals_one_product(columns, monkeypatch):
    """``M^T W`` with at most GEMV_COLUMNS columns in ``W`` is summed over blocks of Mt's columns
    (made 10 wide here, the last one 3), each column of ``W`` by itself: the whole product, in
    float64 and float32 data; a ``W`` of another type than the data is one product."""
    monkeypatch.setattr(normalised, "GEMV_VALUES", 1)
    monkeypatch.setattr(normalised, "GEMV_BLOCK", 10)
    rng = np.random.default_rng(columns)
    X = rng.standard_normal((9, 103))
    for dtype in (np.float64, np.float32):
        features = data_matrix(X).normalised(dtype=dtype)
        W = rng.standard_normal((103, columns)).astype(dtype)
        product = features.times(W)
        assert product.shape == (9, columns) and product.dtype == dtype
        exact = features.Mt.astype(np.float64) @ W.astype(np.float64)
        np.testing.assert_allclose(product, exact, rtol=0, atol=1e-13 if dtype == np.float64 else 1e-5)
    np.testing.assert_allclose(features.times(W.astype(np.float64)), exact, rtol=0, atol=1e-5)
