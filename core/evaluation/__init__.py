"""How good a selection is, and what it says about each class.

- :mod:`.metrics`: clustering and classification measures, stability across resamples, accuracy
  and grouping curves over the number of features.
- :mod:`.kmeans`: k-means with seeded starts run side by side, the clusterings scikit-learn's
  ``KMeans`` gives without its per-call cost (the Q-alpha page runs it at every K the hand stops on).
- :mod:`.compare`: the comparison protocol (every method judged on held-out folds, a tidy table,
  its summary and curves), which the Compare page and the benchmarks call.
- :mod:`.markers`: per-class statistics of features (means, fraction non-zero, log2 fold change,
  Welch's t or Wilcoxon tests with Benjamini-Hochberg correction), as scanpy's rank_genes_groups.
"""
