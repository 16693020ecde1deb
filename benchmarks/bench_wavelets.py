"""Haar features on the AR faces: transform, reconstruction and Haar-like values.

    python -m benchmarks.bench_wavelets

Targets (issue 6): transforming all 130 faces under 0.5 s, one reconstruction under 50 ms.
Reference measured in the same run: PyWavelets called image by image.
"""


import numpy as np
import pywt


from core.data.bundled import load_dataset  # noqa: E402
from core.features.haarlike import haar_like_features  # noqa: E402
from core.features.wavelets import haar_basis  # noqa: E402
from benchmarks.timing import best_of  # noqa: E402
from benchmarks.results import run_recorded  # noqa: E402


def main():
    faces = load_dataset("warpAR10P")
    images = faces.images()
    print(f"{'task (130 AR faces, 60 x 40)':<48} {'seconds':>9} {'reference s':>12} {'ratio':>6}")
    for levels in (1, 3):
        basis = haar_basis(faces.image_shape, levels)
        ours = best_of(lambda: basis.transform(images))
        loop = best_of(lambda: [pywt.coeffs_to_array(pywt.wavedec2(im, "haar", mode="periodization",
                                                                     level=levels)) for im in images])
        print(f"{f'transform, {levels} level(s)':<48} {ours:>9.4f} {loop:>12.4f} {loop / ours:>6.1f}")
    basis = haar_basis(faces.image_shape, 3)
    alpha = np.random.default_rng(0).random(basis.n_coefficients)
    mean_face = images.mean(axis=0)
    one = best_of(lambda: basis.reconstruct(mean_face, alpha))
    every = best_of(lambda: basis.reconstruct(images, alpha))
    print(f"{'reconstruction of the mean face':<48} {one:>9.4f}")
    print(f"{'reconstruction of all 130 faces':<48} {every:>9.4f}")
    print(f"{'pixel map of a weight vector':<48} {best_of(lambda: basis.pixel_map(alpha)):>9.4f}")
    for stride in (4, 2):
        features = haar_like_features(faces.image_shape, stride=stride, scale_step=stride, min_cell=stride)
        seconds = best_of(lambda: features.values(images), repeats=2)
        print(f"{f'Haar-like values, stride {stride} ({features.n_features:,} features)':<48} {seconds:>9.4f}")
    print("targets: transform < 0.5 s, reconstruction < 0.05 s")


if __name__ == "__main__":
    run_recorded(main, "bench_wavelets", __doc__)
