"""Loaders: what users upload, good and bad. Every input is built in memory; nothing touches disk."""

import io
import zipfile

import numpy as np
import pytest
from PIL import Image

from core import InputError
from core.data.dataset import Dataset
from core.data.loaders import LoadLimits, load_images, load_side_data, load_table, table_columns


def image_bytes(array, fmt="PNG", mode=None):
    buffer = io.BytesIO()
    Image.fromarray(np.asarray(array), mode=mode).save(buffer, format=fmt)
    return buffer.getvalue()


def gradient(h=6, w=4, offset=0):
    return ((np.arange(h * w).reshape(h, w) * 7 + offset) % 256).astype(np.uint8)


def zip_bytes(entries):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
    return buffer.getvalue()


# ------------------------------------------------------------------ images: good input
@pytest.mark.parametrize("fmt", ["PNG", "JPEG", "BMP", "TIFF", "GIF", "PPM"])
def test_formats_become_grayscale_in_unit_range(fmt):
    rgb = np.dstack([gradient(), gradient(offset=30), gradient(offset=60)])
    files = [(f"a.{fmt.lower()}", image_bytes(rgb, fmt)), (f"b.{fmt.lower()}", image_bytes(rgb, fmt))]
    data = load_images(files, labels_from=None)
    assert data.image_shape == (6, 4) and data.n_samples == 2
    assert data.X.min() >= 0 and data.X.max() <= 1 and data.labels is None


def test_pgm_sixteen_bit_and_exact_values():
    gray = gradient()
    data = load_images([("a.pgm", image_bytes(gray, "PPM")), ("b.png", image_bytes(gray))], labels_from=None)
    assert np.allclose(data.X[1], gray.ravel() / 255.0)
    deep = (np.arange(24).reshape(6, 4) * 1000).astype(np.uint16)
    data = load_images([("a.png", image_bytes(deep)), ("b.png", image_bytes(deep))], labels_from=None)
    assert np.allclose(data.X[0], deep.ravel() / 65535.0)


def test_zip_with_class_folders_and_upright_rows():
    face = gradient(5, 3)
    archive = zip_bytes({"faces/alice/1.png": image_bytes(face), "faces/alice/2.png": image_bytes(face),
                         "faces/bob/1.png": image_bytes(255 - face), "__MACOSX/._1.png": b"junk"})
    data = load_images([("faces.zip", archive)])
    assert sorted(data.labels) == ["alice", "alice", "bob"]
    assert data.image_shape == (5, 3)
    assert np.allclose(data.images()[data.sample_names.index("faces/alice/1.png")], face / 255.0)
    assert data.meta["load_report"] == []


def test_labels_from_prefix():
    files = [("anna_1.png", image_bytes(gradient())), ("anna_2.png", image_bytes(gradient())),
             ("ben_1.png", image_bytes(gradient()))]
    data = load_images(files, labels_from="prefix")
    assert list(data.labels) == ["anna", "anna", "ben"]
    # a '#' in a file name is the user's, not a page number of a TIFF stack
    files = [("ann#1_a.png", image_bytes(gradient())), ("ann#1_b.png", image_bytes(gradient()))]
    assert list(load_images(files, labels_from="prefix").labels) == ["ann#1", "ann#1"]


def test_mixed_sizes_resized_and_reported_or_refused():
    files = [("a.png", image_bytes(gradient(6, 4))), ("b.png", image_bytes(gradient(6, 4))),
             ("c.png", image_bytes(gradient(12, 8)))]
    data = load_images(files, labels_from=None)
    assert data.image_shape == (6, 4)
    assert "Resized 1 of 3 images to 6 x 4" in data.meta["load_report"][0]
    with pytest.raises(InputError, match="1 image\\(s\\) differ from the most common size 6 x 4"):
        load_images(files, labels_from=None, strict_size=True)


# ------------------------------------------------------------------ images: bad input
def test_empty_file():
    with pytest.raises(InputError, match="empty \\(0 bytes\\)"):
        load_images([("a.png", b"")])


def test_truncated_and_unreadable_images():
    noise = np.random.default_rng(0).integers(0, 256, (64, 64)).astype(np.uint8)
    good = image_bytes(noise)
    with pytest.raises(InputError, match="a.png: unreadable or truncated"):
        load_images([("a.png", good[: len(good) // 2]), ("b.png", good[: len(good) // 3])])
    with pytest.raises(InputError, match="not a readable image"):
        load_images([("a.png", b"this is not a png at all")])


def test_non_image_in_zip_is_skipped_and_listed_or_rejected():
    archive = zip_bytes({"x/1.png": image_bytes(gradient()), "x/2.png": image_bytes(gradient()),
                         "x/notes.txt": b"hello"})
    data = load_images([("a.zip", archive)])
    assert data.n_samples == 2
    assert "x/notes.txt (not an image file)" in data.meta["load_report"][-1]
    with pytest.raises(InputError, match="No usable image.*notes.txt: not an image file"):
        load_images([("b.zip", zip_bytes({"notes.txt": b"hello"}))])


def test_one_by_one_image():
    with pytest.raises(InputError, match="too small \\(1 x 1\\)"):
        load_images([("a.png", image_bytes(np.zeros((1, 1), np.uint8))),
                     ("b.png", image_bytes(np.zeros((1, 1), np.uint8)))])


def test_single_usable_image():
    with pytest.raises(InputError, match="Only one usable image"):
        load_images([("a.png", image_bytes(gradient()))])


def test_decompression_bomb_is_refused_before_decoding():
    bomb = image_bytes(np.zeros((5000, 5000), np.uint8))  # 25 Mpixel, a few kB compressed
    assert len(bomb) < 100_000
    with pytest.raises(InputError, match="decompression-bomb guard"):
        load_images([("bomb.png", bomb)])
    limits = LoadLimits(max_image_pixels=100)
    with pytest.raises(InputError, match="above the limit of 100 pixels"):
        load_images([("a.png", image_bytes(gradient(20, 20))), ("b.png", image_bytes(gradient(20, 20)))],
                    limits=limits)


def test_too_many_images():
    files = [(f"{i}.png", image_bytes(gradient())) for i in range(6)]
    with pytest.raises(InputError, match="6 images were given, more than the limit of 5"):
        load_images(files, limits=LoadLimits(max_images=5))


@pytest.mark.parametrize("bad_path", ["/etc/passwd.png", "../escape.png", "a/../../b.png", "C:/x.png"])
def test_zip_with_unsafe_paths(bad_path):
    archive = zip_bytes({"ok/1.png": image_bytes(gradient()), bad_path: image_bytes(gradient())})
    with pytest.raises(InputError, match="unsafe path"):
        load_images([("evil.zip", archive)])


def test_zip_over_uncompressed_limit_and_other_members_never_read():
    archive = zip_bytes({"a/1.png": image_bytes(gradient()), "a/big.png": b"\0" * 200_000})
    with pytest.raises(InputError, match=r"would unpack to 195.4 kB, more than the limit of 97.7 kB \(LoadLimits.max_zip_uncompressed_bytes\)"):
        load_images([("big.zip", archive)], limits=LoadLimits(max_zip_uncompressed_bytes=100_000))
    # a member that is not an image is listed, not decompressed: its size does not count
    archive = zip_bytes({"a/1.png": image_bytes(gradient()), "a/2.png": image_bytes(gradient()),
                         "a/big.bin": b"\0" * 200_000})
    data = load_images([("big.zip", archive)], limits=LoadLimits(max_zip_uncompressed_bytes=100_000))
    assert data.n_samples == 2 and "a/big.bin (not an image file)" in data.meta["load_report"][-1]


def test_not_a_zip():
    with pytest.raises(InputError, match="not a readable ZIP"):
        load_images([("a.zip", b"PK\x03\x04 broken")])


# ------------------------------------------------------------------ tables: good input
def test_csv_with_header_and_text_label_column():
    text = b"id_a,gene1,gene2,kind\n1,0.5,2,tumour\n2,0.25,3,normal\n3,1e-3,4,tumour\n"
    assert table_columns("t.csv", text) == ["id_a", "gene1", "gene2", "kind"]
    data = load_table("t.csv", text, label_column="kind")
    assert data.feature_names == ("id_a", "gene1", "gene2")
    assert np.allclose(data.X, [[1, 0.5, 2], [2, 0.25, 3], [3, 1e-3, 4]])
    assert list(data.labels) == ["tumour", "normal", "tumour"]


def test_tsv_without_header_and_numeric_labels_by_index():
    text = b"1\t2\t0\n3\t4\t1\n5\t6\t1\n"
    data = load_table("t.tsv", text, label_column=2)
    assert data.feature_names == ("column 0", "column 1") and list(data.labels) == [0, 1, 1]


def test_semicolon_csv_is_sniffed():
    data = load_table("t.csv", b"a;b;c\n1;2;3\n4;5;6\n")
    assert data.X.shape == (2, 3)


def test_npy_npz_mat():
    X = np.arange(12.0).reshape(4, 3)
    buffer = io.BytesIO(); np.save(buffer, X)
    assert np.array_equal(load_table("x.npy", buffer.getvalue()).X, X)
    buffer = io.BytesIO(); np.savez(buffer, X=X, Y=np.array([0, 1, 0, 1]))
    data = load_table("x.npz", buffer.getvalue())
    assert np.array_equal(data.X, X) and list(data.labels) == [0, 1, 0, 1]
    import scipy.io
    buffer = io.BytesIO(); scipy.io.savemat(buffer, {"data": X, "cls": np.array([[1], [2], [1], [2]])})
    data = load_table("x.mat", buffer.getvalue(), x_key="data", y_key="cls")
    assert np.array_equal(data.X, X) and list(data.labels) == [1, 2, 1, 2]
    with pytest.raises(InputError, match="no data array 'X'; it holds cls, data"):
        load_table("x.mat", buffer.getvalue())


# ------------------------------------------------------------------ tables: bad input
def test_table_empty_file():
    with pytest.raises(InputError, match="empty \\(0 bytes\\)"):
        load_table("t.csv", b"")


def test_csv_text_columns_become_names_or_are_dropped_with_a_note():
    text = b"name,city,value,other\nann,paris,1,2\nbob,rome,3,4\n"
    data = load_table("t.csv", text)
    assert data.sample_names == ("ann", "bob") and data.feature_names == ("value", "other")
    assert any("Dropped 1 column holding text: 'city'" in note for note in data.meta["load_report"])


@pytest.mark.parametrize("cell", ["nan", "", "NA", "?"])
def test_csv_missing_values_refused_by_default(cell):
    text = f"a,b,c\n1,2,3\n4,{cell},6\n7,8,9\n".encode()
    with pytest.raises(InputError, match="1 missing value in 1 feature and 1 sample \\(the first in sample 2, 'b'\\)"):
        load_table("t.csv", text)


def test_csv_infinite_values_refused():
    with pytest.raises(InputError, match="1 infinite value\\(s\\), the first in sample 2, 'b'"):
        load_table("t.csv", b"a,b,c\n1,2,3\n4,inf,6\n")


def test_single_sample():
    with pytest.raises(InputError, match="1 sample\\(s\\); feature selection needs at least two"):
        load_table("t.csv", b"a,b,c\n1,2,3\n")


def test_fewer_than_two_features():
    with pytest.raises(InputError, match="1 feature\\(s\\)"):
        load_table("t.csv", b"a,label\n1,x\n2,y\n", label_column="label")


def test_duplicate_header():
    with pytest.raises(InputError, match="the header repeats the column name\\(s\\) 'a'"):
        load_table("t.csv", b"a,b,a\n1,2,3\n4,5,6\n")


def test_npz_with_pickled_object_array_is_refused():
    buffer = io.BytesIO()
    np.savez(buffer, X=np.array([{"a": 1}, None], dtype=object))
    with pytest.raises(InputError, match="pickled object array"):
        load_table("x.npz", buffer.getvalue())
    buffer = io.BytesIO()
    np.save(buffer, np.array([[1, "a"]], dtype=object), allow_pickle=True)
    with pytest.raises(InputError, match="pickled object array"):
        load_table("x.npy", buffer.getvalue())


def test_unsupported_extension_and_unknown_label_column():
    with pytest.raises(InputError, match="unsupported file type .xlsx"):
        load_table("t.xlsx", b"abc")
    with pytest.raises(InputError, match="no column 'kind'"):
        load_table("t.csv", b"a,b\n1,2\n3,4\n", label_column="kind")
    with pytest.raises(InputError, match="line 3 has 4 cells but the lines before it have 3"):
        load_table("t.csv", b"a,b,c\n1,2,3\n4,5,6,7\n")


def test_side_data_must_describe_the_same_features():
    main = Dataset(np.zeros((3, 24)), image_shape=(6, 4), name="main")
    images = [(f"side_{i}.png", image_bytes(gradient(offset=i))) for i in range(3)]
    side = load_side_data(images, like=main)
    assert side.n_samples == 3 and side.n_features == 24 and side.name == "side: 3 files"
    assert load_side_data([("s.zip", zip_bytes(dict(images)))], like=main).n_samples == 3
    with pytest.raises(InputError, match=r"3 features but the current data set has 24.*same features"):
        load_side_data([("genes.csv", b"a,b,c\n1,2,3\n4,5,6\n")], like=main)
    with pytest.raises(InputError, match=r"images of 3 x 2 pixels; the current images are 6 x 4"):
        load_side_data([(f"small_{i}.png", image_bytes(gradient(3, 2, i))) for i in range(2)], like=main)
    with pytest.raises(InputError, match="not a mix"):
        load_side_data(images + [("genes.csv", b"a\n1\n")], like=main)
    # a zipped table is a table, not a folder of images
    table = "\n".join(",".join(str(v) for v in row) for row in np.arange(72).reshape(3, 24)).encode()
    side = load_side_data([("side.zip", zip_bytes({"side/W.csv": table}))], like=main)
    assert side.n_samples == 3 and side.n_features == 24
    with pytest.raises(InputError, match="Upload a table or image"):
        load_side_data([], like=main)


def test_concurrent_uploads_keep_their_own_limits_and_change_no_process_state():
    """Streamlit serves each session on its own thread: two uploads decoding at once are each
    judged by their own limits, and neither changes what the process shares (PIL's
    decompression-bomb limit, the warnings filters)."""
    import sys
    import threading
    import warnings

    rounds = 300
    buffer = io.BytesIO()
    Image.fromarray(np.zeros((100, 200), dtype=np.uint8)).save(buffer, format="PNG")  # 20,000 pixels
    files = [(f"face_{i}.png", buffer.getvalue()) for i in range(3)]
    shared_before = (Image.MAX_IMAGE_PIXELS, list(warnings.filters))
    outcomes = {"strict": [], "default": []}

    def upload(kind, limits):
        for _ in range(rounds):
            try:
                outcomes[kind].append(load_images(files, labels_from=None, limits=limits).n_samples)
            except InputError as error:
                outcomes[kind].append(str(error))

    threads = [threading.Thread(target=upload, args=("strict", LoadLimits(max_image_pixels=10_000))),
               threading.Thread(target=upload, args=("default", LoadLimits()))]
    interval = sys.getswitchinterval()
    # switch threads as often as CPython can: with the limit set process-wide (as the loader once
    # did) the default upload lost images to the strict one's limit in 3 of 3 runs of 300 rounds
    sys.setswitchinterval(1e-6)
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    assert all(isinstance(outcome, str) and "above the limit of 10,000 pixels" in outcome
               for outcome in outcomes["strict"]) and len(outcomes["strict"]) == rounds
    assert outcomes["default"] == [3] * rounds
    assert (Image.MAX_IMAGE_PIXELS, list(warnings.filters)) == shared_before
