"""How good a selection is: clustering and classification measures, stability across resamples,
accuracy and grouping curves over the number of features (:mod:`.metrics`)."""
