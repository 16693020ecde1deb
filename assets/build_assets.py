"""Build the bundled data sets from the benchmark ``.mat`` files (a developer's one-off step).

    python assets/build_assets.py [PATH_TO_SHARED_DATA]

The app never runs this: it reads only what this script writes next to it (``*.npz`` and
``manifest.json``). Storage is lossless: integer data keep the smallest integer type that holds
their range, real-valued data stay float64; image rows are turned upright and row-major once,
here (the MATLAB files store each image column-major).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import scipy.io

HERE = Path(__file__).resolve().parent
DEFAULT_SOURCE = HERE.parent.parent / "shared" / "data"
REPOSITORY = ("ASU feature selection repository (J. Li et al., \"Feature selection: a data "
              "perspective\", ACM Computing Surveys 50(6), 2017; scikit-feature)")

# name: (kind, image shape or None, description, original source)
DATASETS = {
    "warpAR10P": ("images", (60, 40), "AR faces: 10 people x 13 images (expressions, lighting, "
                  "sunglasses, scarf), warped, 60x40",
                  "A. M. Martinez and R. Benavente, The AR face database, CVC Tech. Rep. 24, 1998"),
    "Yale": ("images", (32, 32), "Yale faces: 15 people x 11 images (lighting, glasses, "
             "expressions), 32x32",
             "P. Belhumeur, J. Hespanha, D. Kriegman, Eigenfaces vs. Fisherfaces, PAMI 1997"),
    "ORL": ("images", (32, 32), "ORL / AT&T faces: 40 people x 10 images, 32x32",
            "F. Samaria and A. Harter, Parameterisation of a stochastic model for human face "
            "identification, WACV 1994"),
    "warpPIE10P": ("images", (55, 44), "CMU PIE faces: 10 people x 21 images (pose, "
                   "illumination), warped, 55x44",
                   "T. Sim, S. Baker, M. Bsat, The CMU pose, illumination, and expression "
                   "database, PAMI 2003"),
    "COIL20": ("images", (32, 32), "COIL-20 objects: 20 objects x 72 views, 32x32",
               "S. Nene, S. Nayar, H. Murase, Columbia Object Image Library (COIL-20), "
               "Tech. Rep. CUCS-005-96, 1996"),
    "orlraws10P": ("images", (112, 92), "ORL faces at full resolution: 10 people x 10 images, "
                   "112x92", "F. Samaria and A. Harter, WACV 1994"),
    "pixraw10P": ("images", (100, 100), "PIX faces: 10 people x 10 images, 100x100",
                  "ASU feature selection repository"),
    "colon": ("table", None, "Colon cancer: 62 tissues x 2,000 genes (tumour / normal), "
              "discretised", "U. Alon et al., PNAS 96(12), 1999"),
    "leukemia": ("table", None, "Leukemia: 72 samples x 7,070 genes (ALL / AML), discretised",
                 "T. Golub et al., Science 286, 1999"),
    "ALLAML": ("table", None, "ALL/AML leukemia: 72 samples x 7,129 genes",
               "T. Golub et al., Science 286, 1999"),
    "GLIOMA": ("table", None, "Glioma: 50 samples x 4,434 genes, 4 classes",
               "C. Nutt et al., Cancer Research 63, 2003"),
    "lymphoma": ("table", None, "Lymphoma: 96 samples x 4,026 genes, 9 classes, discretised",
                 "A. Alizadeh et al., Nature 403, 2000"),
    "TOX-171": ("table", None, "Toxicology: 171 samples x 5,748 genes, 4 classes",
                "ASU feature selection repository"),
    "Prostate-GE": ("table", None, "Prostate cancer: 102 samples x 5,966 genes (tumour / normal)",
                    "D. Singh et al., Cancer Cell 1, 2002"),
    "nci9": ("table", None, "NCI-60 subset: 60 samples x 9,712 genes, 9 classes, discretised",
             "D. Ross et al., Nature Genetics 24, 2000"),
    "lung_small": ("table", None, "Lung (small): 73 samples x 325 genes, 7 classes, discretised",
                   "ASU feature selection repository"),
    "PCMAC": ("table", None, "20 Newsgroups ibm.pc vs mac: 1,943 documents x 3,289 word counts",
              "K. Lang, NewsWeeder, ICML 1995 (20 Newsgroups)"),
    "madelon": ("table", None, "Madelon: 2,600 samples x 500 features (NIPS 2003 challenge; "
                "20 relevant)", "I. Guyon et al., NIPS 2003 feature selection challenge"),
    "arcene": ("table", None, "Arcene: 200 mass spectra x 10,000 features (NIPS 2003 challenge)",
               "I. Guyon et al., NIPS 2003 feature selection challenge"),
}


def smallest_integer_type(values: np.ndarray) -> np.dtype:
    for dtype in (np.uint8, np.int8, np.uint16, np.int16, np.int32):
        info = np.iinfo(dtype)
        if values.min() >= info.min and values.max() <= info.max:
            return np.dtype(dtype)
    return np.dtype(np.int64)


def lossless(values: np.ndarray) -> np.ndarray:
    values = np.asarray(values)
    if values.dtype.kind in "iu" or (values.dtype.kind == "f" and np.all(values == np.round(values))):
        return values.astype(smallest_integer_type(values))
    return values.astype(np.float64)


def scikit_learn_sets() -> list[tuple[str, np.ndarray, np.ndarray, dict]]:
    """digits, wine, iris and breast cancer from scikit-learn's own copies, stored like the rest
    (no import at run time)."""
    from sklearn import datasets

    digits, wine = datasets.load_digits(), datasets.load_wine()
    iris, cancer = datasets.load_iris(), datasets.load_breast_cancer()
    return [
        ("digits", digits.data, digits.target, dict(
            kind="images", image_shape=[8, 8], pixel_scale=16.0, feature_names=None,
            description="Handwritten digits 0-9, 8x8, 1,797 images",
            source="E. Alpaydin and C. Kaynak, UCI optical recognition of handwritten digits; "
                   "scikit-learn's copy")),
        ("wine", wine.data, wine.target, dict(
            kind="table", image_shape=None, pixel_scale=1.0, feature_names=list(wine.feature_names),
            description="Wine: 178 wines x 13 chemical measurements, 3 cultivars (000's UCI table)",
            source="M. Forina et al., UCI wine data set; scikit-learn's copy")),
        ("iris", iris.data, iris.target, dict(
            kind="table", image_shape=None, pixel_scale=1.0, feature_names=list(iris.feature_names),
            description="Iris: 150 flowers x 4 measurements, 3 species",
            source="R. A. Fisher, Annals of Eugenics 1936; UCI iris data set; scikit-learn's copy")),
        ("breast_cancer", cancer.data, cancer.target, dict(
            kind="table", image_shape=None, pixel_scale=1.0, feature_names=list(cancer.feature_names),
            description="Breast cancer (Wisconsin diagnostic): 569 tumours x 30 nucleus features, "
                        "malignant / benign",
            source="W. N. Street, W. H. Wolberg & O. L. Mangasarian, SPIE 1993; UCI WDBC data set; "
                   "scikit-learn's copy")),
    ]


def store_scikit_learn_set(name, X, y, entry) -> dict:
    """Write one of :func:`scikit_learn_sets` into assets/ and return its manifest entry."""
    X = lossless(X)
    np.savez_compressed(HERE / f"{name}.npz", X=X, y=lossless(y))
    return dict(name=name, file=f"{name}.npz", n_samples=int(X.shape[0]), n_features=int(X.shape[1]),
                classes=[int(c) for c in np.unique(y)], stored_dtype=str(X.dtype), **entry)


def build(source: Path) -> list[dict]:
    manifest = []
    for name, (kind, image_shape, description, origin) in DATASETS.items():
        mat = scipy.io.loadmat(source / f"{name}.mat")
        X = np.asarray(mat["X"])
        y = np.asarray(mat["Y"]).ravel()
        if image_shape is not None:
            h, w = image_shape
            X = X.reshape(X.shape[0], h, w, order="F").reshape(X.shape[0], h * w)
        X = lossless(X)
        # images: the scale their pixel values come in (uint8 data are 0-255, COIL20 is 0-1)
        scale = 255.0 if (image_shape is not None and X.dtype.kind in "iu") else 1.0
        np.savez_compressed(HERE / f"{name}.npz", X=X, y=lossless(y))
        manifest.append(dict(
            name=name, kind=kind, file=f"{name}.npz", n_samples=int(X.shape[0]),
            n_features=int(X.shape[1]), image_shape=list(image_shape) if image_shape else None,
            classes=[int(c) for c in np.unique(y)], pixel_scale=scale, stored_dtype=str(X.dtype),
            feature_names=None, description=description,
            source=f"{origin}; distributed by the {REPOSITORY}"))
        print(f"{name:>12}: {X.shape} {X.dtype} -> {(HERE / f'{name}.npz').stat().st_size / 1e6:.2f} MB")
    manifest += [store_scikit_learn_set(*entry) for entry in scikit_learn_sets()]
    (HERE / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    return manifest


if __name__ == "__main__":
    build(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_SOURCE)
    total = sum(p.stat().st_size for p in HERE.glob("*.npz"))
    print(f"total: {total / 1e6:.1f} MB")
