"""Loaders for what users upload: image files (also multi-page TIFF stacks) or ZIPs of them,
and tables (:mod:`core.data.tables`).

Every loader takes file names and bytes (never a path on disk: nothing is extracted or written)
and returns a :class:`~core.data.dataset.Dataset`, or raises :class:`~core.errors.InputError` with a
message that says what was wrong and what to do. Problems that do not stop the load (a resized
image, a skipped file) are listed in ``dataset.meta["load_report"]``.

References
----------
.. [SW04] A. Shashua and L. Wolf, "Kernel feature selection with side data using a spectral
   approach", ECCV 2004.
"""

from __future__ import annotations

import io
import posixpath
import zipfile
from collections import Counter
from pathlib import PurePosixPath
from typing import Sequence

import numpy as np
from PIL import Image, UnidentifiedImageError

from .dataset import Dataset
from ..errors import InputError
from ..limits import LoadLimits, format_bytes, open_zip, user_files
from .tables import (COMPRESSED_EXTENSIONS, TABLE_EXTENSIONS, ParsedTable, finish, is_table_file, load_table,
                     read_table, table_columns)

__all__ = ["LoadLimits", "IMAGE_EXTENSIONS", "TABLE_EXTENSIONS", "COMPRESSED_EXTENSIONS", "ParsedTable", "load_images",
           "load_table", "read_table", "finish", "load_side_data", "table_columns"]

IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".gif", ".pgm", ".ppm",
                    ".pbm", ".pnm")


# ---------------------------------------------------------------------------- images
def _is_zip(filename: str, data: bytes) -> bool:
    return filename.lower().endswith(".zip") or data[:4] == b"PK\x03\x04"


def _zip_members(filename: str, data: bytes, limits: LoadLimits):
    """``(members, skipped)``: ``(path, bytes)`` of the image files in the ZIP and the paths of
    the other files. Only image members are read, and only after the archive's paths and the
    declared sizes of those members (which ``zipfile`` enforces while reading) are checked."""
    with open_zip(filename, data) as archive:
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
        wanted, skipped = [], []
        for path, info in user_files(archive):
            if posixpath.splitext(path.lower())[1] in IMAGE_EXTENSIONS:
                wanted.append((path, info))
            else:
                skipped.append(path)  # never decompressed
        total = sum(info.file_size for _, info in wanted)
        limit, setting = min((limits.max_zip_uncompressed_bytes, "max_zip_uncompressed_bytes"),
                             (limits.max_decoded_bytes, "max_decoded_bytes"))
        if total > limit:
            raise InputError(f"The images in {filename} would unpack to {format_bytes(total)}, more than the "
                             f"limit of {format_bytes(limit)} (LoadLimits.{setting}). Upload fewer images.")
        members = []
        for path, info in wanted:
            try:
                members.append((path, archive.read(info)))
            except (zipfile.BadZipFile, OSError, EOFError) as exc:
                members.append((path, exc))
    return members, skipped


def _to_gray(image: Image.Image) -> Image.Image:
    """Mode "L", or "F" with values already in [0, 1] (16-bit and float images)."""
    if image.mode in ("I;16", "I;16B", "I;16L", "I"):
        values = np.asarray(image, dtype=np.float64) / 65535.0
        return Image.fromarray(np.clip(values, 0, 1).astype(np.float32), mode="F")
    if image.mode == "F":
        values = np.asarray(image, dtype=np.float64)
        span = float(np.ptp(values)) or 1.0
        return Image.fromarray(((values - values.min()) / span).astype(np.float32), mode="F")
    return image.convert("L")


def _probe(path: str, data, limits: LoadLimits):
    """``(image, sizes, reason)``: the opened image and the (width, height) of each image it
    holds (every page of a multi-page TIFF stack, else one) read from its header, without
    decoding a pixel; or no image and the reason it is skipped."""
    if isinstance(data, Exception) or len(data) == 0:
        return None, [], ("empty (0 bytes)" if not isinstance(data, Exception) else "corrupt ZIP entry")
    try:
        image = Image.open(io.BytesIO(data))  # reads the header only
        count = image.n_frames if image.format == "TIFF" and getattr(image, "n_frames", 1) > 1 else 1
        sizes = []
        for index in range(count):
            image.seek(index)
            sizes.append(image.size)
        image.seek(0)
    except Image.DecompressionBombError:
        return None, [], f"above the limit of {limits.max_image_pixels:,} pixels (decompression-bomb guard)"
    except UnidentifiedImageError:
        return None, [], "not a readable image"
    except (OSError, SyntaxError, ValueError, EOFError):
        return None, [], "unreadable or truncated image"
    for width, height in sizes:
        if width * height > limits.max_image_pixels:
            return None, [], (f"{width} x {height} pixels is above the limit of {limits.max_image_pixels:,} pixels "
                              "(decompression-bomb guard)")
        if min(width, height) < limits.min_image_side:
            return None, [], (f"too small ({width} x {height}); images need at least "
                              f"{limits.min_image_side} pixels a side")
    return image, sizes, None


def _decode_frames(path: str, image: Image.Image, count: int):
    """``([(name, image)], reason)``: the decoded image, or every page of a stack (``stack.tif#3``)."""
    frames = []
    try:
        for index in range(count):
            image.seek(index)  # the first frame of an animated GIF; every page of a TIFF stack
            image.load()
            frames.append((f"{path}#{index + 1}" if count > 1 else path, _to_gray(image)))
    except (OSError, SyntaxError, ValueError, EOFError):
        return [], "unreadable or truncated image"
    return frames, None


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
        memory. Each page of a multi-page TIFF stack is one image (named ``stack.tif#1``, ...,
        labelled like the stack). Files that are not images are skipped and listed in the report.
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
    images, skipped = _image_files(files, limits)
    # every header first: the whole upload is judged before a single pixel is decoded
    probed = _probe_within_budget(images, limits, skipped)
    decoded, sources = [], []  # sources: the file each image came from (a stack's pages share one)
    for path, image, frame_sizes in probed:
        frames, reason = _decode_frames(path, image, len(frame_sizes))
        if reason is not None:
            skipped.append((path, reason))
        decoded.extend(frames)
        sources.extend([path] * len(frames))
    if not decoded:
        detail = "; ".join(f"{p}: {r}" for p, r in skipped[:10]) or "no files"
        raise InputError(f"No usable image was found ({detail}). Upload PNG, JPEG, BMP, TIFF, GIF "
                         "or PGM/PPM images, or a ZIP of them.")
    if len(decoded) < 2:
        raise InputError(f"Only one usable image ({decoded[0][0]}); feature selection needs at "
                         "least two samples.")
    X, (height, width), report = _image_matrix(decoded, strict_size)
    if skipped:
        report.append(f"Skipped {len(skipped)} file(s): " +
                      "; ".join(f"{p} ({r})" for p, r in skipped[:20]) +
                      (" ..." if len(skipped) > 20 else ""))
    labels = _image_labels(sources, labels_from, prefix_separator, report)
    return Dataset(X, labels=labels, image_shape=(height, width), sample_names_=[path for path, _ in decoded],
                   name=name, kind="images", source=f"uploaded: {len(decoded)} images",
                   meta={"load_report": report})


def _image_files(files, limits: LoadLimits) -> tuple[list, list]:
    """The image files of an upload, ZIPs opened: ``(images, skipped)``, each a list of
    ``(path, bytes or reason)``; refused when there are more than ``limits.max_images``."""
    candidates, skipped = [], []
    for filename, data in files:
        if len(data) == 0:
            skipped.append((filename, "empty (0 bytes)"))
        elif _is_zip(filename, data):
            members, others = _zip_members(filename, data, limits)
            candidates += members
            skipped += [(path, "not an image file") for path in others]
        else:
            candidates.append((filename, data))
    images = [(path, data) for path, data in candidates
              if posixpath.splitext(path.lower())[1] in IMAGE_EXTENSIONS]
    skipped += [(path, "not an image file") for path, data in candidates
                if posixpath.splitext(path.lower())[1] not in IMAGE_EXTENSIONS]
    if len(images) > limits.max_images:
        raise InputError(f"{len(images):,} images were given, more than the limit of "
                         f"{limits.max_images:,}. Upload a smaller selection.")
    return images, skipped


def _probe_within_budget(images, limits: LoadLimits, skipped: list) -> list:
    """Every image's header read (no pixel decoded): ``(path, image, frame sizes)`` of those that
    open (the others join ``skipped``), refused when the frames or their decoded pixels exceed
    the limits."""
    probed = []
    for path, data in images:
        image, sizes, reason = _probe(path, data, limits)
        if reason is not None:
            skipped.append((path, reason))
        else:
            probed.append((path, image, sizes))
    n_images = sum(len(sizes) for _, _, sizes in probed)
    if n_images > limits.max_images:
        raise InputError(f"{n_images:,} images (with the pages of TIFF stacks) were given, more than the limit of "
                         f"{limits.max_images:,}. Upload a smaller selection.")
    sizes = Counter(size for _, _, frame_sizes in probed for size in frame_sizes)
    if sizes:
        # the matrix has the most common size; pixels decoded at their own size meanwhile
        (width, height), _ = sizes.most_common(1)[0]
        matrix_bytes = 8 * n_images * width * height
        decoded_bytes = sum(n * w * h for (w, h), n in sizes.items())
        if matrix_bytes + decoded_bytes > limits.max_decoded_bytes:
            raise InputError(f"{n_images:,} images of {height} x {width} pixels would need "
                             f"{format_bytes(matrix_bytes + decoded_bytes)} in memory, more than the per-upload "
                             f"budget of {format_bytes(limits.max_decoded_bytes)} (LoadLimits.max_decoded_bytes). "
                             "Upload fewer or smaller images.")
    return probed


def _image_matrix(decoded, strict_size: bool) -> tuple[np.ndarray, tuple[int, int], list[str]]:
    """The images as rows of grey values at the most common size (others resized, or refused
    with ``strict_size``): ``(X, (height, width), report)``."""
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
    return X, (height, width), report


def _image_labels(sources, labels_from, prefix_separator: str, report: list) -> np.ndarray | None:
    """Labels from the folder or the file-name prefix of each image's source (None: unlabelled);
    what the user should know goes into ``report``."""
    if labels_from == "folder":
        folders = [PurePosixPath(p).parent.name for p in sources]
        if all(folders):
            return np.array(folders)
        if any(folders):
            report.append("Some images are not inside a class folder; they are labelled '(no folder)'.")
            return np.array([f or "(no folder)" for f in folders])
        report.append("No class folders were found, so the images are unlabelled. Put each "
                      "class in its own folder inside the ZIP, or take labels from file names.")
    elif labels_from == "prefix":
        stems = [PurePosixPath(p).stem for p in sources]
        if not any(prefix_separator in s for s in stems):
            report.append(f"No file name contains {prefix_separator!r}; each whole name became "
                          "its own label.")
        return np.array([s.split(prefix_separator, 1)[0] for s in stems])
    return None


def _holds_a_table(filename: str, data: bytes) -> bool:
    """A ZIP with a table in it and no image: a zipped table, not a folder of images."""
    with open_zip(filename, data) as archive:
        paths = [path for path, _ in user_files(archive)]
    return any(is_table_file(path) for path in paths) and not any(
        path.lower().endswith(IMAGE_EXTENSIONS) for path in paths)


def load_side_data(files: Sequence[tuple[str, bytes]], like: Dataset) -> Dataset:
    """Side data ([SW04] Def. 3, the matrix W) for the data set ``like``: one table, or image
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
    if len(files) == 1 and _is_zip(*files[0]) and _holds_a_table(*files[0]):
        side = load_table(names[0], files[0][1], name=f"side: {names[0]}")
    elif all(filename.lower().endswith(IMAGE_EXTENSIONS + (".zip",)) for filename in names):
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
