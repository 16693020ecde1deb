// The selection at the speed of a hand (issue 50): K and λ moved in the browser, the views that
// follow them redrawn here from data sent once (the weights at every λ of the path), and the
// server told once the hand stops. See pages/ui/scrubber.py for the data it receives.
export default function ({ data, parentElement, setStateValue }) {
  // one view per mounted component: a later call with new data updates it in place. Mounted
  // anew (a page run the selection's fragment asked for), the component is given the view it
  // had by its key, its drawing and the hand's choices with it (the map's colouring, the picks)
  const kept = window.__scrubbers || (window.__scrubbers = new Map());
  if (!parentElement.__scrubber) {
    const before = kept.get(data.mount_key);
    if (before) parentElement.appendChild(before.root);
    parentElement.__scrubber = before || build(parentElement);
    kept.set(data.mount_key, parentElement.__scrubber);
  }
  const view = parentElement.__scrubber;
  view.report = setStateValue;
  view.update(data);
}

const REPORT_AFTER_MS = 300;  // the hand has stopped: tell the server once
// a blue-white-red for weights of both signs (viridis for the others: pages/ui/sample_map.js)
const DIVERGING = [[59, 76, 192], [141, 176, 254], [255, 255, 255], [244, 154, 123], [180, 4, 38]];
const HOLD_LOCAL_MS = 1500;   // data arriving this soon after a move is older than the hand's value
const REPORT_LANDS_MS = 10000;  // a report not answered by then is taken as lost

function build(host) {
  const root = document.createElement('div');
  root.className = 'scrubber';
  root.innerHTML = `
    <div class="row">
      <label class="control"><span class="k-label"></span>
        <input type="range" class="k-input" min="1" step="1"><output class="k-value"></output></label>
      <label class="control lam-control"><span class="lam-label"></span>
        <input type="range" class="lam-input" min="0" step="1"><output class="lam-value"></output></label>
      <div class="count" data-testid="scrubber-count"><span class="count-label">Selected (K)</span>
        <span class="count-value"></span><span class="count-of"></span></div>
    </div>
    <div class="panels">
      <figure class="weights-panel"><canvas class="weights"></canvas><figcaption class="weights-caption"></figcaption></figure>
      <figure class="image-panel">
        <div class="image-controls">
          <label>Show <select class="image-mode" aria-label="What the image shows">
            <option value="weights">the weights (colour)</option><option value="top">the top K (red)</option></select></label>
          <label class="opacity-control">Opacity <input type="range" class="opacity" min="0" max="100" step="5" value="70"
            aria-label="Opacity of the weights over the image"></label>
          <label class="outline-control"><input type="checkbox" class="outline" checked> top-K outline</label>
          <label>On <select class="image-choice" aria-label="The image under the weights">
            <option value="mean">the mean image</option></select></label>
        </div>
        <div class="image-row"><canvas class="image"></canvas><canvas class="colour-bar"></canvas></div>
        <figcaption class="image-caption"></figcaption></figure>
      <div class="top-panel"><div class="top-title"></div><ol class="top"></ol></div>
    </div>
    <div class="map-panel" data-testid="sample-map"></div>`;
  host.appendChild(root);
  const $ = (selector) => root.querySelector(selector);
  const kInput = $('.k-input'), lamInput = $('.lam-input');
  // pages/ui/sample_map.js; the samples picked on it and the feature it is coloured by go to the
  // server at once (a box, a name: one gesture each)
  const sampleMap = createSampleMap($('.map-panel'), (kind, value) => {
    if (kind === 'colour') state.colourPending = { feature: value.feature, at: performance.now() };
    view.report(kind, value);
  });
  // moved: when the hand last moved a slider (never, at first: the server's K and λ are drawn at once)
  const state = { data: null, token: null, weights: null, orders: [], k: 1, lamIndex: 0, moved: -Infinity,
                  timer: 0, frame: 0, base: null };

  // the features by weight at λ index i, largest first (computed once per λ)
  const orderAt = (i) => {
    if (!state.orders[i]) {
      const n = state.data.n, row = state.weights.subarray(i * n, (i + 1) * n);
      const order = Array.from({ length: n }, (_, j) => j);
      order.sort((a, b) => row[b] - row[a] || a - b);  // ties by index, as numpy's stable argsort
      state.orders[i] = Int32Array.from(order);
    }
    return state.orders[i];
  };

  const schedule = () => { if (!state.frame) state.frame = requestAnimationFrame(draw); };
  const moved = (event) => {
    state.lamIndex = Number(lamInput.value);
    if (event.target === kInput) state.follow = false;  // the hand chose K: it stays through λ moves
    // until the hand sets K, K follows the default rule at each λ (the sparsity gap's count, or
    // the fewest features holding half of the squared weight), as the server's K does
    if (state.follow) kInput.value = String(state.data.defaults[state.lamIndex]);
    state.k = Number(kInput.value);
    // what a screen reader says follows the key at once (the drawing follows at the next frame)
    lamInput.setAttribute('aria-valuetext', String(state.data.lams[state.lamIndex]));
    kInput.setAttribute('aria-valuetext', String(state.k));
    state.moved = performance.now();
    schedule();
    clearTimeout(state.timer);
    state.timer = setTimeout(() => {
      state.timer = 0;
      // λ only where the hand could choose it (the computed path): a single λ is the one its run
      // was solved at (0 without side information), which is no choice of the user's
      const report = { k: state.k, k_set: !state.follow };
      if (state.data.lams.length > 1) report.lam = state.data.lams[state.lamIndex];
      view.report('view', report);
    }, REPORT_AFTER_MS);
  };
  kInput.addEventListener('input', moved);
  lamInput.addEventListener('input', moved);
  // the samples arriving (pages/ui/sample_map.py, later in the page): their images join the image's choices
  window.addEventListener('selection-samples', (event) => {
    if (state.data && event.detail === state.data.samples_key) schedule();
  });
  // a feature of the list, or a pixel of the image, clicked: the map of the samples coloured by it
  $('.top').addEventListener('click', (event) => {
    const item = event.target.closest('li');
    if (item && state.data.samples_key) sampleMap.colourBy(item.dataset.feature);
  });
  $('.image').addEventListener('click', (event) => {
    const d = state.data, canvas = $('.image');
    if (!d.image || !d.samples_key) return;
    const box = canvas.getBoundingClientRect(), { height: h, width: w } = d.image;
    const x = Math.floor((event.clientX - box.left) / box.width * w), y = Math.floor((event.clientY - box.top) / box.height * h);
    if (x >= 0 && x < w && y >= 0 && y < h) sampleMap.colourBy(String(d.names[y * w + x]));
  });
  // the image's own controls redraw it here, and tell the server nothing
  for (const control of ['.image-mode', '.opacity', '.outline', '.image-choice']) {
    $(control).addEventListener('input', () => schedule());
  }

  function draw() {
    state.frame = 0;
    const d = state.data, n = d.n, i = state.lamIndex, k = state.k;
    const row = state.weights.subarray(i * n, (i + 1) * n), order = orderAt(i);
    $('.k-value').textContent = k.toLocaleString('en-US');
    $('.lam-value').textContent = `${d.lams[i]}`;
    lamInput.setAttribute('aria-valuetext', String(d.lams[i]));  // as the server's λ slider says it
    kInput.setAttribute('aria-valuetext', String(k));
    $('.count-value').textContent = k.toLocaleString('en-US');
    $('.count-of').textContent = ` of ${n.toLocaleString('en-US')}`;
    root.dataset.k = String(k);
    root.dataset.lam = String(d.lams[i]);
    root.dataset.token = `${state.token}@${i}`;  // which weights are drawn: a new result or λ, a new token
    drawWeights(row, order, k, d.gaps[i], d.defaults[i]);
    const marked = drawImage(order, k, row);
    root.dataset.markedPixels = String(marked);
    // the samples on the selection's principal axes, when the page sent them (pages/ui/sample_map.py)
    $('.map-panel').hidden = !d.samples_key;
    if (d.samples_key) {
      sampleMap.update({ key: d.samples_key, token: `${state.token}@${i}`, order, k, lam: d.lams[i], names: d.names });
    }
    const list = $('.top');
    const shown = Math.min(k, d.top_listed);
    $('.top-title').textContent = `Top ${shown} of the ${k.toLocaleString('en-US')} selected`;
    list.replaceChildren(...Array.from({ length: shown }, (_, r) => {
      const item = document.createElement('li');
      item.textContent = `${d.names[order[r]]}  ${row[order[r]].toPrecision(3)}`;
      item.dataset.feature = d.names[order[r]];
      if (d.samples_key) item.title = 'Colour the map of the samples by this feature';
      return item;
    }));
  }

  // the sorted weights, the top-K band and the sparsity gap's cut, on a canvas sized to its box
  function drawWeights(row, order, k, gap, fallback) {
    // a fixed width (at most the component's): the image and the list beside it, or below it in a
    // narrow window; a width read from its own box grew with the canvas and ran under the image
    const canvas = $('.weights');
    const width = Math.max(240, Math.min(480, (root.clientWidth || 480) - 8)), height = 200;
    const ratio = window.devicePixelRatio || 1;
    if (canvas.width !== width * ratio) { canvas.width = width * ratio; canvas.style.width = `${width}px`; }
    if (canvas.height !== height * ratio) { canvas.height = height * ratio; canvas.style.height = `${height}px`; }
    const g = canvas.getContext('2d');
    g.setTransform(ratio, 0, 0, ratio, 0, 0);
    g.clearRect(0, 0, width, height);
    const n = order.length, left = 46, right = 8, top = 10, bottom = 26;
    const logX = n > 200;
    const xOf = (rank) => left + (width - left - right) * (logX ? Math.log(rank) / Math.log(n + 0.5)
                                                                  : (rank - 0.5) / n);
    const high = row[order[0]], low = Math.min(0, row[order[n - 1]]);
    const yOf = (value) => top + (height - top - bottom) * (high - value) / ((high - low) || 1);
    g.fillStyle = 'rgba(0,191,255,0.18)';
    g.fillRect(xOf(0.5 + (logX ? 0.5 : 0)), top, xOf(k + 0.5) - xOf(0.5 + (logX ? 0.5 : 0)), height - top - bottom);
    g.strokeStyle = '#1f77b4'; g.lineWidth = 1.5; g.beginPath();
    const step = Math.max(1, Math.floor(n / 4000));
    for (let r = 1; r <= n; r += (r < 500 ? 1 : step)) {
      const x = xOf(r), y = yOf(row[order[r - 1]]);
      if (r === 1) g.moveTo(x, y); else g.lineTo(x, y);
    }
    g.stroke();
    const cut = gap || fallback;
    if (cut) {
      g.setLineDash([4, 3]); g.strokeStyle = 'grey'; g.beginPath();
      g.moveTo(xOf(cut + 0.5), top); g.lineTo(xOf(cut + 0.5), height - bottom); g.stroke(); g.setLineDash([]);
    }
    g.fillStyle = '#444'; g.font = '11px sans-serif';
    g.fillText(`top ${k.toLocaleString('en-US')}`, Math.min(xOf(1) + 3, width - 60), top + 11);
    g.fillText(high.toPrecision(2), 2, top + 8);
    g.fillText(low.toPrecision(2), 2, height - bottom);
    // numbers on the rank axis: the powers of ten on the log axis, about five round steps on the linear one
    const ticks = [];
    if (logX) {
      for (let t = 1; t <= n; t *= 10) ticks.push(t);
    } else {
      const raw = n / 5, unit = Math.pow(10, Math.floor(Math.log10(raw)));
      const stepSize = [1, 2, 5, 10].map((m) => m * unit).find((s) => s >= raw) || unit;
      for (let t = stepSize; t <= n; t += stepSize) ticks.push(t);
      ticks.unshift(1);
    }
    g.textAlign = 'center';
    g.strokeStyle = '#888'; g.lineWidth = 1;
    for (const t of ticks) {
      const x = xOf(t);
      g.beginPath(); g.moveTo(x, height - bottom); g.lineTo(x, height - bottom + 3); g.stroke();
      g.fillText(t.toLocaleString('en-US'), Math.min(Math.max(x, left), width - right - 8), height - bottom + 13);
    }
    g.textAlign = 'start';
    canvas.dataset.rankTicks = ticks.join(',');
    // the axis's name left of its numbers, under the weights' scale
    g.fillText('rank', 2, height - bottom + 13);
    if (logX) g.fillText('(log)', 2, height - 2);
    $('.weights-caption').textContent = gap ? `Sorted weights; dashed: the sparsity gap after ${gap}`
      : `Sorted weights; dashed: the default K (${fallback}), no clear gap`;
  }

  // the weights as a colour map over the mean image (or a chosen sample's image), the top K
  // outlined; or the top K pixels in red (pixel data only); returns the pixels marked
  function drawImage(order, k, row) {
    const d = state.data, canvas = $('.image');
    if (!d.image) { $('.image-panel').style.display = 'none'; return 0; }
    $('.image-panel').style.display = '';
    const { height: h, width: w } = d.image;
    if (!state.base) state.base = decodeBase64(d.image.mean, Uint8Array);
    const mode = $('.image-mode').value, opacity = Number($('.opacity').value) / 100;
    const outline = $('.outline').checked && mode === 'weights';
    $('.opacity-control').style.display = $('.outline-control').style.display = mode === 'weights' ? '' : 'none';
    // the image under the weights: the mean, or one of the samples the map holds (pages/ui/sample_map.py)
    const samples = d.samples_key ? mapSamples(d.samples_key) : null;
    const images = samples && samples.decoded && samples.decoded.images;
    const choice = $('.image-choice');
    if (images && choice.options.length !== samples.decoded.n + 1) {
      choice.replaceChildren(new Option('the mean image', 'mean'),
        ...samples.decoded.names.map((name, i) => new Option(name, String(i))));
    }
    const chosen = images && choice.value !== 'mean' ? Number(choice.value) : -1;
    const grey = chosen >= 0 ? images.pixels.subarray(chosen * w * h, (chosen + 1) * w * h) : state.base;
    const scale = Math.max(1, Math.floor(Math.min(260 / w, 260 / h)));
    if (canvas.width !== w * scale) { canvas.width = w * scale; canvas.height = h * scale; }
    const marked = Math.min(k, order.length);
    const picture = new ImageData(w, h), pixels = picture.data;
    const colours = weightColours(row);
    for (let p = 0; p < w * h; p++) {
      const g0 = grey[p];
      let [r, g, b] = [g0, g0, g0];
      if (mode === 'weights') {
        const c = colours.of(row[p]);
        r = (1 - opacity) * g0 + opacity * c[0]; g = (1 - opacity) * g0 + opacity * c[1]; b = (1 - opacity) * g0 + opacity * c[2];
      }
      pixels[4 * p] = r; pixels[4 * p + 1] = g; pixels[4 * p + 2] = b; pixels[4 * p + 3] = 255;
    }
    const selected = new Uint8Array(w * h);
    for (let r = 0; r < marked; r++) selected[order[r]] = 1;
    if (mode === 'top') {
      for (let p = 0; p < w * h; p++) if (selected[p]) { pixels[4 * p] = 220; pixels[4 * p + 1] = 30; pixels[4 * p + 2] = 30; }
    }
    const small = state.small || (state.small = document.createElement('canvas'));
    small.width = w; small.height = h;
    small.getContext('2d').putImageData(picture, 0, 0);
    const g = canvas.getContext('2d');
    g.imageSmoothingEnabled = false;
    g.drawImage(small, 0, 0, w * scale, h * scale);
    if (outline) {
      // the border of the top-K region: an edge of a selected pixel whose neighbour is not selected
      g.strokeStyle = '#e8112d'; g.lineWidth = Math.max(1, scale / 3); g.beginPath();
      for (let y = 0; y < h; y++) {
        for (let x = 0; x < w; x++) {
          if (!selected[y * w + x]) continue;
          const X = x * scale, Y = y * scale;
          if (x === 0 || !selected[y * w + x - 1]) { g.moveTo(X, Y); g.lineTo(X, Y + scale); }
          if (x === w - 1 || !selected[y * w + x + 1]) { g.moveTo(X + scale, Y); g.lineTo(X + scale, Y + scale); }
          if (y === 0 || !selected[(y - 1) * w + x]) { g.moveTo(X, Y); g.lineTo(X + scale, Y); }
          if (y === h - 1 || !selected[(y + 1) * w + x]) { g.moveTo(X, Y + scale); g.lineTo(X + scale, Y + scale); }
        }
      }
      g.stroke();
    }
    drawColourBar(colours, h * scale, mode === 'weights');
    const under = chosen >= 0 ? samples.decoded.names[chosen] : 'the mean image';
    $('.image-caption').textContent = (mode === 'weights'
      ? `The weights on ${under} (opacity ${Math.round(opacity * 100)}%)` + (outline ? `, the top ${marked.toLocaleString('en-US')} outlined` : '')
      : `The top ${marked.toLocaleString('en-US')} pixels (red) on ${under}`)
      + (d.samples_key ? '; click a pixel to colour the map of the samples by its value' : '');
    root.dataset.imageMode = mode;
    return marked;
  }

  // the weights' colours: viridis from the smallest to the largest weight, or, with negative
  // weights, blue through white to red with white at zero (a sign is then what the eye reads)
  function weightColours(row) {
    let low = Infinity, high = -Infinity;
    for (let p = 0; p < row.length; p++) { if (row[p] < low) low = row[p]; if (row[p] > high) high = row[p]; }
    const diverging = low < 0 && high > 0;
    const span = diverging ? Math.max(-low, high) : (high - low) || 1;
    const stops = diverging ? DIVERGING : VIRIDIS;
    const of = (value) => {
      const t = diverging ? 0.5 + 0.5 * value / span : (value - low) / span;
      const x = Math.min(1, Math.max(0, t)) * (stops.length - 1), i = Math.min(stops.length - 2, Math.floor(x)), f = x - i;
      return [0, 1, 2].map((c) => stops[i][c] + f * (stops[i + 1][c] - stops[i][c]));
    };
    return { of, low: diverging ? -span : low, high: diverging ? span : high };
  }

  function drawColourBar(colours, height, shown) {
    const bar = $('.colour-bar');
    bar.style.display = shown ? '' : 'none';
    if (!shown) return;
    const width = 64;
    if (bar.width !== width || bar.height !== height) { bar.width = width; bar.height = height; }
    const g = bar.getContext('2d');
    g.clearRect(0, 0, width, height);
    for (let y = 0; y < height - 12; y++) {
      const value = colours.high - (colours.high - colours.low) * y / (height - 13);
      const [r, gr, b] = colours.of(value);
      g.fillStyle = `rgb(${r | 0},${gr | 0},${b | 0})`;
      g.fillRect(4, y + 6, 12, 1);
    }
    g.fillStyle = '#444'; g.font = '10px sans-serif';
    const label = (v) => (v !== 0 && Math.abs(v) < 1e-3 ? v.toExponential(1) : v.toPrecision(2));
    g.fillText(label(colours.high), 20, 12);
    g.fillText(label(colours.low), 20, height - 4);
    bar.dataset.range = `${colours.low},${colours.high}`;
  }

  const view = {
    root,
    report: null,
    update(data) {
      if (data.token !== state.token) {  // new weights (another result or path): decoded once
        state.token = data.token;
        state.weights = decodeBase64(data.weights, Float32Array);
        state.orders = [];
        state.base = null;
      }
      state.data = data;
      $('.k-label').textContent = data.k_label;
      $('.lam-label').textContent = data.lam_label;
      kInput.setAttribute('aria-label', data.k_label);
      lamInput.setAttribute('aria-label', data.lam_label);
      kInput.max = String(data.n);
      lamInput.max = String(data.lams.length - 1);
      root.querySelector('.lam-control').style.display = data.lams.length > 1 ? '' : 'none';
      // the server's K and λ where the server changed them (new weights, Default K, a link), unless
      // the hand moved them since (its report is on the way); after the hand's own report the
      // server gives back the values it gave before, which leave the hand's in place
      const changed = data.k !== state.sentK || data.lam_index !== state.sentLam || data.token !== state.sentToken;
      state.sentK = data.k; state.sentLam = data.lam_index; state.sentToken = data.token;
      // the feature the map is coloured by, where the server changed it (a link, Undo, a new data
      // set); not a run's from before the hand's last report landed (the hand chose again since)
      const pending = state.colourPending;
      if (pending && (data.colour_by === pending.feature || performance.now() - pending.at > REPORT_LANDS_MS)) {
        state.colourPending = null;
      }
      if (data.colour_by !== state.sentColour) {
        state.sentColour = data.colour_by;
        if (!state.colourPending) sampleMap.colourBy(data.colour_by || null, true);
      }
      if (changed && performance.now() - state.moved > HOLD_LOCAL_MS && !state.timer) {
        kInput.value = String(data.k);
        lamInput.value = String(data.lam_index);
        state.k = data.k;
        state.lamIndex = data.lam_index;
        state.follow = !data.k_set;
      }
      schedule();
    },
  };
  return view;
}
