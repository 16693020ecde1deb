"""Loaders for what users upload: image files or ZIPs of them, and tables.

Every loader takes file names and bytes (never a path on disk: nothing is extracted or written)
and returns a :class:`~core.dataset.Dataset`, or raises :class:`~core.errors.InputError` with a
message that says what was wrong and what to do. Problems that do not stop the load (a resized
image, a skipped file) are listed in ``dataset.meta["load_report"]``.
"""

from __future__ import annotations

import csv
import io
import posixpath
import warnings
import zipfile
from collections import Counter
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Sequence

import numpy as np
from PIL import Image, UnidentifiedImageError

from .dataset import Dataset
from .errors import InputError

__all__ = ["LoadLimits", "IMAGE_EXTENSIONS", "TABLE_EXTENSIONS", "load_images", "load_table",
           "load_side_data", "table_columns"]

IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".gif", ".pgm", ".ppm",
                    ".pbm", ".pnm")
TABLE_EXTENSIONS = (".csv", ".tsv", ".txt", ".npy", ".npz", ".mat")


@dataclass(frozen=True)
class LoadLimits:
    """Limits that keep a single upload from exhausting the machine.

    ``max_image_pixels`` is also the decompression-bomb limit: an image that declares more
    pixels is refused before it is decoded (Pillow's own check is set to the same value).
    """

    max_images: int = 5000
    max_image_pixels: int = 4096 * 4096
    max_zip_uncompressed_bytes: int = 1 << 30
    max_zip_entries: int = 50_000
    min_image_side: int = 2


# ---------------------------------------------------------------------------- images
def _is_zip(filename: str, data: bytes) -> bool:
    return filename.lower().endswith(".zip") or data[:4] == b"PK\x03\x04"


def _zip_members(filename: str, data: bytes, limits: LoadLimits):
    """Yield ``(path inside the ZIP, bytes)`` of the regular files, after checking the archive."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        raise InputError(f"{filename} is not a readable ZIP archive (it may be truncated); "
                         "create it again and re-upload.") from None
    with archive:
        infos = [info for info in archive.infolist() if not info.is_dir()]
        if len(infos) > limits.max_zip_entries:
            raise InputError(f"{filename} holds {len(infos):,} files, more than the limit of "
                             f"{limits.max_zip_entries:,}.")
        for info in infos:
            path = info.filename.replace("\\", "/")
            parts = PurePosixPath(path).parts
            if path.startswith("/") or (len(path) > 1 and path[1] == ":") or ".." in parts:
                raise InputError(f"{filename} contains an unsafe path ({info.filename!r}: absolute "
                                 "or with '..'); such archives are refused. Zip the folder again "
                                 "with relative paths.")
        total = sum(info.file_size for info in infos)
        if total > limits.max_zip_uncompressed_bytes:
            raise InputError(f"{filename} would unpack to {total / 2**20:,.0f} MB, more than the "
                             f"limit of {limits.max_zip_uncompressed_bytes / 2**20:,.0f} MB.")
        for info in infos:
            name = PurePosixPath(info.filename.replace("\\", "/"))
            if name.parts[0] == "__MACOSX" or name.name.startswith("."):
                continue  # archive-tool metadata, not user files
            try:
                yield str(name), archive.read(info)
            except (zipfile.BadZipFile, OSError, EOFError) as exc:
                yield str(name), exc


def _decode_image(path: str, data: bytes, limits: LoadLimits):
    """An ``Image`` in mode "L" or "F" (values scaled to [0, 1] later), or a reason to skip."""
    if isinstance(data, Exception) or len(data) == 0:
        return None, "empty (0 bytes)" if not isinstance(data, Exception) else "corrupt ZIP entry"
    previous = Image.MAX_IMAGE_PIXELS
    Image.MAX_IMAGE_PIXELS = limits.max_image_pixels
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            image = Image.open(io.BytesIO(data))
            width, height = image.size
            if width * height > limits.max_image_pixels:
                return None, (f"{width} x {height} pixels is above the limit of "
                              f"{limits.max_image_pixels:,} pixels (decompression-bomb guard)")
            image.seek(0)  # first frame of an animated GIF or multi-page TIFF
            image.load()
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        return None, f"above the limit of {limits.max_image_pixels:,} pixels (decompression-bomb guard)"
    except UnidentifiedImageError:
        return None, "not a readable image"
    except (OSError, SyntaxError, ValueError, EOFError):
        return None, "unreadable or truncated image"
    finally:
        Image.MAX_IMAGE_PIXELS = previous
    if min(image.size) < limits.min_image_side:
        return None, (f"too small ({image.size[0]} x {image.size[1]}); images need at least "
                      f"{limits.min_image_side} pixels a side")
    if image.mode in ("I;16", "I;16B", "I;16L", "I"):
        values = np.asarray(image, dtype=np.float64) / 65535.0
        return Image.fromarray(np.clip(values, 0, 1).astype(np.float32), mode="F"), None
    if image.mode == "F":
        values = np.asarray(image, dtype=np.float64)
        span = float(np.ptp(values)) or 1.0
        return Image.fromarray(((values - values.min()) / span).astype(np.float32), mode="F"), None
    return image.convert("L"), None


def _as_array(image: Image.Image) -> np.ndarray:
    values = np.asarray(image, dtype=np.float64)
    return values if image.mode == "F" else values / 255.0


def load_images(files: Sequence[tuple[str, bytes]], *, labels_from: str | None = "folder",
                prefix_separator: str = "_", strict_size: bool = False,
                limits: LoadLimits = LoadLimits(), name: str = "uploaded images") -> Dataset:
    """Load images (or ZIP archives of them) into an image data set.

    Parameters
    ----------
    files : sequence of (filename, bytes)
        Image files (PNG, JPEG, BMP, TIFF, GIF, PGM/PPM) and/or ZIP archives; a ZIP is read in
        memory. Files that are not images are skipped and listed in the report.
    labels_from : {"folder", "prefix", None}
        ``"folder"``: the name of the folder holding each image inside a ZIP (one folder per
        class). ``"prefix"``: the part of the file name before ``prefix_separator``
        (``alice_01.png`` -> ``alice``). ``None``: no labels.
    strict_size : bool
        Refuse images whose size differs from the most common one instead of resizing them.
    limits : LoadLimits
    name : str
        Display name of the data set.

    Returns
    -------
    Dataset
        Grayscale images in [0, 1], upright, one per row; ``meta["load_report"]`` lists what
        was resized or skipped.
    """
    if labels_from not in ("folder", "prefix", None):
        raise InputError(f"labels_from must be 'folder', 'prefix' or None; got {labels_from!r}.")
    if not files:
        raise InputError("No files were given. Upload image files or a ZIP with one folder per class.")
    candidates, skipped = [], []
    for filename, data in files:
        if len(data) == 0:
            skipped.append((filename, "empty (0 bytes)"))
        elif _is_zip(filename, data):
            for path, member in _zip_members(filename, data, limits):
                candidates.append((path, member))
        else:
            candidates.append((filename, data))
    images = [(path, data) for path, data in candidates
              if posixpath.splitext(path.lower())[1] in IMAGE_EXTENSIONS]
    skipped += [(path, "not an image file") for path, data in candidates
                if posixpath.splitext(path.lower())[1] not in IMAGE_EXTENSIONS]
    if len(images) > limits.max_images:
        raise InputError(f"{len(images):,} images were given, more than the limit of "
                         f"{limits.max_images:,}. Upload a smaller selection.")
    decoded = []
    for path, data in images:
        image, reason = _decode_image(path, data, limits)
        if image is None:
            skipped.append((path, reason))
        else:
            decoded.append((path, image))
    if not decoded:
        detail = "; ".join(f"{p}: {r}" for p, r in skipped[:10]) or "no files"
        raise InputError(f"No usable image was found ({detail}). Upload PNG, JPEG, BMP, TIFF, GIF "
                         "or PGM/PPM images, or a ZIP of them.")
    if len(decoded) < 2:
        raise InputError(f"Only one usable image ({decoded[0][0]}); feature selection needs at "
                         "least two samples.")

    sizes = Counter(image.size for _, image in decoded)
    (width, height), _ = sizes.most_common(1)[0]
    other = [(path, image.size) for path, image in decoded if image.size != (width, height)]
    report = []
    if other and strict_size:
        listed = ", ".join(f"{p} ({w} x {h})" for p, (w, h) in other[:5])
        raise InputError(f"{len(other)} image(s) differ from the most common size {height} x "
                         f"{width} (height x width): {listed}. Resize them, or allow resizing.")
    if other:
        report.append(f"Resized {len(other)} of {len(decoded)} images to {height} x {width} "
                      "(height x width), the most common size.")
    X = np.empty((len(decoded), height * width))
    for row, (path, image) in enumerate(decoded):
        if image.size != (width, height):
            image = image.resize((width, height), Image.Resampling.BILINEAR)
        X[row] = _as_array(image).ravel()
    if skipped:
        report.append(f"Skipped {len(skipped)} file(s): " +
                      "; ".join(f"{p} ({r})" for p, r in skipped[:20]) +
                      (" ..." if len(skipped) > 20 else ""))

    paths = [path for path, _ in decoded]
    labels = None
    if labels_from == "folder":
        folders = [PurePosixPath(p).parent.name for p in paths]
        if all(folders):
            labels = np.array(folders)
        elif any(folders):
            labels = np.array([f or "(no folder)" for f in folders])
            report.append("Some images are not inside a class folder; they are labelled '(no folder)'.")
        else:
            report.append("No class folders were found, so the images are unlabelled. Put each "
                          "class in its own folder inside the ZIP, or take labels from file names.")
    elif labels_from == "prefix":
        stems = [PurePosixPath(p).stem for p in paths]
        labels = np.array([s.split(prefix_separator, 1)[0] for s in stems])
        if not any(prefix_separator in s for s in stems):
            report.append(f"No file name contains {prefix_separator!r}; each whole name became "
                          "its own label.")
    return Dataset(X, labels=labels, image_shape=(height, width), sample_names_=paths, name=name,
                   kind="images", source=f"uploaded: {len(decoded)} images",
                   meta={"load_report": report})


# ---------------------------------------------------------------------------- tables
def _decode_text(filename: str, data: bytes) -> str:
    for encoding in ("utf-8-sig", "latin-1"):
        try:
            return data.decode(encoding)
        except UnicodeDecodeError:
            continue
    raise InputError(f"{filename} is not a text file.")  # latin-1 never fails; kept for clarity


def _is_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def _read_rows(filename: str, data: bytes) -> tuple[list[str] | None, list[list[str]]]:
    text = _decode_text(filename, data)
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        raise InputError(f"{filename} has no rows.")
    extension = posixpath.splitext(filename.lower())[1]
    if extension == ".tsv":
        delimiter = "\t"
    else:
        try:
            delimiter = csv.Sniffer().sniff("\n".join(lines[:20]), delimiters=",;\t|").delimiter
        except csv.Error:
            delimiter = "," if "," in lines[0] else ("\t" if "\t" in lines[0] else None)
    if delimiter is None:  # whitespace-separated numbers
        rows = [line.split() for line in lines]
    else:
        rows = [[cell.strip() for cell in row] for row in csv.reader(lines, delimiter=delimiter)]
    width = len(rows[0])
    ragged = [i for i, row in enumerate(rows) if len(row) != width]
    if ragged:
        raise InputError(f"{filename}: row {ragged[0] + 1} has {len(rows[ragged[0]])} cells but the "
                         f"first row has {width}. Every row needs the same number of columns.")
    first = rows[0]
    second = rows[1] if len(rows) > 1 else None
    text_first = [not _is_number(c) for c in first]
    has_header = all(text_first) or (second is not None and any(
        t and _is_number(s) for t, s in zip(text_first, second)))
    if has_header:
        return first, rows[1:]
    return None, rows


def table_columns(filename: str, data: bytes) -> list[str]:
    """Column names of a CSV/TSV (generated when it has no header), or the arrays of NPZ/MAT.

    Lets a page offer the choice of the label column before the table is loaded.
    """
    extension = posixpath.splitext(filename.lower())[1]
    if not data:
        raise InputError(f"{filename} is empty (0 bytes). Choose the file again.")
    if extension in (".npz", ".mat"):
        return sorted(_named_arrays(filename, data, extension))
    if extension == ".npy":
        return []
    header, rows = _read_rows(filename, data)
    return header if header is not None else [f"column {j}" for j in range(len(rows[0]))]


def _named_arrays(filename: str, data: bytes, extension: str) -> dict:
    if extension == ".npz":
        try:
            with np.load(io.BytesIO(data), allow_pickle=False) as stored:
                return {key: stored[key] for key in stored.files}
        except ValueError as exc:
            if "allow_pickle" in str(exc) or "Object arrays" in str(exc):
                raise InputError(f"{filename} holds Python objects (a pickled object array). For "
                                 "safety such files are refused; save plain numeric arrays with "
                                 "numpy.savez.") from None
            raise InputError(f"{filename} is not a readable NPZ file: {exc}.") from None
        except (OSError, zipfile.BadZipFile, EOFError):
            raise InputError(f"{filename} is not a readable NPZ file (it may be truncated).") from None
    import scipy.io

    try:
        contents = scipy.io.loadmat(io.BytesIO(data))
    except (ValueError, TypeError, OSError, NotImplementedError) as exc:
        raise InputError(f"{filename} is not a readable MATLAB file ({exc}). Version 7.3 (HDF5) "
                         "files are not supported: save with -v7.") from None
    return {key: value for key, value in contents.items() if not key.startswith("__")}


def _labels_from_array(values, filename: str, key: str) -> np.ndarray:
    values = np.asarray(values)
    if values.dtype == object:
        raise InputError(f"{filename}: the labels {key!r} are not a plain array.")
    return values.ravel()


def load_table(filename: str, data: bytes, *, label_column: str | int | None = None,
               x_key: str | None = None, y_key: str | None = None,
               name: str | None = None) -> Dataset:
    """Load a table of samples x features.

    Parameters
    ----------
    filename : str
        Its extension chooses the format: CSV/TSV/TXT (delimiter sniffed; header detected),
        NPY, NPZ (``allow_pickle=False``), MAT (``scipy.io.loadmat``; MATLAB v5-v7).
    data : bytes
    label_column : str or int, optional
        CSV/TSV: the column (name or index) holding the class labels, which may be text; every
        other column must be numeric. NPY: the index of a label column.
    x_key, y_key : str, optional
        NPZ/MAT: the arrays holding the data and the labels (default ``X`` and ``Y``/``y``).
    name : str, optional
        Display name (default: the file name).
    """
    name = name or filename
    extension = posixpath.splitext(filename.lower())[1]
    if extension not in TABLE_EXTENSIONS:
        raise InputError(f"{filename}: unsupported file type {extension or '(none)'}; use CSV, TSV, "
                         "NPY, NPZ or MAT.")
    if not data:
        raise InputError(f"{filename} is empty (0 bytes). Choose the file again.")
    feature_names = labels = None
    if extension in (".csv", ".tsv", ".txt"):
        header, rows = _read_rows(filename, data)
        width = len(rows[0]) if rows else len(header)
        columns = header if header is not None else [f"column {j}" for j in range(width)]
        duplicates = sorted({c for c in columns if columns.count(c) > 1})
        if duplicates:
            raise InputError(f"{filename}: duplicate column name(s) {', '.join(map(repr, duplicates))}; "
                             "give every column a distinct name.")
        label_index = None
        if label_column is not None:
            if isinstance(label_column, (int, np.integer)) and not isinstance(label_column, bool):
                if not 0 <= label_column < width:
                    raise InputError(f"{filename}: there is no column {label_column} "
                                     f"(columns 0 to {width - 1}).")
                label_index = int(label_column)
            elif label_column in columns:
                label_index = columns.index(label_column)
            else:
                raise InputError(f"{filename}: there is no column {label_column!r}; the columns are "
                                 f"{', '.join(columns[:30])}{' ...' if len(columns) > 30 else ''}.")
        keep = [j for j in range(width) if j != label_index]
        missing_words = {"", "na", "nan", "n/a", "null", "none", "?"}
        text_columns = [columns[j] for j in keep
                        if any(not _is_number(row[j]) and row[j].lower() not in missing_words
                               for row in rows)]
        if text_columns:
            raise InputError(f"{filename}: column(s) {', '.join(map(repr, text_columns[:10]))} are "
                             "not numeric. Choose one of them as the label column, or remove them.")
        X = np.array([[float(row[j]) if row[j].lower() not in missing_words else np.nan
                       for j in keep] for row in rows], dtype=np.float64).reshape(len(rows), len(keep))
        feature_names = [columns[j] for j in keep]
        if label_index is not None:
            labels = np.array([row[label_index] for row in rows])
            if all(_is_number(v) for v in labels):
                numbers = labels.astype(np.float64)
                labels = numbers.astype(np.int64) if np.all(numbers == np.round(numbers)) else numbers
    elif extension == ".npy":
        try:
            X = np.load(io.BytesIO(data), allow_pickle=False)
        except ValueError as exc:
            if "allow_pickle" in str(exc) or "Object arrays" in str(exc):
                raise InputError(f"{filename} holds Python objects (a pickled object array). For "
                                 "safety such files are refused; save a plain numeric array.") from None
            raise InputError(f"{filename} is not a readable NPY file: {exc}.") from None
        except (OSError, EOFError):
            raise InputError(f"{filename} is not a readable NPY file (it may be truncated).") from None
        X = _numeric_matrix(X, filename, "the array")
        if label_column is not None:
            labels = X[:, int(label_column)]
            X = np.delete(X, int(label_column), axis=1)
    else:
        arrays = _named_arrays(filename, data, extension)
        if not arrays:
            raise InputError(f"{filename} holds no arrays.")
        if x_key is None:
            x_key = "X" if "X" in arrays else (next(iter(arrays)) if len(arrays) == 1 else None)
        if x_key not in arrays:
            raise InputError(f"{filename}: no data array {x_key or 'X'!r}; it holds "
                             f"{', '.join(sorted(arrays))}. Say which one holds the data.")
        matrix = arrays[x_key]
        if hasattr(matrix, "toarray"):  # a sparse MATLAB matrix
            matrix = matrix.toarray()
        X = _numeric_matrix(matrix, filename, repr(x_key))
        if y_key is None:
            y_key = next((k for k in ("Y", "y", "labels", "label") if k in arrays), None)
        elif y_key not in arrays:
            raise InputError(f"{filename}: no label array {y_key!r}; it holds {', '.join(sorted(arrays))}.")
        if y_key is not None:
            labels = _labels_from_array(arrays[y_key], filename, y_key)
    return _finish(X, labels, feature_names, filename, name)


def _numeric_matrix(values, filename: str, what: str) -> np.ndarray:
    values = np.asarray(values)
    if values.dtype == object or not (np.issubdtype(values.dtype, np.number) or values.dtype == bool):
        raise InputError(f"{filename}: {what} is not numeric (dtype {values.dtype}).")
    if values.ndim == 1:
        values = values[:, None]
    if values.ndim != 2:
        raise InputError(f"{filename}: {what} must be 2-D (samples x features); it is {values.ndim}-D.")
    return values.astype(np.float64)


def _finish(X, labels, feature_names, filename, name) -> Dataset:
    n_samples, n_features = X.shape
    if n_samples < 2:
        raise InputError(f"{filename} has {n_samples} sample(s); feature selection needs at least two.")
    if n_features < 2:
        raise InputError(f"{filename} has {n_features} feature(s); feature selection needs at least "
                         "two (is the label column the only numeric one?).")
    bad = ~np.isfinite(X)
    if bad.any():
        row, column = np.argwhere(bad)[0]
        where = feature_names[column] if feature_names is not None else f"column {column}"
        raise InputError(f"{filename} has {int(bad.sum())} missing (NaN) or infinite value(s), the "
                         f"first in row {row + 1}, {where!r}. Impute or remove them, then upload again.")
    if labels is not None and labels.shape[0] != n_samples:
        raise InputError(f"{filename}: {labels.shape[0]} labels for {n_samples} samples; give one "
                         "label per sample.")
    return Dataset(X, labels=labels, feature_names_=feature_names, name=name, kind="table",
                   source=f"uploaded: {filename}", meta={"load_report": []})


def load_side_data(files: Sequence[tuple[str, bytes]], like: Dataset) -> Dataset:
    """Side data ([000] Def. 3, the matrix W) for the data set ``like``: one table, or image
    files and/or ZIP archives of images, describing the same features as ``like``.

    Raises
    ------
    InputError
        For a mix of a table and other files, anything :func:`load_images` or
        :func:`load_table` refuses, or another number of features than ``like`` (the message
        gives both sizes, and both image shapes for images).
    """
    files = list(files)
    if not files:
        raise InputError("Upload a table or image files (or a ZIP of images) as side data.")
    names = [filename for filename, _ in files]
    if all(filename.lower().endswith(IMAGE_EXTENSIONS + (".zip",)) for filename in names):
        side = load_images(files, labels_from=None,
                           name=f"side: {names[0]}" if len(files) == 1 else f"side: {len(files)} files")
    elif len(files) == 1:
        side = load_table(names[0], files[0][1], name=f"side: {names[0]}")
    else:
        raise InputError("Upload either one table or image files (or a ZIP of images) as side data, not a mix.")
    if side.n_features != like.n_features:
        detail = (f" (images of {side.image_shape[0]} x {side.image_shape[1]} pixels; the current images are "
                  f"{like.image_shape[0]} x {like.image_shape[1]})" if side.is_image and like.is_image else "")
        raise InputError(f"The side data have {side.n_features:,} features but the current data set has "
                         f"{like.n_features:,}{detail}. Side data must describe the same features: upload "
                         "images of the same size or a table with the same columns (and use the pixel "
                         "family while loading image side data).")
    return side
