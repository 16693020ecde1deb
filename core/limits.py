"""The limits that keep one upload from exhausting the machine, and decompression under them.

Every loader takes a :class:`LoadLimits`; the checks happen at the boundary, before anything
large is decompressed or allocated, so that a small file that claims to be huge (a compression
bomb, an NPY header declaring 10^6 x 10^6) is refused at the cost of reading its header.
"""

from __future__ import annotations

import bz2
import io
import lzma
import os
import zipfile
import zlib
from dataclasses import dataclass

from .errors import InputError

__all__ = ["LoadLimits", "decompress", "check_budget", "compression_of", "format_bytes", "open_zip", "user_files",
           "COMPRESSIONS", "memory_limit_bytes"]


def memory_limit_bytes() -> int:
    """Default working-memory limit of one computation: half of the machine's physical memory."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2)
    except (ValueError, OSError, AttributeError):
        return 8 << 30


@dataclass(frozen=True)
class LoadLimits:
    """Limits of one upload.

    ``max_decoded_bytes`` is the per-upload budget: the decompressed bytes of a file and the
    bytes of the float64 matrix a table will produce must each stay below it (2 GiB by default;
    the app states it next to its upload limit). ``max_image_pixels`` is also the
    decompression-bomb limit of a single image: one that declares more pixels is refused before
    it is decoded.
    """

    max_images: int = 5000
    max_image_pixels: int = 4096 * 4096
    max_zip_uncompressed_bytes: int = 1 << 30
    max_zip_entries: int = 50_000
    min_image_side: int = 2
    max_decoded_bytes: int = 2 << 30


def format_bytes(n_bytes: float) -> str:
    """A size for messages, in the largest unit that leaves at least 1 (kB to TB)."""
    for unit, size in (("TB", 2**40), ("GB", 2**30), ("MB", 2**20)):
        if n_bytes >= size:
            return f"{n_bytes / size:,.1f} {unit}"
    return f"{n_bytes / 2**10:,.1f} kB"


def check_budget(n_bytes: float, what: str, limits: LoadLimits) -> None:
    """Refuse ``what`` when it would take more than the per-upload budget."""
    if n_bytes > limits.max_decoded_bytes:
        raise InputError(f"{what} would need {format_bytes(n_bytes)} in memory, more than the per-upload "
                         f"budget of {format_bytes(limits.max_decoded_bytes)} (LoadLimits.max_decoded_bytes). "
                         "Upload a subset (fewer samples or features).")


# name -> (extension, streaming decompressor factory)
COMPRESSIONS = {
    "gzip": (".gz", lambda: zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)),
    "bzip2": (".bz2", bz2.BZ2Decompressor),
    "xz": (".xz", lzma.LZMADecompressor),
}


def compression_of(data: bytes) -> str | None:
    """The compression whose magic bytes start ``data`` (bzip2's block magic too: "BZh" alone
    could begin a text file)."""
    if data[:2] == b"\x1f\x8b":
        return "gzip"
    if data[:3] == b"BZh" and data[3:4].isdigit() and data[4:10] == b"1AY&SY":
        return "bzip2"
    if data[:6] == b"\xfd7zXZ\x00":
        return "xz"
    return None


def _pieces(data: bytes, kind: str, step: int = 1 << 24):
    """The decompressed output of ``data`` in pieces of at most ``step`` bytes."""
    factory = COMPRESSIONS[kind][1]
    decompressor = factory()
    remaining = data
    while True:
        if kind == "gzip":
            piece = decompressor.decompress(remaining, step)
            remaining = decompressor.unconsumed_tail
        else:
            piece = decompressor.decompress(remaining, max_length=step)
            remaining = b""
        if piece:
            yield piece
        if decompressor.eof:
            rest = decompressor.unused_data
            if kind == "gzip" and rest.startswith(b"\x1f\x8b"):  # concatenated members
                decompressor, remaining = factory(), rest
                continue
            return
        if not piece and (not remaining if kind == "gzip" else decompressor.needs_input):
            raise EOFError  # input ended before the stream did


def decompress(filename: str, data: bytes, kind: str, limits: LoadLimits) -> bytes:
    """Decompress ``data`` (``kind`` one of "gzip", "bzip2", "xz") within the budget.

    Two passes: the first counts the output without keeping any of it and stops as soon as the
    count exceeds the budget, so a bomb costs time but no memory; only an archive that fits is
    decompressed again and kept.
    """
    try:
        total = 0
        for piece in _pieces(data, kind):
            total += len(piece)
            check_budget(total, f"{filename} (decompressed)", limits)
        return b"".join(_pieces(data, kind))
    except InputError:
        raise
    except (zlib.error, OSError, lzma.LZMAError, EOFError, ValueError):
        raise InputError(f"{filename} is not a complete {kind} file (it is damaged or truncated); "
                         "compress it again and re-upload.") from None


def user_files(archive: zipfile.ZipFile) -> list[tuple[str, zipfile.ZipInfo]]:
    """``(path, info)`` of the files a user put in the archive: no folders, and not the metadata
    archive tools add (``__MACOSX/``, hidden ``._name`` files). Paths use forward slashes."""
    files = []
    for info in archive.infolist():
        path = info.filename.replace("\\", "/")
        if info.is_dir() or path.split("/", 1)[0] == "__MACOSX" or path.rsplit("/", 1)[-1].startswith("."):
            continue
        files.append((path, info))
    return files


def open_zip(filename: str, data: bytes) -> zipfile.ZipFile:
    """A ZIP archive read in memory (its directory only: members are read on demand)."""
    try:
        return zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        raise InputError(f"{filename} is not a readable ZIP archive (it may be truncated); create it again "
                         "and re-upload.") from None
