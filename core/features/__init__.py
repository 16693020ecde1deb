"""Feature families built from images, each a data set of its own whose weights map back to pixels.

- :mod:`.wavelets`: the orthonormal 2-D Haar basis (Wolf & Shashua 2003, Sec. 6) and images from weighted coefficients.
- :mod:`.haarlike`: Viola-Jones rectangle features from integral images.
- :mod:`.families`: one entry, ``to_feature_family(dataset, "haar" | "haar_like")``.
"""
