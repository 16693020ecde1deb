// The map of the samples on its own (issue 77, item 4): the Kernel Q-alpha and Sparse LDA pages'
// selections, redrawn here from the standardised samples sent once (pages/ui/sample_map.py), as
// the Q-alpha page's scrubber redraws its map. Loaded after pages/ui/sample_map.js. With a K
// slider of its own (Kernel Q-alpha: the top K of its ranking, moved here and told to no one), or
// the server's k (Sparse LDA: the features of the discriminant at the k of the page's slider).
export default function ({ data, parentElement }) {
  const view = parentElement.__selectionMap || (parentElement.__selectionMap = buildSelectionMap(parentElement));
  view.update(data);
}

function buildSelectionMap(host) {
  const root = document.createElement('div');
  root.className = 'selection-map';
  root.innerHTML = `<label class="control map-k"><span class="k-label"></span>
      <input type="range" class="k-input" min="1" step="1"><output class="k-value"></output></label>
    <div class="map-panel" data-testid="sample-map"></div>`;
  host.appendChild(root);
  const kInput = root.querySelector('.k-input');
  const map = createSampleMap(root.querySelector('.map-panel'), null);  // nothing goes back to the server
  const state = { data: null, token: null, order: null, k: 1, sentK: null, frame: 0 };

  function draw() {
    state.frame = 0;
    const d = state.data, k = Math.min(state.k, state.order.length);
    root.querySelector('.k-value').textContent = k.toLocaleString('en-US');
    kInput.setAttribute('aria-valuetext', String(k));
    root.dataset.k = String(k);
    map.update({ key: d.samples_key, token: state.token, order: state.order, k, lam: 0, names: d.names, what: d.what });
  }
  const schedule = () => { if (!state.frame) state.frame = requestAnimationFrame(draw); };
  kInput.addEventListener('input', () => { state.k = Number(kInput.value); schedule(); });

  return {
    // the features the map is drawn on now (for the tests)
    columns() { return Array.from(state.order.subarray(0, Math.min(state.k, state.order.length))); },
    update(data) {
      if (data.token !== state.token) {  // another ranking or subset: decoded once
        state.token = data.token;
        state.order = decodeBase64(data.order, Int32Array);
      }
      state.data = data;
      const label = root.querySelector('.map-k');
      label.hidden = !data.k_label;
      root.querySelector('.k-label').textContent = data.k_label || '';
      kInput.setAttribute('aria-label', data.k_label || 'K');
      kInput.max = String(state.order.length);
      if (data.k !== state.sentK) {  // the server's k (a new result, the page's own slider)
        state.sentK = data.k;
        state.k = data.k;
        kInput.value = String(data.k);
      }
      schedule();
    },
  };
}
