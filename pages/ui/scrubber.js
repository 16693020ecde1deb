// The selection at the speed of a hand (issue 50): K and λ moved in the browser, the views that
// follow them redrawn here from data sent once (the weights at every λ of the path), and the
// server told once the hand stops. See pages/ui/scrubber.py for the data it receives.
export default function ({ data, parentElement, setStateValue }) {
  // one view per mounted component: a later call with new data updates it in place
  const view = parentElement.__scrubber || (parentElement.__scrubber = build(parentElement));
  view.report = setStateValue;
  view.update(data);
}

const REPORT_AFTER_MS = 300;  // the hand has stopped: tell the server once
const HOLD_LOCAL_MS = 1500;   // data arriving this soon after a move is older than the hand's value

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
      <figure class="image-panel"><canvas class="image"></canvas><figcaption class="image-caption"></figcaption></figure>
      <div class="top-panel"><div class="top-title"></div><ol class="top"></ol></div>
    </div>
    <div class="map-panel" data-testid="sample-map"></div>`;
  host.appendChild(root);
  const $ = (selector) => root.querySelector(selector);
  const kInput = $('.k-input'), lamInput = $('.lam-input');
  const sampleMap = createSampleMap($('.map-panel'));  // pages/ui/sample_map.js
  // moved: when the hand last moved a slider (never, at first: the server's K and λ are drawn at once)
  const state = { data: null, token: null, weights: null, orders: [], k: 1, lamIndex: 0, moved: -Infinity,
                  timer: 0, frame: 0, base: null };

  const decode = (text, Type) => {
    const bytes = Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
    return new Type(bytes.buffer);
  };
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
      view.report('view', { k: state.k, lam: state.data.lams[state.lamIndex], k_set: !state.follow });
    }, REPORT_AFTER_MS);
  };
  kInput.addEventListener('input', moved);
  lamInput.addEventListener('input', moved);

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
    const marked = drawImage(order, k);
    root.dataset.markedPixels = String(marked);
    // the samples on the selection's principal axes, when the page sent them (pages/ui/sample_map.py)
    $('.map-panel').hidden = !d.samples_key;
    if (d.samples_key) sampleMap.update({ key: d.samples_key, token: `${state.token}@${i}`, order, k, lam: d.lams[i] });
    const list = $('.top');
    const shown = Math.min(k, d.top_listed);
    $('.top-title').textContent = `Top ${shown} of the ${k.toLocaleString('en-US')} selected`;
    list.replaceChildren(...Array.from({ length: shown }, (_, r) => {
      const item = document.createElement('li');
      item.textContent = `${d.names[order[r]]}  ${row[order[r]].toPrecision(3)}`;
      item.dataset.feature = d.names[order[r]];
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

  // the mean image with the top K pixels marked (pixel data only); returns the pixels marked
  function drawImage(order, k) {
    const d = state.data, canvas = $('.image');
    if (!d.image) { $('.image-panel').style.display = 'none'; return 0; }
    $('.image-panel').style.display = '';
    const { height: h, width: w } = d.image;
    if (!state.base) state.base = decode(d.image.mean, Uint8Array);
    const scale = Math.max(1, Math.floor(Math.min(260 / w, 260 / h)));
    if (canvas.width !== w * scale) { canvas.width = w * scale; canvas.height = h * scale; }
    const picture = new ImageData(w, h), pixels = picture.data;
    for (let p = 0; p < w * h; p++) {
      const grey = state.base[p];
      pixels[4 * p] = pixels[4 * p + 1] = pixels[4 * p + 2] = grey; pixels[4 * p + 3] = 255;
    }
    const marked = Math.min(k, order.length);
    for (let r = 0; r < marked; r++) {
      const p = order[r];
      pixels[4 * p] = 220; pixels[4 * p + 1] = 30; pixels[4 * p + 2] = 30;
    }
    const small = state.small || (state.small = document.createElement('canvas'));
    small.width = w; small.height = h;
    small.getContext('2d').putImageData(picture, 0, 0);
    const g = canvas.getContext('2d');
    g.imageSmoothingEnabled = false;
    g.drawImage(small, 0, 0, w * scale, h * scale);
    $('.image-caption').textContent = `The top ${marked.toLocaleString('en-US')} pixels (red) on the mean image`;
    return marked;
  }

  const view = {
    report: null,
    update(data) {
      if (data.token !== state.token) {  // new weights (another result or path): decoded once
        state.token = data.token;
        state.weights = decode(data.weights, Float32Array);
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
