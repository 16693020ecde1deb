"""The selection methods: each takes X (samples x features) and returns a result object.

- :mod:`.qalpha`: Q-alpha, unsupervised and supervised, with side data or pairs, the topographical map.
- :mod:`.lambda_path`: Q-alpha with side information along a grid of lambda, warm-started.
- :mod:`.kernel_qalpha`: Q-alpha in a kernel's feature space.
- :mod:`.slda`: greedy sparse LDA and PCA for every cardinality, exact branch-and-bound, bounds.
- :mod:`.sdr`: SDR-SI, sufficient dimensionality reduction with side information.
- :mod:`.baselines`: the scoring and projection baselines the papers compare against.
- :mod:`.selectors`: scikit-learn selectors (``fit`` / ``transform`` / ``get_support``).
- :mod:`.modules`: a selection's features grouped into modules of correlated features, and the
  ranking reordered across them (what the selection covers; a ranker of its own for Compare).
"""
