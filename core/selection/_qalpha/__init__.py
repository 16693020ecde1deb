"""The solver behind :func:`core.selection.qalpha.q_alpha`, private, laid out in the order a run
takes (:func:`core.selection.qalpha._solve` calls them one after the other):

1. :mod:`.prepare` -- the checks, the normalised features, side variances or pairs, the solver;
   then the eigenproblem at one λ;
2. :mod:`.start` -- where each start begins (``Q^(0)``, a warm start, the ascent's first weights);
3. :mod:`.iterate` -- the alternation of [WS03] Definition 2, handing over to the quasi-Newton
   ascent over alpha alone (:mod:`.ascent`) where it is predicted faster;
4. :mod:`.certify` -- what the last iterate may claim (float64 check of a lower-precision run,
   inner failures, an undetermined Q), and the warnings;

and the result, :class:`core.selection.qalpha.QAlphaResult`. Each stage uses the layer under all
of them, :mod:`.problem` (the operator, its products and the measures of an iterate), and
:mod:`core.selection._spectral` and :mod:`core.matrix` beneath it; none calls a later stage, and
only a lower-precision run that fails its float64 check goes back, once, from certify to iterate
(in float64).

References
----------
.. [WS03] L. Wolf and A. Shashua, "Feature selection for unsupervised and supervised inference:
   the emergence of sparsity in a weighted-based approach", ICCV 2003.
"""
