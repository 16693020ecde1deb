// The map of the samples (issue 60): each sample on the first two principal components of the
// top-K features, standardised, redrawn here as K and λ move from the standardised data sent once
// (pages/ui/sample_map.py mounts them; core/evaluation/sample_map.py is the server's version and
// the reference the tests hold these coordinates to). Loaded before pages/ui/scrubber.js, which
// builds one map per scrubber. Matrix-free: G v = Σ_j z_j (z_jᵀ v) over the selected columns j,
// so a K step costs 2·n·K per product and no n x n matrix is held.

const MAP_TOLERANCE = 1e-7;  // converged: each wanted Ritz pair's ‖G u − θ u‖ at most this × θ₁
const MAP_BLOCK = 3;         // vectors carried between restarts: the two wanted and one beside them
const MAP_DEPTH = 6;         // blocks of the Krylov space per restart (G⁰V ... G⁵V): 18 vectors
const MAP_FRAME_MS = 12;     // work per animation frame before the points are drawn (at least one restart)
const MAP_RESTART_WORK = 1.5e7;  // multiply-adds a restart may cost: fewer blocks on large data (about 20 ms)
const MAP_MAX_ITER = 2000;   // iterations per K and λ before the map says it did not converge
// Plotly's default colours, then ten more (classes beyond twenty repeat them)
const MAP_COLOURS = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f',
  '#bcbd22', '#17becf', '#aec7e8', '#ffbb78', '#98df8a', '#ff9896', '#c5b0d5', '#c49c94', '#f7b6d2', '#c7c7c7',
  '#dbdb8d', '#9edae5'];
// matplotlib's viridis at nine points: the scrubber's weights and a feature's values on the map
const VIRIDIS = [[68, 1, 84], [71, 44, 122], [59, 81, 139], [44, 113, 142], [33, 144, 141], [39, 173, 129],
  [92, 200, 99], [170, 220, 50], [253, 231, 37]];
const MAP_COLOURINGS_KEPT = 8;  // features whose values a data set's map keeps decoded (a click back is free)
let mapPanels = 0;              // maps built in the page: each names its list of features apart

// the colour of t in [0, 1] on viridis, as 'rgb(...)'
function viridisAt(t) {
  const x = Math.min(1, Math.max(0, t)) * (VIRIDIS.length - 1), i = Math.min(VIRIDIS.length - 2, Math.floor(x)), f = x - i;
  const [r, g, b] = [0, 1, 2].map((c) => Math.round(VIRIDIS[i][c] + f * (VIRIDIS[i + 1][c] - VIRIDIS[i][c])));
  return `rgb(${r},${g},${b})`;
}

// a feature's values for the map's samples with what drawing them needs: their range, whether
// they are constant, and the order that draws the highest last (on top, as scanpy's sort_order)
function summariseColouring(name, values) {
  let low = Infinity, high = -Infinity;
  for (const v of values) { if (v < low) low = v; if (v > high) high = v; }
  const order = Int32Array.from(values.keys()).sort((a, b) => values[a] - values[b] || a - b);
  return { name, values, low, high, constant: !(high > low), order };
}

// base64 of little-endian values as a typed array (the scrubber's weights and image too). A plain
// loop: Uint8Array.from with a mapping function took 280 ms for the AR faces' samples (1.7 million
// characters) against 19 ms, in the message handler of every new session's first run
function decodeBase64(text, Type) {
  const binary = atob(text), bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return new Type(bytes.buffer);
}

// The standardised samples of one part (main or side), feature after feature: sent as float32,
// or for 8-bit data (images) as the values' bytes, standardised here as the server does
function standardised(part, n, p, divisor, centre, scale) {
  if (!part.codes) return { z: decodeBase64(part.z, Float32Array), codes: null };
  const codes = decodeBase64(part.codes, Uint8Array), z = new Float32Array(n * p);
  for (let j = 0; j < p; j++) {
    const c = centre[j], s = scale[j];
    for (let i = j * n; i < (j + 1) * n; i++) z[i] = (codes[i] / divisor - c) / s;
  }
  return { z, codes };
}

// What pages/ui/sample_map.py mounted for a data set: {data: the standardised samples, view: the
// colours and, for data too large to send, the server's coordinates}, by the data set's key
function mapSamples(key) {
  const entry = window.__selectionSamples && window.__selectionSamples.get(key);
  if (!entry) return null;
  if (entry.data && !entry.decoded) {
    const d = entry.data, centre = decodeBase64(d.centre, Float64Array), scale = decodeBase64(d.scale, Float64Array);
    const { z, codes } = standardised(d, d.n, d.p, d.divisor, centre, scale), norms = new Float64Array(d.p);
    for (let j = 0; j < d.p; j++) {
      let s = 0;
      for (let i = j * d.n; i < (j + 1) * d.n; i++) s += z[i] * z[i];
      norms[j] = s;
    }
    entry.decoded = { n: d.n, p: d.p, z, codes, divisor: d.divisor, norms, names: d.names, colourings: new Map(),
                      centre, scale,
                      side: d.side ? { n: d.side.n, z: standardised(d.side, d.side.n, d.p, d.divisor, centre, scale).z,
                                       names: d.side.names } : null,
                      images: d.images ? { height: d.images.height, width: d.images.width,
                                           pixels: decodeBase64(d.images.pixels, Uint8Array) } : null };
  }
  return entry;
}

// eigenvalues (largest first) and eigenvectors (columns of a b x b row-major array) of a small
// symmetric matrix, by cyclic Jacobi rotations
function symmetricEigen(H, b) {
  const A = Float64Array.from(H), V = new Float64Array(b * b);
  for (let i = 0; i < b; i++) V[i * b + i] = 1;
  let scale = 0;
  for (let i = 0; i < b * b; i++) scale += A[i] * A[i];
  for (let sweep = 0; sweep < 60; sweep++) {
    let off = 0;
    for (let p = 0; p < b; p++) for (let q = p + 1; q < b; q++) off += A[p * b + q] * A[p * b + q];
    if (off <= 1e-32 * scale) break;
    for (let p = 0; p < b; p++) {
      for (let q = p + 1; q < b; q++) {
        const apq = A[p * b + q];
        if (apq === 0) continue;
        const theta = (A[q * b + q] - A[p * b + p]) / (2 * apq);
        const t = (theta >= 0 ? 1 : -1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
        const c = 1 / Math.sqrt(t * t + 1), s = t * c;
        for (let k = 0; k < b; k++) {
          const akp = A[k * b + p], akq = A[k * b + q];
          A[k * b + p] = c * akp - s * akq; A[k * b + q] = s * akp + c * akq;
        }
        for (let k = 0; k < b; k++) {
          const apk = A[p * b + k], aqk = A[q * b + k];
          A[p * b + k] = c * apk - s * aqk; A[q * b + k] = s * apk + c * aqk;
        }
        for (let k = 0; k < b; k++) {
          const vkp = V[k * b + p], vkq = V[k * b + q];
          V[k * b + p] = c * vkp - s * vkq; V[k * b + q] = s * vkp + c * vkq;
        }
      }
    }
  }
  const order = Array.from({ length: b }, (_, i) => i).sort((x, y) => A[y * b + y] - A[x * b + x]);
  const values = Float64Array.from(order, (i) => A[i * b + i]);
  const vectors = new Float64Array(b * b);
  order.forEach((from, to) => { for (let k = 0; k < b; k++) vectors[k * b + to] = V[k * b + from]; });
  return { values, vectors };
}

// a deterministic start vector c of length n (the same every run: the map is reproducible)
function mapStart(V, n, c, salt) {
  let state = (2654435761 * (c + 1) + 97 * salt) >>> 0;
  for (let i = 0; i < n; i++) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    V[c * n + i] = state / 4294967296 - 0.5;
  }
}

// the vectors `from` to b - 1 of V (each of length n, one after another) made orthonormal to
// the ones before them and to each other, in place (modified Gram-Schmidt, twice); a vector lost
// in the others is replaced by a new start
function orthonormalise(V, n, b, from = 0) {
  for (let c = from; c < b; c++) {
    for (let attempt = 0; attempt < 4; attempt++) {
      let before = 0;
      for (let i = 0; i < n; i++) before += V[c * n + i] * V[c * n + i];
      for (let pass = 0; pass < 2; pass++) {
        for (let d = 0; d < c; d++) {
          let s = 0;
          for (let i = 0; i < n; i++) s += V[c * n + i] * V[d * n + i];
          for (let i = 0; i < n; i++) V[c * n + i] -= s * V[d * n + i];
        }
      }
      let norm = 0;
      for (let i = 0; i < n; i++) norm += V[c * n + i] * V[c * n + i];
      if (norm > 1e-20 * before && norm > 0) {
        norm = Math.sqrt(norm);
        for (let i = 0; i < n; i++) V[c * n + i] /= norm;
        break;
      }
      mapStart(V, n, c, attempt + 1);
    }
  }
}

// W = G V for the vectors `from` to b - 1 of V, G = Σ_j z_j z_jᵀ over the columns `cols` of z
// (column j holds the n values z[j·n ... j·n + n)); three vectors at a time read each column once
function gramTimes(z, n, cols, V, b, W, from = 0) {
  W.fill(0, from * n, b * n);
  for (let c = from; c < b; c += 3) {
    const width = Math.min(3, b - c);
    const v0 = V.subarray(c * n, (c + 1) * n), w0 = W.subarray(c * n, (c + 1) * n);
    const v1 = width > 1 ? V.subarray((c + 1) * n, (c + 2) * n) : v0, w1 = width > 1 ? W.subarray((c + 1) * n, (c + 2) * n) : null;
    const v2 = width > 2 ? V.subarray((c + 2) * n, (c + 3) * n) : v0, w2 = width > 2 ? W.subarray((c + 2) * n, (c + 3) * n) : null;
    for (let r = 0; r < cols.length; r++) {
      const at = cols[r] * n;
      let s0 = 0, s1 = 0, s2 = 0;
      for (let i = 0; i < n; i++) {
        const x = z[at + i];
        s0 += x * v0[i]; s1 += x * v1[i]; s2 += x * v2[i];
      }
      if (width === 3) {
        for (let i = 0; i < n; i++) { const x = z[at + i]; w0[i] += s0 * x; w1[i] += s1 * x; w2[i] += s2 * x; }
      } else if (width === 2) {
        for (let i = 0; i < n; i++) { const x = z[at + i]; w0[i] += s0 * x; w1[i] += s1 * x; }
      } else {
        for (let i = 0; i < n; i++) w0[i] += s0 * z[at + i];
      }
    }
  }
}

// The principal pair of the selected columns by a restarted block Krylov method: from the block
// V of b vectors, Rayleigh-Ritz on span{V, GV, ..., G^(depth-1) V} and the b leading Ritz vectors
// as the next V (Saad, Numerical Methods for Large Eigenvalue Problems, 2011, Ch. 6; Musco &
// Musco, NIPS 2015). Started from the last K's vectors: a K step moves them little.
function createPrincipalPair(n) {
  const b = Math.min(MAP_BLOCK, n), deepest = Math.min(MAP_DEPTH, Math.max(1, Math.floor(n / b)));
  const state = { b, n, V: new Float64Array(b * n), U: new Float64Array(2 * n), values: new Float64Array(2),
                  residual: Infinity, iterations: 0, converged: false, started: false };
  // one restart on the columns `cols` of z, with at most `depth` blocks
  state.step = (z, cols, depth = deepest) => {
    depth = Math.max(1, Math.min(depth, deepest));
    if (!state.started) {
      for (let c = 0; c < b; c++) mapStart(state.V, n, c, 0);
      orthonormalise(state.V, n, b);
      state.started = true;
    }
    const m = depth * b, Q = new Float64Array(m * n), GQ = new Float64Array(m * n);
    Q.set(state.V);
    for (let t = 0; t < depth; t++) {
      gramTimes(z, n, cols, Q, (t + 1) * b, GQ, t * b);
      if (t + 1 < depth) {
        Q.set(GQ.subarray(t * b * n, (t + 1) * b * n), (t + 1) * b * n);
        orthonormalise(Q, n, (t + 2) * b, (t + 1) * b);
      }
    }
    const H = new Float64Array(m * m);
    for (let c = 0; c < m; c++) {
      for (let d = c; d < m; d++) {
        let s = 0;
        for (let i = 0; i < n; i++) s += Q[c * n + i] * GQ[d * n + i] + Q[d * n + i] * GQ[c * n + i];
        H[c * m + d] = H[d * m + c] = s / 2;
      }
    }
    const { values, vectors } = symmetricEigen(H, m);
    // the Ritz vectors U = Q S and G U = GQ S of the b leading values; the next V is U
    const next = new Float64Array(b * n), top = Math.max(values[0], 0);
    let worst = 0;
    for (let a = 0; a < b; a++) {
      let residual = 0;
      for (let i = 0; i < n; i++) {
        let u = 0, gu = 0;
        for (let c = 0; c < m; c++) { u += Q[c * n + i] * vectors[c * m + a]; gu += GQ[c * n + i] * vectors[c * m + a]; }
        next[a * n + i] = u;
        if (a < 2) { state.U[a * n + i] = u; residual += (gu - values[a] * u) ** 2; }
      }
      if (a < 2) worst = Math.max(worst, top > 0 ? Math.sqrt(residual) / top : 0);
    }
    state.values[0] = Math.max(values[0], 0);
    state.values[1] = m > 1 ? Math.max(values[1], 0) : 0;
    state.residual = worst;
    state.iterations += 1;
    state.converged = worst <= MAP_TOLERANCE;
    orthonormalise(next, n, b);
    state.V = next;
  };
  return state;
}

// The map panel of one scrubber: `panel` is its element; `update(view)` with the scrubber's K,
// λ and order draws it (and refines it over the next frames until it converges).
// `report(value)` tells the server which samples the hand picked with a box ({key, rows}).
function createSampleMap(panel, report) {
  const listId = `map-features-${++mapPanels}`;
  panel.innerHTML = `<div class="map-title"></div>
    <div class="map-colour"><label>Colour by <input type="text" class="map-colour-input" list="${listId}"
      placeholder="the classes, or type a feature" aria-label="Colour the samples by a feature" autocomplete="off"></label>
      <datalist id="${listId}"></datalist>
      <button type="button" class="map-colour-reset" hidden>Back to the classes</button>
      <span class="map-colour-note" role="status"></span></div>
    <div class="map-box"><canvas class="map"></canvas>
    <div class="map-band" hidden></div>
    <div class="map-tip" role="tooltip" hidden><canvas class="map-tip-image"></canvas><div class="map-tip-text"></div></div></div>
    <div class="map-legend"></div><canvas class="map-colour-bar" hidden></canvas><div class="map-caption"></div>
    <div class="map-picked" hidden><span class="map-picked-text"></span> <button type="button" class="map-clear">Clear</button></div>`;
  const $ = (selector) => panel.querySelector(selector);
  const canvas = $('.map'), tip = $('.map-tip'), band = $('.map-band');
  const state = { view: null, pair: null, solvedFor: null, frame: 0, coordinates: null,
                  side: null, screen: null, lastU: null, picked: new Set(), pickedKey: null, dragFrom: null,
                  colourBy: null, nameIndex: null, indexedNames: null };
  const colourInput = $('.map-colour-input');

  // the coordinates of the main samples (n x 2) and the side samples from the converged or
  // refining pair: U·sqrt(θ), each axis's sign kept from the last drawing (the first: the entry of
  // largest magnitude positive, as the server's map)
  function coordinatesOf(samples, cols) {
    const { n } = samples, pair = state.pair, coordinates = new Float64Array(2 * n);
    for (let a = 0; a < 2; a++) {
      const u = pair.U.subarray(a * n, (a + 1) * n), root = Math.sqrt(pair.values[a]);
      let sign = 1;
      if (state.lastU) {
        let s = 0;
        for (let i = 0; i < n; i++) s += u[i] * state.lastU[a * n + i];
        sign = s < 0 ? -1 : 1;
      } else {
        let big = 0;
        for (let i = 0; i < n; i++) if (Math.abs(u[i]) > Math.abs(big)) big = u[i];
        sign = big < 0 ? -1 : 1;
      }
      for (let i = 0; i < n; i++) { u[i] *= sign; coordinates[2 * i + a] = root * u[i]; }
    }
    state.lastU = Float64Array.from(pair.U);
    let side = null;
    if (samples.side) {
      // the side samples by the loadings Z_Kᵀ u / sqrt(θ)
      const m = samples.side.n, s = samples.side.z, z = samples.z;
      side = new Float64Array(2 * m);
      for (const j of cols) {
        for (let a = 0; a < 2; a++) {
          if (!(pair.values[a] > 0)) continue;
          let load = 0;
          for (let i = 0; i < n; i++) load += z[j * n + i] * pair.U[a * n + i];
          load /= Math.sqrt(pair.values[a]);
          for (let i = 0; i < m; i++) side[2 * i + a] += load * s[j * m + i];
        }
      }
    }
    return { coordinates, side };
  }

  function schedule() { if (!state.frame) state.frame = requestAnimationFrame(work); }

  // the feature names' positions, built once per list of names (the scrubber's, by reference)
  function indexOf(name) {
    const names = state.view && state.view.names;
    if (!names) return -1;
    if (state.indexedNames !== names) {
      state.nameIndex = new Map(names.map((feature, j) => [String(feature), j]));
      state.indexedNames = names;
    }
    const j = state.nameIndex.get(name);
    return j === undefined ? -1 : j;
  }

  // the colouring by the chosen feature (null: by the groups). In the browser's budget its values
  // are the standardised samples sent once, back on their own scale (z·scale + centre); a map
  // drawn by the server carries the chosen feature's values for its rows once the server knows it
  function colouring(entry) {
    const name = state.colourBy;
    if (!name) return null;
    if (entry.view && entry.view.server) {
      const sent = entry.view.feature;
      return sent && sent.name === name ? summariseColouring(name, Float64Array.from(sent.values)) : { name, pending: true };
    }
    const samples = entry.decoded, j = indexOf(name);
    if (!samples || j < 0 || j >= samples.p) return { name, missing: true };
    let found = samples.colourings.get(name);
    if (!found) {
      const { n, z, codes, divisor } = samples, centre = samples.centre[j], scale = samples.scale[j];
      const values = new Float64Array(n);
      // 8-bit data: the values themselves, exactly
      if (codes) for (let i = 0; i < n; i++) values[i] = codes[j * n + i] / divisor;
      else for (let i = 0; i < n; i++) values[i] = z[j * n + i] * scale + centre;
      found = summariseColouring(name, values);
      samples.colourings.set(name, found);
      if (samples.colourings.size > MAP_COLOURINGS_KEPT) samples.colourings.delete(samples.colourings.keys().next().value);
    }
    return found;
  }

  // refine the pair for the current K and λ for up to MAP_FRAME_MS, then draw
  function work() {
    state.frame = 0;
    const view = state.view, entry = mapSamples(view.key);
    if (!entry) { panel.style.display = 'none'; return; }
    panel.style.display = '';
    if (entry.view && entry.view.server) { drawServer(entry); return; }
    const samples = entry.decoded;
    if (!samples) return;
    const cols = view.order.subarray(0, Math.min(view.k, view.order.length));
    const solving = `${view.token}|${view.k}`;
    if (!state.pair || state.pair.n !== samples.n) { state.pair = createPrincipalPair(samples.n); state.pair.n = samples.n; }
    if (state.solvedFor !== solving) {
      state.solvedFor = solving;
      state.pair.iterations = 0;
      state.pair.converged = false;
    }
    if (state.solvedFor === solving && state.pair.converged && state.coordinates) {
      // the same K and λ, solved: only the colours or the size may have changed
      drawPoints(state.coordinates, state.side, samples.names, samples.side ? samples.side.names : [], entry.view,
                 samples.images, colouring(entry));
      axes(axisShares);
      return;
    }
    const started = performance.now();
    const depth = Math.floor(MAP_RESTART_WORK / (2 * samples.n * cols.length * MAP_BLOCK));
    do { state.pair.step(samples.z, cols, depth); }
    while (!state.pair.converged && state.pair.iterations < MAP_MAX_ITER && performance.now() - started < MAP_FRAME_MS);
    panel.dataset.workMs = (performance.now() - started).toFixed(1);  // this frame's computing, for bench_paint
    const { coordinates, side } = coordinatesOf(samples, cols);
    let total = 0;
    for (const j of cols) total += samples.norms[j];
    state.coordinates = coordinates;
    state.side = side;
    const done = state.pair.converged || state.pair.iterations >= MAP_MAX_ITER;
    panel.dataset.state = state.pair.converged ? 'converged' : done ? 'unconverged' : 'refining';
    panel.dataset.k = String(view.k);
    panel.dataset.lam = String(view.lam);
    panel.dataset.iterations = String(state.pair.iterations);
    drawPoints(coordinates, side, samples.names, samples.side ? samples.side.names : [], entry.view, samples.images,
               colouring(entry));
    const shares = [0, 1].map((a) => total > 0 ? state.pair.values[a] / total : 0);
    axes(shares);
    $('.map-caption').textContent = `The ${samples.n.toLocaleString('en-US')} samples on the first two principal `
      + `components of ${view.what ? view.what.replace('{k}', cols.length.toLocaleString('en-US'))
        : `the top ${cols.length.toLocaleString('en-US')} features`} (standardised), redrawn here as ${view.what ? 'k moves' : 'K and λ move'}`
      + (state.pair.converged ? '.' : done ? `; not converged in ${MAP_MAX_ITER} iterations (residual `
         + `${state.pair.residual.toExponential(1)}): the axes are approximate.` : '; refining…');
    if (!done) schedule();
  }

  function drawServer(entry) {
    const server = entry.view.server;
    state.coordinates = Float64Array.from(server.coordinates);
    state.side = server.side ? Float64Array.from(server.side) : null;
    panel.dataset.state = 'server';
    panel.dataset.k = String(server.k);
    panel.dataset.lam = String(server.lam);
    drawPoints(state.coordinates, state.side, server.names, server.side_names || [], entry.view, null, colouring(entry));
    axes(server.explained);
    $('.map-caption').textContent = server.caption;
  }

  let axisShares = [0, 0];
  function axes(shares) {
    axisShares = shares;
    const g = canvas.getContext('2d'), { width, height } = state.size;
    g.fillStyle = '#444'; g.font = '11px sans-serif'; g.textAlign = 'center';
    g.fillText(`PC1 (${(100 * shares[0]).toFixed(1)}% of the variance)`, width / 2, height - 4);
    g.save(); g.translate(11, height / 2); g.rotate(-Math.PI / 2);
    g.fillText(`PC2 (${(100 * shares[1]).toFixed(1)}%)`, 0, 0); g.restore();
    g.textAlign = 'start';
    canvas.dataset.explained = shares.map((s) => s.toFixed(4)).join(',');
  }

  function drawPoints(coordinates, side, names, sideNames, colours, images, feature) {
    const width = Math.max(260, Math.min(460, (panel.parentElement.clientWidth || 460) - 8)), height = 320;
    const ratio = window.devicePixelRatio || 1;
    if (canvas.width !== width * ratio) { canvas.width = width * ratio; canvas.style.width = `${width}px`; }
    if (canvas.height !== height * ratio) { canvas.height = height * ratio; canvas.style.height = `${height}px`; }
    state.size = { width, height };
    const g = canvas.getContext('2d');
    g.setTransform(ratio, 0, 0, ratio, 0, 0);
    g.clearRect(0, 0, width, height);
    const left = 24, right = 8, top = 8, bottom = 22;
    let [x0, x1, y0, y1] = [Infinity, -Infinity, Infinity, -Infinity];
    const extend = (values) => {
      for (let i = 0; i < values.length; i += 2) {
        x0 = Math.min(x0, values[i]); x1 = Math.max(x1, values[i]);
        y0 = Math.min(y0, values[i + 1]); y1 = Math.max(y1, values[i + 1]);
      }
    };
    extend(coordinates);
    if (side) extend(side);
    const padX = (x1 - x0) * 0.05 || 1, padY = (y1 - y0) * 0.05 || 1;
    const sx = (x) => left + (width - left - right) * (x - x0 + padX) / (x1 - x0 + 2 * padX);
    const sy = (y) => top + (height - top - bottom) * (y1 + padY - y) / (y1 - y0 + 2 * padY);
    g.strokeStyle = '#ddd'; g.lineWidth = 1;
    g.strokeRect(left, top, width - left - right, height - top - bottom);
    const groups = colours && colours.groups, screen = [];
    const n = coordinates.length / 2;
    for (let i = 0; i < n; i++) screen.push([sx(coordinates[2 * i]), sy(coordinates[2 * i + 1]), 'main', i]);
    // by a feature: viridis from its lowest to its highest value, the highest drawn last
    const valued = feature && feature.values && feature.values.length === n ? feature : null;
    const span = valued ? (valued.high - valued.low) || 1 : 1;
    g.globalAlpha = valued ? 1 : 0.85;
    for (let r = 0; r < n; r++) {
      const i = valued ? valued.order[r] : r, [x, y] = screen[i];
      g.fillStyle = valued ? (valued.constant ? viridisAt(0.5) : viridisAt((valued.values[i] - valued.low) / span))
        : groups ? MAP_COLOURS[groups[i] % MAP_COLOURS.length] : MAP_COLOURS[0];
      g.beginPath(); g.arc(x, y, 3.5, 0, 2 * Math.PI); g.fill();
    }
    g.globalAlpha = 1;
    // the picked samples ringed (server maps draw a sample of rows: their picks are by position)
    g.strokeStyle = '#000'; g.lineWidth = 1.5;
    for (const i of state.picked) {
      if (i >= n) continue;
      g.beginPath(); g.arc(sx(coordinates[2 * i]), sy(coordinates[2 * i + 1]), 5.5, 0, 2 * Math.PI); g.stroke();
    }
    if (side) {
      g.strokeStyle = '#333'; g.lineWidth = 1.2;
      for (let i = 0; i < side.length / 2; i++) {
        const x = sx(side[2 * i]), y = sy(side[2 * i + 1]);
        g.beginPath(); g.moveTo(x, y - 4.5); g.lineTo(x + 4.5, y); g.lineTo(x, y + 4.5); g.lineTo(x - 4.5, y); g.closePath();
        g.stroke();
        screen.push([x, y, 'side', i]);
      }
    }
    state.screen = screen;
    state.hover = { names, sideNames, colours, images, feature: valued };
    legend(colours, Boolean(side), feature);
  }

  // the groups' colours, or the feature's colour bar with its range (and what kept it from the map)
  function legend(colours, withSide, feature) {
    const box = $('.map-legend'), bar = $('.map-colour-bar');
    const valued = feature && feature.values ? feature : null;
    bar.hidden = !valued;
    panel.dataset.colourBy = valued ? feature.name : '';
    let note = '';
    if (feature && feature.missing) note = `No feature named “${feature.name}” in this data set: type a name from the list.`;
    else if (feature && feature.pending) note = `Colouring by ${feature.name}: its values come with the server's map.`;
    else if (valued && valued.constant) note = `${feature.name} is constant here (${valued.low.toPrecision(4)}): one colour for every sample.`;
    $('.map-colour-note').textContent = note;
    if (valued) {
      drawColourScale(bar, valued);
      const html = `<span class="map-key-title">colour: ${escapeHtml(feature.name)}</span>`
        + (withSide ? '<span class="map-key"><b>◇</b>side data</span>' : '');
      if (box.innerHTML !== html) box.innerHTML = html;
      return;
    }
    const items = (colours && colours.group_names ? colours.group_names : []).map((name, g) =>
      `<span class="map-key"><i style="background:${MAP_COLOURS[g % MAP_COLOURS.length]}"></i>${escapeHtml(name)}</span>`);
    if (withSide) items.push('<span class="map-key"><b>◇</b>side data</span>');
    const title = colours && colours.group_title ? `<span class="map-key-title">${escapeHtml(colours.group_title)}:</span>` : '';
    const html = title + items.join('');
    if (box.innerHTML !== html) box.innerHTML = html;
  }

  // the colour bar of a feature's values: viridis from the lowest to the highest, both labelled
  function drawColourScale(bar, feature) {
    const width = 220, height = 30, ratio = window.devicePixelRatio || 1;
    if (bar.width !== width * ratio) { bar.width = width * ratio; bar.style.width = `${width}px`; }
    if (bar.height !== height * ratio) { bar.height = height * ratio; bar.style.height = `${height}px`; }
    const g = bar.getContext('2d');
    g.setTransform(ratio, 0, 0, ratio, 0, 0);
    g.clearRect(0, 0, width, height);
    for (let x = 0; x < width; x++) {
      g.fillStyle = feature.constant ? viridisAt(0.5) : viridisAt(x / (width - 1));
      g.fillRect(x, 0, 1, 12);
    }
    const label = (v) => (v !== 0 && (Math.abs(v) < 1e-3 || Math.abs(v) >= 1e5) ? v.toExponential(2) : Number(v.toPrecision(3)).toString());
    g.fillStyle = '#444'; g.font = '10px sans-serif';
    g.textAlign = 'start'; g.fillText(label(feature.low), 0, 25);
    g.textAlign = 'end'; g.fillText(label(feature.high), width, 25);
    g.textAlign = 'start';
    bar.dataset.range = `${feature.low},${feature.high}`;
  }

  function escapeHtml(text) {
    return String(text).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);
  }

  // hover: the nearest sample within 8 pixels is named, with its class (and image, for images)
  canvas.addEventListener('mousemove', (event) => {
    if (!state.screen) return;
    const box = canvas.getBoundingClientRect(), x = event.clientX - box.left, y = event.clientY - box.top;
    let best = null, bestDistance = 64;
    for (const point of state.screen) {
      const distance = (point[0] - x) ** 2 + (point[1] - y) ** 2;
      if (distance < bestDistance) { bestDistance = distance; best = point; }
    }
    if (!best) { tip.hidden = true; return; }
    const { names, sideNames, colours, images, feature } = state.hover, i = best[3];
    const group = best[2] === 'side' ? 'side data'
      : colours && colours.groups ? `${colours.group_title || 'group'}: ${colours.group_names[colours.groups[i]]}` : '';
    const value = feature && best[2] === 'main' ? ` · ${feature.name} = ${feature.values[i].toPrecision(4)}` : '';
    $('.map-tip-text').textContent = `${best[2] === 'side' ? sideNames[i] : names[i]}${value}${group ? ' · ' + group : ''}`;
    const picture = $('.map-tip-image');
    if (images && best[2] === 'main') {
      const { height: h, width: w, pixels } = images, scale = Math.max(1, Math.floor(96 / Math.max(h, w)));
      const image = new ImageData(w, h);
      for (let p = 0; p < w * h; p++) {
        const grey = pixels[i * w * h + p];
        image.data[4 * p] = image.data[4 * p + 1] = image.data[4 * p + 2] = grey; image.data[4 * p + 3] = 255;
      }
      const small = document.createElement('canvas');
      small.width = w; small.height = h;
      small.getContext('2d').putImageData(image, 0, 0);
      picture.width = w * scale; picture.height = h * scale;
      const g = picture.getContext('2d');
      g.imageSmoothingEnabled = false;
      g.drawImage(small, 0, 0, w * scale, h * scale);
      picture.hidden = false;
    } else {
      picture.hidden = true;
    }
    tip.hidden = false;
    tip.style.left = `${Math.min(best[0] + 10, canvas.clientWidth - 120)}px`;
    tip.style.top = `${best[1] + 10}px`;
    tip.dataset.sample = best[2] === 'side' ? sideNames[i] : names[i];
  });
  canvas.addEventListener('mouseleave', () => { tip.hidden = true; });

  // a box drawn with the mouse picks the main samples inside it; the server is told which, and
  // offers to make them the side data
  const at = (event) => { const box = canvas.getBoundingClientRect(); return [event.clientX - box.left, event.clientY - box.top]; };
  canvas.addEventListener('mousedown', (event) => {
    if (event.button !== 0) return;
    state.dragFrom = at(event);
    event.preventDefault();
  });
  window.addEventListener('mousemove', (event) => {
    if (!state.dragFrom) return;
    const [x0, y0] = state.dragFrom, [x1, y1] = at(event);
    Object.assign(band.style, { left: `${Math.min(x0, x1)}px`, top: `${Math.min(y0, y1)}px`,
                                width: `${Math.abs(x1 - x0)}px`, height: `${Math.abs(y1 - y0)}px` });
    band.hidden = Math.abs(x1 - x0) < 4 && Math.abs(y1 - y0) < 4;
  });
  window.addEventListener('mouseup', (event) => {
    if (!state.dragFrom) return;
    const [x0, y0] = state.dragFrom, [x1, y1] = at(event);
    state.dragFrom = null;
    band.hidden = true;
    if (Math.abs(x1 - x0) < 4 && Math.abs(y1 - y0) < 4) return;  // a click, not a box
    const inside = (state.screen || []).filter(([x, y, kind]) => kind === 'main'
      && x >= Math.min(x0, x1) && x <= Math.max(x0, x1) && y >= Math.min(y0, y1) && y <= Math.max(y0, y1));
    pick(inside.map((point) => point[3]));
  });
  $('.map-clear').addEventListener('click', () => pick([]));

  function pick(rows) {
    state.picked = new Set(rows);
    state.pickedKey = state.view ? state.view.key : null;
    showPicked();
    schedule();
    if (report) report('picked', { key: state.pickedKey, rows: [...state.picked].sort((a, b) => a - b) });
  }

  function showPicked() {
    const names = state.hover ? state.hover.names : [];
    const rows = [...state.picked].sort((a, b) => a - b);
    $('.map-picked').hidden = rows.length === 0;
    const shown = rows.slice(0, 12).map((i) => names[i]).join(', ');
    $('.map-picked-text').textContent = `${rows.length.toLocaleString('en-US')} picked: ${shown}`
      + (rows.length > 12 ? ` and ${(rows.length - 12).toLocaleString('en-US')} more` : '');
    panel.dataset.picked = String(rows.length);
  }

  // the colour control: a name typed (or picked from the list) colours the map at once; a name
  // that matches none is said, and the map keeps its colours; an empty box goes back to the groups
  function matchName(typed) {
    const text = typed.trim();
    if (!text) return '';
    if (indexOf(text) >= 0) return text;
    const lower = text.toLowerCase(), names = (state.view && state.view.names) || [];
    const found = names.filter((name) => String(name).toLowerCase() === lower);
    return found.length === 1 ? String(found[0]) : null;  // a case-insensitive match, when it is unique
  }
  colourInput.addEventListener('focus', () => {
    const list = $('datalist'), names = (state.view && state.view.names) || [];
    if (list.dataset.filled === String(names.length) && list.__names === names) return;
    list.replaceChildren(...names.map((name) => new Option(String(name))));  // built once, when first wanted
    list.__names = names;
    list.dataset.filled = String(names.length);
  });
  colourInput.addEventListener('input', () => {
    const name = colourInput.value.trim();
    if (name && indexOf(name) >= 0 && name !== state.colourBy) map.colourBy(name);
  });
  colourInput.addEventListener('change', () => {
    const name = matchName(colourInput.value);
    if (name === null) {
      $('.map-colour-note').textContent = `No feature named “${colourInput.value.trim()}” in this data set: type a name `
        + 'from the list (or clear the box for the classes).';
      return;
    }
    if ((name || null) !== state.colourBy) map.colourBy(name || null);
    else colourInput.value = name;
  });
  $('.map-colour-reset').addEventListener('click', () => map.colourBy(null));

  // new data for this data set (the samples, or the colours and the server's map)
  const listener = (event) => { if (state.view && event.detail === state.view.key) schedule(); };
  window.addEventListener('selection-samples', listener);

  const map = {
    // called in the scrubber's animation frame: drawn in the same frame (a frame of its own came
    // 17 ms later), refined in the next ones
    update(view) {
      if (state.view && view.key !== state.view.key && state.picked.size) { state.picked = new Set(); showPicked(); }
      state.view = view;
      $('.map-title').textContent = 'The samples through the selection';
      if (state.frame) { cancelAnimationFrame(state.frame); state.frame = 0; }
      work();
    },
    // colour the samples by the feature `name` (null: by the groups); the server is told unless it
    // asked for it (a link, Undo)
    colourBy(name, fromServer = false) {
      state.colourBy = name || null;
      colourInput.value = state.colourBy || '';
      $('.map-colour-reset').hidden = !state.colourBy;
      if (state.view) schedule();
      // told after the frame that paints it: the report starts Streamlit's run in the same task
      // (a click painted 45-57 ms after it when the report went first)
      const value = { feature: state.colourBy || '' };
      if (report && !fromServer) requestAnimationFrame(() => setTimeout(() => report('colour', value), 0));
    },
    // the drawn coordinates, for the tests: [[x, y], ...] of the main samples, and of the side ones
    coordinates() {
      const pairs = (values) => values ? Array.from({ length: values.length / 2 }, (_, i) => [values[2 * i], values[2 * i + 1]]) : null;
      return { main: pairs(state.coordinates), side: pairs(state.side), shares: axisShares };
    },
    // where each sample is drawn, in the canvas's pixels: [x, y, 'main' or 'side', index]
    points() { return state.screen ? state.screen.map((point) => point.slice()) : []; },
  };
  panel.__map = map;
  return map;
}
