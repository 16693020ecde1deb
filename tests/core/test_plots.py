"""The shared plot builders put the right data in the right place."""

import numpy as np
import pytest

from core.errors import InputError
from core.selection.sparsity import DefaultK
from core.plots import (bar_figure, comparison_figure, curves_figure, dotplot_figure, gap_strength_figure,
                        lambda_path_figure,
                        band_mass_figure, heatmap_table_figure, slda_curves_figure, history_figure, image_figure, image_grid_figure, probability_curve_figure,
                        heatmap_picture, sorted_weights_figure, topographic_figure, weight_overlay_figure,
                        weight_overlay_picture, samples_layout_figure)


def test_sorted_weights_sorted_with_names_and_cut():
    alpha = np.array([0.1, 0.9, -0.01, 0.5])
    fig = sorted_weights_figure(alpha, ["a", "b", "c", "d"], n_selected=2)
    trace = fig.data[0]
    assert list(trace.y) == [0.9, 0.5, 0.1, -0.01]
    assert list(trace.customdata) == ["b", "d", "a", "c"]
    assert any("sparsity gap: 2" in (a.text or "") for a in fig.layout.annotations)
    log = sorted_weights_figure(alpha, ["a", "b", "c", "d"], log_y=True)
    assert list(log.data[0].y) == [0.9, 0.5, 0.1]
    assert "1 non-positive" in log.layout.title.text and log.layout.yaxis.type == "log"


def test_history_and_probability_curves():
    fig = history_figure([1.0, 2.0, 2.5])
    assert list(fig.data[0].x) == [1, 2, 3] and list(fig.data[0].y) == [1.0, 2.0, 2.5]
    fig = probability_curve_figure([5, 10], [0.5, 0.9])
    assert list(fig.data[0].y) == [0.5, 0.9]


def test_images_are_upright_and_shaped():
    values = np.arange(6.0)
    fig = image_figure(values, image_shape=(2, 3))
    assert np.array_equal(np.asarray(fig.data[0].z), values.reshape(2, 3))
    assert fig.layout.yaxis.autorange == "reversed"  # row 0 at the top, as in the picture
    with pytest.raises(InputError, match="do not fill"):
        image_figure(values, image_shape=(4, 4))


def test_overlay_marks_selected_pixels():
    background = np.zeros((3, 4))
    fig = weight_overlay_figure(background, np.arange(12.0), selected=[5, 11])
    heat, outline = fig.data[-2], fig.data[-1]
    assert heat.text[1][1] == "selected" and heat.text[2][3] == "selected" and heat.text[0][0] == ""
    # two isolated pixels: four sides each, one path with a break after each side
    assert outline.mode == "lines" and len(outline.x) == 8 * 3
    centres = {(round(np.nanmean(outline.y[i:i + 2])), round(np.nanmean(outline.x[i:i + 2])))
               for i in range(0, len(outline.x), 3)}
    assert centres <= {(1, 1), (2, 3), (0, 1), (2, 1), (1, 0), (1, 2), (1, 3), (3, 3), (2, 2), (2, 4)}
    # with opacity 0 (the Sparse LDA page's masks) only the background and the outline are drawn
    bare = weight_overlay_figure(background, np.arange(12.0), selected=[5, 11], opacity=0.0)
    assert [trace.type for trace in bare.data] == ["heatmap", "scatter"]
    assert np.array_equal(bare.data[1].x, outline.x, equal_nan=True)


@pytest.mark.parametrize("seed", range(5))
def test_selection_outline_is_the_boundary_between_marked_and_unmarked_cells(seed):
    from core.plots import selection_outline

    mask = np.random.default_rng(seed).random((6, 5)) < 0.4
    x, y = selection_outline(mask)
    sides = np.column_stack([x.reshape(-1, 3)[:, :2], y.reshape(-1, 3)[:, :2]])
    # brute force: every pair of 4-neighbouring cells (the outside counts as unmarked) that differ
    padded = np.pad(mask, 1)
    expected = set()
    for r in range(-1, 6):
        for c in range(-1, 5):
            for dr, dc in ((1, 0), (0, 1)):
                if padded[r + 1, c + 1] != padded[r + 1 + dr, c + 1 + dc]:
                    expected.add((c + dc / 2, r + dr / 2))  # the middle of the shared side
    drawn = {((x0 + x1) / 2, (y0 + y1) / 2) for x0, x1, y0, y1 in sides}
    assert drawn == expected and len(drawn) == len(sides)
    lengths = np.hypot(sides[:, 1] - sides[:, 0], sides[:, 3] - sides[:, 2])
    assert np.allclose(lengths, 1.0)


def test_image_grid():
    images = np.random.default_rng(0).random((5, 4, 3))
    fig = image_grid_figure(images, titles=list("abcde"), n_cols=3, zmin=0, zmax=1)
    assert len(fig.data) == 1  # one heat map of the tiled images
    mosaic = np.asarray(fig.data[0].z)
    assert mosaic.dtype == np.float32  # sent at half the size of float64
    tiles = [mosaic[top:top + 4, left:left + 3] for top in (0, 5) for left in (0, 4, 8)][:5]
    assert all(np.array_equal(tile, image.astype(np.float32)) for tile, image in zip(tiles, images))
    assert np.isnan(mosaic[:, 3]).all() and np.isnan(mosaic[4]).all()  # the gutters
    assert [a.text for a in fig.layout.annotations] == list("abcde")
    # without a shared scale each image is stretched to [0, 1], and the hover keeps its values
    scaled = image_grid_figure(images * np.arange(1, 6)[:, None, None], n_cols=5)
    z, values = np.asarray(scaled.data[0].z, dtype=float), np.asarray(scaled.data[0].customdata, dtype=float)
    assert np.nanmin(z[:, 4:7]) == 0 and np.nanmax(z[:, 4:7]) == 1
    assert np.allclose(values[:, 4:7], 2 * images[1], rtol=1e-7)
    # images already on a grey scale: the hover gives the values they were made from
    greyed = image_grid_figure(images, n_cols=5, zmin=0, zmax=1, hover_values=100 * images)
    assert np.allclose(np.asarray(greyed.data[0].customdata, dtype=float)[:, 4:7], 100 * images[1])
    assert "customdata" in greyed.data[0].hovertemplate
    with pytest.raises(InputError):
        image_grid_figure(np.zeros((4, 3)))
    with pytest.raises(InputError, match="shape"):
        image_grid_figure(images, hover_values=images[:2])


def test_image_mosaic_tiles_the_images_as_image_grid_figure_does():
    """The picture of a grid: each image where image_grid_figure tiles it (below a title band),
    every pixel a square of whole pixels, greys from zmin (black) to zmax (white), white gutters,
    a title written above an image that has one and nothing above one that has none."""
    from core.plots import image_mosaic

    images = np.random.default_rng(1).random((5, 8, 6)) * 2 - 0.5  # some below 0 and above 1: clipped
    picture = image_mosaic(images, titles=["a", "", "c", "", ""], n_cols=3, image_height=32)
    enlarge, band = 4, 2  # 32 / 8; the row gap of 8-pixel-high images with titles
    mosaic = np.asarray(image_grid_figure(images, titles=list("abcde"), n_cols=3, zmin=0, zmax=1).data[0].z)
    assert picture.dtype == np.uint8 and picture.ndim == 2
    assert picture.shape == ((mosaic.shape[0] + band) * enlarge, mosaic.shape[1] * enlarge)
    body = picture[band * enlarge:]
    expected = np.where(np.isnan(mosaic), 255, np.round(np.clip(mosaic, 0, 1) * 255))
    assert np.array_equal(body, np.repeat(np.repeat(expected, enlarge, 0), enlarge, 1))
    title_band = picture[:band * enlarge]
    columns = lambda c: slice(c * 7 * enlarge, (c * 7 + 6) * enlarge)  # noqa: E731 - 6 wide, a 1-pixel gutter
    assert (title_band[:, columns(0)] < 128).any() and (title_band[:, columns(2)] < 128).any()
    assert (title_band[:, columns(1)] == 255).all()
    plain = image_mosaic(images[:2], n_cols=2, zmin=-0.5, zmax=1.5, image_height=8)
    assert plain.shape == (8, 13) and np.array_equal(plain[:, :6], np.round((images[0] + 0.5) / 2 * 255))
    with pytest.raises(InputError):
        image_mosaic(np.zeros((4, 3)))


def test_topographic_figure_one_ellipse_per_feature():
    coords = np.array([[0.1, 0.5, 1.0], [0.2, -0.3, 0.4]])
    alphas = np.array([[0.5, 0.1, 0.8], [0.2, 0.9, 0.1]])
    fig = topographic_figure(coords, alphas, ["x", "y", "z"])
    assert [trace.name for trace in fig.data] == ["alpha larger in round 1", "alpha larger in round 2", "features"]
    centres = fig.data[-1]
    assert list(centres.x) == [0.1, 0.5, 1.0] and list(centres.y) == [0.2, -0.3, 0.4]
    # the later round minus the earlier, with a bar that says so, red (the scale's top) where the later
    # weighs more, as the ellipses of the later round and the page's difference picture
    assert np.allclose(centres.marker.color, alphas[1] - alphas[0])
    assert centres.marker.colorbar.title.text == "alpha in round 2<br>minus round 1"
    assert centres.marker.colorscale[-1][1].lower() in ("rgb(103,0,31)", "#67001f")
    assert fig.data[1].line.color == "crimson"
    # one closed outline per feature, split by gaps; widths follow the round-1 alphas
    outlines = [np.split(np.asarray(trace.x, dtype=float), np.flatnonzero(np.isnan(np.asarray(trace.x, dtype=float))))
                for trace in fig.data[:2]]
    widths = {}
    for group, members in zip(outlines, ([0, 2], [1])):
        parts = [part[~np.isnan(part)] for part in group if np.any(~np.isnan(part))]
        assert len(parts) == len(members)
        widths.update({j: np.ptp(part) for j, part in zip(members, parts)})
    assert max(widths, key=widths.get) == 2 and min(widths, key=widths.get) == 1
    top = topographic_figure(coords, alphas, ["x", "y", "z"], top=[2])
    assert list(top.data[-1].x) == [1.0] and len(top.data) == 2
    with pytest.raises(InputError, match="two rounds"):
        topographic_figure(coords[:1], alphas[:1])


def test_shared_contrast_stretch_puts_every_image_on_one_grey_scale():
    from core.plots import contrast_stretch

    rng = np.random.default_rng(0)
    dim, bright = rng.uniform(0, 1, (5, 5)), rng.uniform(10, 20, (5, 5))
    shared = contrast_stretch(np.stack([dim, bright]), 0, 100, shared=True)
    low, high = min(dim.min(), bright.min()), max(dim.max(), bright.max())
    assert np.allclose(shared, (np.stack([dim, bright]) - low) / (high - low))  # one linear map
    assert shared[0].max() < shared[1].min()  # the dim image stays dimmer
    separate = contrast_stretch(np.stack([dim, bright]), 0, 100)
    assert separate[0].max() == separate[1].max() == 1.0


def test_rank_stretch_is_the_pixels_rank_over_all_the_images():
    from core.plots import rank_stretch

    images = np.array([[[1.0, 100.0], [1e4, 2.0]], [[2.0, 3.0], [1e6, 5.0]]])
    grey = rank_stretch(images)
    # brute force: the share of the other pixels below each one, ties counted half
    flat = images.ravel()
    expected = np.array([((flat < v).sum() + 0.5 * ((flat == v).sum() - 1)) / (flat.size - 1) for v in flat])
    assert np.allclose(grey.ravel(), expected, rtol=0, atol=1e-15)
    assert grey.min() == 0.0 and grey.max() == 1.0
    assert np.array_equal(np.argsort(grey.ravel(), kind="stable"), np.argsort(flat, kind="stable"))  # order kept
    with pytest.raises(InputError, match="finite"):
        rank_stretch(np.array([[[np.nan, 1.0]]]))


def test_contrast_stretch_maps_percentiles_to_the_unit_range():
    from core.plots import contrast_stretch
    image = np.arange(1600.0).reshape(40, 40)
    image[0, 0] = -1e6  # one extreme pixel does not grey out the rest
    stretched = contrast_stretch(image[None], 1, 99)[0]
    assert stretched.min() == 0.0 and stretched.max() == 1.0
    assert np.ptp(stretched[20]) == pytest.approx(39 / (1584.01 - 16.99), rel=1e-3)
    assert np.all(contrast_stretch(np.full((1, 3, 3), 2.0)) == 0.5)


def test_log_scale_overlay_keeps_the_weights_in_the_hover():
    weights = np.array([[1.0, 1e-2], [1e-5, 0.0]])
    fig = weight_overlay_figure(np.zeros((2, 2)), weights, log_scale=True, decades=3)
    heat = fig.data[1]
    assert np.allclose(np.asarray(heat.z), [[0.0, -2.0], [-3.0, -3.0]])
    assert np.allclose(np.asarray(heat.customdata), weights) and heat.colorbar.title.text == "log10 alpha"


def test_slda_curves_and_band_mass():
    fig = slda_curves_figure([1, 2, 3], [1.5, 2.5, 3], [0.5, 1, 3], bound=[0.1, 0.2, 0.3])
    assert [t.name for t in fig.data] == ["backward", "forward", "Fisher thresholding", "Eq. 5 bound"]
    assert list(fig.data[1].y) == [1, 2, 3]
    fig = band_mass_figure({"A3": 0.1, "L1 diagonal": 0.9})
    assert list(fig.data[0].x) == ["A3", "L1 diagonal"]


def test_sorted_weights_of_many_features_are_drawn_at_every_early_rank_and_a_sample_of_the_rest():
    from core.plots import EVERY_RANK_UP_TO, TAIL_RANKS, sorted_weights_figure

    names = [f"g{j}" for j in range(20_000)]
    alpha = np.random.default_rng(0).random(20_000)
    full = sorted_weights_figure(alpha[:EVERY_RANK_UP_TO + TAIL_RANKS], names[:EVERY_RANK_UP_TO + TAIL_RANKS])
    assert full.data[0].y.size == EVERY_RANK_UP_TO + TAIL_RANKS and "drawn at" not in full.layout.title.text
    lean = sorted_weights_figure(alpha, names, top_k=50)
    trace = lean.data[0]
    assert trace.type == "scatter" and trace.y.size == EVERY_RANK_UP_TO + TAIL_RANKS
    assert "drawn at 3,000 of 20,000 ranks" in lean.layout.title.text
    ranks = np.asarray(trace.x)
    order = np.argsort(-alpha, kind="stable")
    assert np.array_equal(ranks[:EVERY_RANK_UP_TO], np.arange(1, EVERY_RANK_UP_TO + 1))
    assert ranks[-1] == 20_000 and np.all(np.diff(ranks) >= 1)
    # each drawn point is that rank's weight and name
    assert np.array_equal(trace.y, alpha[order][ranks - 1])
    assert list(trace.customdata) == [names[j] for j in order[ranks - 1]]


def test_bar_figure_shows_the_papers_values_beside_ours():
    from core.plots import bar_figure
    fig = bar_figure(["Q-alpha-SI", "PCA"], [0.6, 0.3], [0.01, 0.02], paper={"Q-alpha-SI": 0.64, "SDR-SI": 0.39})
    assert [trace.name for trace in fig.data] == ["this run", "the paper"]
    assert list(fig.data[1].x) == ["Q-alpha-SI"] and list(fig.data[1].y) == [0.64]  # only bars that are drawn
    assert len(bar_figure(["a"], [1.0]).data) == 1


def test_heatmap_table_writes_each_cell_and_leaves_missing_ones_empty():
    figure = heatmap_table_figure(["a", "b"], ["x", "y"], [[0.5, np.nan], [1.0, 0.25]], [[0.01, 0.0], [0.1, 0.002]])
    assert [list(row) for row in figure.data[0].text] == [["0.500 ± 0.010", ""], ["1.000 ± 0.100", "0.250 ± 0.002"]]
    assert list(figure.data[0].y) == ["a", "b"] and figure.layout.yaxis.autorange == "reversed"
    assert [list(row) for row in heatmap_table_figure(["a"], ["x"], [[0.125]]).data[0].text] == [["0.125"]]


def test_heatmap_wraps_long_names_on_its_axes_only():
    """A method named with its settings is broken into lines on the axes, upright, and the
    figure grows a line's height for each; the cells, the hover and the table behind the figure
    keep the whole name."""
    long = "Q-alpha (k = 2, sum of eigenvalues², no side information)"
    others = ["fisher", "variance", "laplacian", "MCFS", "SPEC"]
    short = heatmap_table_figure(["Q-alpha"] + others, ["Q-alpha"] + others, np.eye(6))
    figure = heatmap_table_figure([long] + others, [long] + others, np.eye(6))
    assert list(figure.data[0].x) == [long] + others and list(figure.data[0].y) == [long] + others
    # a square table of the same names: the rows numbered and named, the columns by number (issue 59:
    # wrapped names side by side overlapped at 800 px)
    assert list(figure.layout.xaxis.ticktext) == ["1", "2", "3", "4", "5", "6"]
    rows = list(figure.layout.yaxis.ticktext)
    assert rows[1] == "2 · fisher" and rows[0].replace("<br>", " ") == "1 · " + long
    assert list(figure.layout.xaxis.tickvals) == [long] + others
    assert figure.layout.height >= short.layout.height
    # other tables keep the names on both axes, wrapped to 20 characters a line
    ticks = list(heatmap_table_figure(["a"], [long] + others, np.ones((1, 6))).layout.xaxis.ticktext)
    assert ticks[1] == "fisher" and ticks[0].replace("<br>", " ") == long
    assert max(len(line) for line in ticks[0].split("<br>")) <= 20 and figure.layout.xaxis.tickangle == 0
    from core.plots import figure_table
    assert set(figure_table(figure)["x"]) == {long, *others}


def test_comparison_ticks_are_the_sizes_measured():
    curves = {"variance": dict(size=[1, 2, 5, 10, 20, 50, 100, 1000], accuracy=np.linspace(0.5, 0.8, 8))}
    figure = comparison_figure(curves, "accuracy", extracted={"PCA": dict(size=[3], accuracy=[0.6])})
    assert list(figure.layout.xaxis.tickvals) == [1, 2, 3, 5, 10, 20, 50, 100, 1000]
    assert list(figure.layout.xaxis.ticktext)[-1] == "1,000" and figure.layout.xaxis.type == "log"


def test_lambda_path_figure_draws_the_top_features_against_log_lambda():
    from core.plots import lambda_path_figure

    lams = np.geomspace(1e-3, 10, 5)
    weights = np.zeros((5, 30))
    weights[:, 7] = np.linspace(0.1, 0.9, 5)  # grows with lambda
    weights[:, 3] = np.linspace(0.8, 0.1, 5)  # shrinks
    weights[:, 12] = 0.05
    names = [f"g{j}" for j in range(30)]
    figure = lambda_path_figure(lams, weights, names, current=0.1, n_top=2)
    assert [trace.name for trace in figure.data] == ["g7", "g3"]  # largest peak first
    assert "g7" in figure.data[0].hovertemplate and figure.layout.hovermode == "x unified"  # names on hover
    assert np.allclose(figure.data[0].x, lams) and np.allclose(figure.data[1].y, weights[:, 3])
    assert figure.layout.xaxis.type == "log" and len(figure.layout.shapes) == 1
    assert figure.layout.shapes[0].x0 == 0.1 and figure.layout.shapes[0].xref == "x"  # the current lambda
    assert not lambda_path_figure(lams, weights, names, current=None).layout.shapes
    with pytest.raises(InputError, match="one row per lambda"):
        lambda_path_figure(lams, weights[:4])


def test_gap_strength_figure_draws_one_point_per_lambda_on_a_log_axis():
    from core.plots import gap_strength_figure

    lams, strength = np.geomspace(1e-3, 10, 5), np.array([0.2, 0.4, 0.9, 0.95, 0.5])
    figure = gap_strength_figure(lams, strength)
    assert np.allclose(figure.data[0].x, lams) and np.allclose(figure.data[0].y, strength)
    assert figure.layout.xaxis.type == "log" and figure.layout.yaxis.tickformat == ".0%"
    with pytest.raises(InputError, match="one value per lambda"):
        gap_strength_figure(lams, strength[:4])


def test_figures_redrawn_at_every_step_keep_fixed_margins():
    """Plotly's automargin (which Streamlit's theme turns on) draws a figure twice once its labels
    move the margins; the figures a slider step redraws turn it off on every axis."""
    from core.plots import gap_strength_figure, image_figure, lambda_path_figure, sorted_weights_figure

    lams = np.geomspace(1e-3, 10, 4)
    for figure in (sorted_weights_figure(np.linspace(1, 0, 50), top_k=5),
                   sorted_weights_figure(np.linspace(1, 0.01, 50), log_y=True),
                   lambda_path_figure(lams, np.ones((4, 3)), current=0.1), gap_strength_figure(lams, np.ones(4)),
                   image_figure(np.zeros((6, 4)))):
        assert figure.layout.xaxis.automargin is False and figure.layout.yaxis.automargin is False


def test_comparison_lines_have_distinct_colours_and_the_measure_in_words():
    """Issue 59: red beside pink, blue beside light blue, and a y axis that read "knn"."""
    from core.plots.curves import DISTINCT_COLOURS

    curves = {f"method {i}": dict(size=[1, 2], knn=[0.1 * i, 0.2]) for i in range(8)}
    figure = comparison_figure(curves, "knn", y_title="precision (k-NN purity)",
                               extracted={"PCA": dict(size=[1, 2], knn=[0.3, 0.4])})
    colours = [trace.line.color for trace in figure.data]
    assert len(set(colours)) == 9 and colours[:8] == list(DISTINCT_COLOURS[:8])
    assert figure.layout.yaxis.title.text == "precision (k-NN purity)"


def test_dotplot_places_a_dot_per_class_and_feature():
    from core.plots import dotplot_figure

    score = np.array([[3.0, -1.0, 0.0], [-2.0, 4.0, 0.5]])
    size = np.array([[1.0, 0.25, 0.0], [0.5, 1.0, 0.0]])
    figure = dotplot_figure(["B", "T"], ["g1", "g2", "g3"], score, size)
    dots = figure.data[0]
    assert list(dots.x) == ["g1", "g2", "g3"] * 2 and list(dots.y) == ["B"] * 3 + ["T"] * 3
    assert np.allclose(dots.marker.color, score.ravel()) and dots.marker.cmin == -4.0 and dots.marker.cmax == 4.0
    assert dots.marker.size[0] > dots.marker.size[1] > dots.marker.size[2]  # sized by the share
    with pytest.raises(InputError, match="classes x features"):
        dotplot_figure(["B"], ["g1", "g2", "g3"], score)


@pytest.mark.parametrize("n_classes", [2, 6, 50])
def test_dotplot_names_every_class_in_a_row_of_its_own_with_room_for_the_names(n_classes):
    """Issue 59: on dermatology's classes 1-6 the plot was 50 px tall, its axis read 1, 3, 5, the
    colour bar's numbers overlapped and the first gene name was cut."""
    from core.plots import dotplot_figure
    from core.plots.weights import CHAR_PX, DOT_MIN_PLOT

    classes = [str(c + 1) for c in range(n_classes)]
    names = ["ENSG00000123456.7 long name"] + [f"g{j}" for j in range(29)]
    layout = dotplot_figure(classes, names, np.ones((n_classes, 30))).layout
    plot_height = layout.height - layout.margin.t - layout.margin.b
    assert plot_height >= max(DOT_MIN_PLOT, 20 * n_classes)  # a row of 20 px or more per class
    assert list(layout.yaxis.tickvals) == classes and layout.yaxis.type == "category"
    assert list(layout.xaxis.tickvals) == names and layout.xaxis.tickangle == -90  # upright: none runs off
    assert layout.margin.b >= CHAR_PX * 24 and layout.margin.l >= CHAR_PX * len(classes[-1])


def test_topographic_labels_never_overlap_and_the_heaviest_come_first():
    """Placed labels' boxes are pairwise disjoint (checked against every pair); a point whose
    label was left out overlaps a placed one of higher priority; names stay on hover."""
    from core.plots import label_boxes, non_overlapping_labels, topographic_figure

    rng = np.random.default_rng(0)
    x, y = rng.random(80), rng.random(80)
    names = [f"pixel ({i}, {j})" for i, j in rng.integers(0, 60, (80, 2))]
    priority = rng.random(80)
    chosen = non_overlapping_labels(x, y, names, priority)
    boxes = label_boxes(x, y, names)

    def overlap(p, q):
        return p[0] < q[2] and q[0] < p[2] and p[1] < q[3] and q[1] < p[3]

    placed = np.flatnonzero(chosen)
    assert 0 < placed.size < 80 and chosen[np.argmax(priority)]
    assert not any(overlap(boxes[i], boxes[j]) for i in placed for j in placed if i < j)
    for i in np.flatnonzero(~chosen):
        assert any(overlap(boxes[i], boxes[j]) and priority[j] > priority[i] for j in placed)
    coordinates, alphas = rng.random((2, 80)), rng.random((2, 80))
    figure = topographic_figure(coordinates, alphas, names)
    points = figure.data[-1]
    assert sum(bool(text) for text in points.text) < 80 and list(points.hovertext) == names
    assert "minus round 1" in points.marker.colorbar.title.text


def test_axis_titles_are_words_and_the_formulae_are_in_the_hover():
    """[Issue 34] Axis titles in words; the formula behind an axis where the reader points at a
    value (the hover), not in the title."""
    rng = np.random.default_rng(0)
    curves = slda_curves_figure(np.arange(1.0, 6.0), np.arange(1.0, 6.0) + 0.5, np.arange(1.0, 6.0) - 0.5)
    topo = topographic_figure(rng.uniform(-3, 3, (2, 12)), rng.uniform(0, 1, (2, 12)))
    for figure in (curves, topo):
        titles = [figure.layout.xaxis.title.text, figure.layout.yaxis.title.text]
        assert all(title and not set(title) & set("^_⁻ₛ") for title in titles), titles
    assert "aₛᵀ Bₛₛ⁻¹ aₛ" in curves.data[0].hovertemplate
    assert "atan2(v₂ⱼ, v₁ⱼ)" in topo.data[-1].hovertemplate


def _every_builder():
    """Each plot builder called with arguments that take each of its branches."""
    rng = np.random.default_rng(0)
    alpha = rng.random(40) ** 3
    lams = np.logspace(-3, 1, 5)
    images = rng.random((3, 4, 5))
    coordinates, alphas = rng.uniform(-3, 3, (2, 12)), rng.random((2, 12))
    curves = {"Q-alpha": dict(size=[5, 10], accuracy=[0.7, 0.8]),
              "Fisher": dict(size=[5, 10], accuracy=[0.6, 0.9], accuracy_sd=[0.05, 0.02])}
    return {
        "sorted weights": sorted_weights_figure(alpha, [f"g{j}" for j in range(40)], 6, top_k=8),
        "sorted weights, log, no clear gap": sorted_weights_figure(
            alpha - 0.1, None, 6, log_y=True, clear_gap=False, default=DefaultK(k=9, rule="half of the squared weight")),
        "history": history_figure([1.0, 2.0, 2.5]),
        "lambda path": lambda_path_figure(lams, rng.random((5, 20)), current=0.1),
        "gap strength": gap_strength_figure(lams, rng.random(5)),
        "dot plot": dotplot_figure(["a", "b"], ["f1", "f2", "f3"], rng.normal(size=(2, 3)), rng.random((2, 3))),
        "image": image_figure(rng.random(20), (4, 5), title="t", hover_names=[f"p{j}" for j in range(20)], zmin=0, zmax=1),
        "overlay": weight_overlay_figure(rng.random((4, 5)), rng.random((4, 5)), selected=[0, 1, 6]),
        "overlay, log": weight_overlay_figure(rng.random((4, 5)), rng.random((4, 5)), log_scale=True),
        "overlay, outline only": weight_overlay_figure(rng.random((4, 5)), rng.random((4, 5)), selected=[2], opacity=0.0),
        "image grid": image_grid_figure(images, titles=["a", "b", "c"], n_cols=2),
        "image grid, one scale": image_grid_figure(images, zmin=0.0, zmax=1.0, hover_values=images * 2),
        "topographic": topographic_figure(coordinates, alphas, top=np.arange(8)),
        "probability": probability_curve_figure([5, 10], [0.5, 0.9]),
        "sparse LDA": slda_curves_figure([1, 2, 3], [1.5, 2, 3], [1, 1, 3], bound=[4, 4, 4], log_y=True),
        "band mass": band_mass_figure({"approximation": 0.6, "level 1": 0.4}),
        "comparison": comparison_figure(curves, "accuracy", extracted={"PCA": dict(size=[2, 4], accuracy=[0.5, 0.6])}),
        "curves": curves_figure({"a": ([1, 2], [3, 4])}, "x", "y", title="t", log_x=True, y_range=(0, 5)),
        "bars": bar_figure(["a", "b"], [0.5, 0.6], errors=[0.1, 0.1], paper={"a": 0.55}),
        "bars, no paper": bar_figure(["a"], [0.5]),
        "table": heatmap_table_figure(["r1", "r2"], ["c1"], [[0.5], [np.nan]], errors=[[0.1], [0.2]]),
        "samples layout": samples_layout_figure(rng.normal(size=(6, 2)), [0, 1, 0, 2, 1, 0], ["a", "b", "c"],
                                                names=list("uvwxyz"), side_coordinates=rng.normal(size=(2, 2)),
                                                side_names=["s1", "s2"], axis_names=("UMAP1", "UMAP2")),
        "samples layout, no side": samples_layout_figure(rng.normal(size=(3, 2)), [0, 0, 1], ["a", "b"]),
        "samples layout by a feature": samples_layout_figure(rng.normal(size=(3, 2)), [0, 0, 1], ["a", "b"],
                                                             values=[2.0, 0.5, 1.0], value_name="NKG7"),
    }


def _plain(value):
    """A figure's JSON with every array decoded to a list, for comparing figures."""
    from conftest import plotly_array

    if isinstance(value, dict) and "bdata" in value:
        return _plain(plotly_array(value).tolist())
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return "NaN" if isinstance(value, float) and np.isnan(value) else value


@pytest.mark.parametrize("name", list(_every_builder()))
def test_every_builder_writes_a_figure_plotly_validation_leaves_unchanged(name):
    """The builders hand Plotly their dicts without its validation (core.plots._figure, 10-20x
    faster); built again with validation, each figure must come out the same: no misspelt or
    invalid property (validation raises), no shorthand such as ``title_text`` that only validation
    expands (the browser would ignore it), no value validation would coerce."""
    import json

    import plotly.graph_objects as go
    import plotly.io as pio

    figure = _every_builder()[name]
    validated = go.Figure(figure.to_dict())  # raises ValueError on an invalid property
    assert _plain(json.loads(pio.to_json(figure, validate=False))) == _plain(json.loads(pio.to_json(validated)))


def test_overlay_picture_blends_plotlys_colours_over_the_grey_image():
    """Each pixel: (1 - opacity) x its grey (black at the image's smallest value, white at its
    largest) + opacity x its weight's colour on Plotly's reversed "Hot" scale, as the figure's heat
    maps draw them (the colours from Plotly's own sampling of the scale)."""
    from plotly.colors import sample_colorscale, unlabel_rgb

    rng = np.random.default_rng(0)
    background, weights = rng.random((3, 4)), rng.random((3, 4))
    picture = weight_overlay_picture(background, weights, opacity=0.6, image_height=3)
    assert picture.shape == (3, 4, 3) and picture.dtype == np.uint8
    grey = (background - background.min()) / np.ptp(background) * 255
    level = (weights - weights.min()) / np.ptp(weights)
    for (row, col), t in np.ndenumerate(level):
        colour = np.array(unlabel_rgb(sample_colorscale("Hot", [1.0 - t])[0]))
        assert np.allclose(picture[row, col], 0.4 * grey[row, col] + 0.6 * colour, atol=1.0)
    assert np.array_equal(weight_overlay_picture(background, weights, opacity=0.0, image_height=3)[..., 0],
                          np.round(grey).astype(np.uint8))


def test_overlay_picture_on_a_log_scale_colours_as_the_figure_does():
    """With log_scale the picture's colours follow the figure's heat map values (log10 of the
    weights over three decades), from its smallest (white) to its largest (black)."""
    from plotly.colors import sample_colorscale, unlabel_rgb

    weights = np.array([[1e-6, 1e-3], [1e-2, 1.0]])
    z = np.asarray(weight_overlay_figure(np.zeros((2, 2)), weights, log_scale=True).data[1].z, dtype=float)
    assert np.allclose(z, [[-3, -3], [-2, 0]])
    picture = weight_overlay_picture(np.zeros((2, 2)), weights, opacity=1.0, image_height=2, log_scale=True)
    for (row, col), value in np.ndenumerate(z):
        colour = unlabel_rgb(sample_colorscale("Hot", [1.0 - (value + 3) / 3])[0])
        assert np.allclose(picture[row, col], colour, atol=1.0), (value, picture[row, col], colour)


def test_overlay_picture_outlines_the_selected_region_and_nothing_else():
    blue = (0, 191, 255)
    weights = np.zeros(12)
    picture = weight_overlay_picture(np.zeros((3, 4)), weights, selected=[5, 6, 3], image_height=12)
    assert picture.shape == (12, 16, 3)  # every pixel 4 x 4
    outline = (picture == blue).all(axis=-1)
    expected = np.zeros((12, 16), dtype=bool)
    expected[4, 4:12] = expected[7, 4:12] = expected[4:8, 4] = expected[4:8, 11] = True  # cells 5 and 6: one region
    expected[0, 12:16] = expected[3, 12:16] = expected[0:4, 12] = expected[0:4, 15] = True  # cell 3, in the corner
    assert np.array_equal(outline, expected)
    assert not (weight_overlay_picture(np.zeros((3, 4)), weights, image_height=12) == blue).all(axis=-1).any()
    with pytest.raises(InputError, match="opacity"):
        weight_overlay_picture(np.zeros((3, 4)), weights, opacity=1.5)


@pytest.mark.parametrize("scale", ["Hot", "RdBu_r"])
def test_heatmap_picture_has_plotlys_colours_between_zmin_and_zmax(scale):
    """Each pixel in the colour Plotly's own sampling gives its value's place between zmin and
    zmax; values beyond them take the end colours (as the heat map clips them); every pixel is
    enlarged to a square of whole pixels."""
    from plotly.colors import sample_colorscale, unlabel_rgb

    values = np.random.default_rng(1).uniform(-1.5, 1.5, 12)
    picture = heatmap_picture(values, (3, 4), scale, zmin=-1.0, zmax=1.0, image_height=6)
    assert picture.shape == (6, 8, 3) and picture.dtype == np.uint8
    for (row, col), value in np.ndenumerate(values.reshape(3, 4)):
        expected = unlabel_rgb(sample_colorscale(scale, [float(np.clip((value + 1.0) / 2.0, 0, 1))])[0])
        cell = picture[2 * row:2 * row + 2, 2 * col:2 * col + 2].reshape(-1, 3)
        assert (np.abs(cell - np.array(expected)) <= 1.0).all(), (value, cell[0], expected)
    # without a range: the values' own smallest and largest
    own = heatmap_picture(np.array([[2.0, 4.0]]), colorscale="Hot", image_height=1)
    assert own[0, 0].tolist() == [0, 0, 0] and own[0, 1].tolist() == [255, 255, 255]
    with pytest.raises(InputError, match="finite"):
        heatmap_picture(np.array([[np.nan, 1.0]]))
    with pytest.raises(InputError, match="zmin"):
        heatmap_picture(np.ones((2, 2)), zmin=1.0, zmax=0.0)


def test_sorted_weights_leave_out_unscored_constant_features_and_say_so():
    from core.plots import sorted_weights_figure

    figure = sorted_weights_figure(np.array([0.5, -np.inf, 0.2, -np.inf, 0.9]), title="Scores")
    drawn = np.concatenate([np.asarray(trace.y, dtype=float) for trace in figure.data if trace.y is not None])
    assert np.isfinite(drawn).all() and {0.9, 0.5, 0.2} <= set(drawn.tolist())
    assert "2 constant feature(s) without a score" in figure.layout.title.text


def test_comparison_ticks_on_many_sizes_are_one_two_five_and_the_largest():
    """Issue 76 (7): on sizes 1-19 Plotly's own log ticks showed a stray "9" (0.9) and "2" (20)."""
    from core.plots import comparison_figure

    sizes = list(range(1, 20))
    figure = comparison_figure({"m": {"size": sizes, "accuracy": [0.5] * 19}}, "accuracy")
    assert list(figure.layout.xaxis.tickvals) == [1, 2, 5, 10, 19]
    assert list(figure.layout.xaxis.ticktext) == ["1", "2", "5", "10", "19"]
    few = comparison_figure({"m": {"size": [1, 2, 5, 10, 13], "accuracy": [0.5] * 5}}, "accuracy")
    assert list(few.layout.xaxis.tickvals) == [1, 2, 5, 10, 13]


def test_a_looked_up_feature_high_on_the_plot_is_named_below_its_point():
    """Issue 76 (6): at rank 1 the name was printed under the "top K" note."""
    from core.plots import sorted_weights_figure

    alpha = np.array([0.9, 0.5, 0.1, 0.05])
    assert sorted_weights_figure(alpha, top_k=2, marked=0).data[1].textposition == "bottom right"
    assert sorted_weights_figure(alpha, top_k=2, marked=3).data[1].textposition == "top right"


def test_sorted_weights_on_a_log_rank_axis_place_their_marks_where_plotly_reads_them():
    """Issue 76 (11): the Kernel page's weights on the Q-alpha page's log rank axis. On a log axis
    Plotly reads an annotation's x as the logarithm of the position and a shape's as the position."""
    from core.plots import sorted_weights_figure

    alpha = np.sort(np.random.default_rng(0).random(500))[::-1]
    figure = sorted_weights_figure(alpha, n_selected=40, clear_gap=True, log_rank=True)
    assert figure.layout.xaxis.type == "log" and figure.layout.xaxis.dtick == 1
    line = next(shape for shape in figure.layout.shapes if shape.type == "line")
    assert line.x0 == line.x1 == 40.5
    note = next(a for a in figure.layout.annotations if "sparsity gap" in a.text)
    assert note.x == pytest.approx(np.log10(40.5))
    linear = sorted_weights_figure(alpha, n_selected=40, clear_gap=True)
    assert linear.layout.xaxis.type in (None, "linear") and next(
        a for a in linear.layout.annotations if "sparsity gap" in a.text).x == 40.5


def test_a_layout_coloured_by_a_feature_draws_the_highest_last_with_its_value_on_hover():
    """Issue 77 (1): one trace on viridis with a colour bar, the samples in increasing order of
    the feature (the highest on top, as scanpy's sort_order), each named with its group and value;
    values of the wrong length are refused."""
    coordinates = np.array([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0], [6.0, 7.0]])
    figure = samples_layout_figure(coordinates, [0, 1, 0, 1], ["a", "b"], names=list("wxyz"), values=[3.0, -1.0, 2.0, 3.0],
                                   value_name="CD3E")
    (trace,) = figure.data
    assert list(trace.marker.color) == [-1.0, 2.0, 3.0, 3.0] and list(trace.x) == [2.0, 4.0, 0.0, 6.0]
    assert trace.marker.showscale and trace.marker.colorbar.title.text == "CD3E"
    assert list(trace.text) == ["x · class: b", "y · class: a", "w · class: a", "z · class: b"]
    with pytest.raises(ValueError, match="one value per sample"):
        samples_layout_figure(coordinates, [0, 1, 0, 1], ["a", "b"], values=[1.0, 2.0])


def test_column_scales_are_the_spread_and_one_for_a_constant_column():
    """The scales the map's colours are brought back with: NumPy's population standard deviation,
    1 where a column is constant to float64's rounding (log1p(5) twelve times)."""
    from core.validation import column_scales, zscores

    X = np.c_[np.arange(12.0), np.full(12, np.log1p(5.0)), np.linspace(-3, 9, 12) ** 2]
    mean, scale = column_scales(X)
    np.testing.assert_allclose(mean, [5.5, np.log1p(5.0), np.mean(np.linspace(-3, 9, 12) ** 2)])
    np.testing.assert_allclose(scale, [np.sqrt(143 / 12), 1.0, np.std(np.linspace(-3, 9, 12) ** 2)])
    np.testing.assert_allclose(zscores(X) * scale + mean, X, atol=1e-12)
