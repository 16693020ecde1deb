"""Plot builders shared by the pages and the tests: arrays in, Plotly figures out.

No Streamlit here; each function takes plain arrays (and names) and returns a
``plotly.graph_objects.Figure``, so that a figure can be checked in a test without a browser.
The builders live by the kind of figure they draw: :mod:`.weights` (sorted weights, histories,
the λ path, per-class dots), :mod:`.images` (weights on images, outlines, grids and mosaics),
:mod:`.topographic` (the topographical map), :mod:`.curves` (curves and bars by size) and
:mod:`.tables` (heat-map tables and the table behind every figure) and :mod:`.samples` (a
stored layout of the samples); every name is here.
"""

from .weights import (EVERY_RANK_UP_TO, TAIL_RANKS, MARKERS_UP_TO, sorted_weights_figure, history_figure,
                      lambda_path_figure, gap_strength_figure, dotplot_figure)
from .images import (image_figure, weight_overlay_figure, OVERLAY_PICTURE_HEIGHT, weight_overlay_picture, colour_bar_picture,
                     MAP_PICTURE_HEIGHT, heatmap_picture, selection_outline, contrast_stretch, rank_stretch,
                     image_grid_figure, MOSAIC_IMAGE_HEIGHT, image_mosaic)
from .topographic import topographic_figure, LABEL_CHAR_WIDTH, LABEL_HEIGHT, label_boxes, non_overlapping_labels
from .curves import (probability_curve_figure, slda_curves_figure, band_mass_figure, comparison_figure, curves_figure,
                     bar_figure)
from .tables import heatmap_table_figure, figure_table
from .samples import GROUP_COLOURS, SIDE_COLOUR, samples_layout_figure

__all__ = ["EVERY_RANK_UP_TO", "TAIL_RANKS", "MARKERS_UP_TO", "sorted_weights_figure", "history_figure",
           "lambda_path_figure", "gap_strength_figure", "dotplot_figure", "image_figure", "weight_overlay_figure",
           "OVERLAY_PICTURE_HEIGHT", "weight_overlay_picture", "colour_bar_picture", "MAP_PICTURE_HEIGHT", "heatmap_picture",
           "selection_outline", "contrast_stretch", "rank_stretch", "image_grid_figure", "MOSAIC_IMAGE_HEIGHT",
           "image_mosaic", "topographic_figure", "LABEL_CHAR_WIDTH", "LABEL_HEIGHT", "label_boxes",
           "non_overlapping_labels", "probability_curve_figure", "slda_curves_figure", "band_mass_figure",
           "comparison_figure", "curves_figure", "bar_figure", "heatmap_table_figure", "figure_table",
           "GROUP_COLOURS", "SIDE_COLOUR", "samples_layout_figure"]
