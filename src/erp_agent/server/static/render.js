// Structured response blocks → DOM. The same shapes everywhere: text, table, chart, cards,
// proposal, citations, file. Values are shown as the server sent them.
import { api } from './api.js';
import { renderMarkdown, safeUrl } from './markdown.js';
import { proposalView } from './proposal.js';

export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'class') node.className = value;
    else if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? '' : value);
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function link(href, text) {
  const url = href && safeUrl(href);
  return url ? el('a', { href: url, target: '_blank', rel: 'noopener noreferrer' }, text) : text;
}

// ``decimals``: an amount's places at its currency's precision (the server says which cells).
function cell(value, decimals = null) {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number' && decimals !== null && decimals !== undefined) {
    return value.toLocaleString(undefined, { minimumFractionDigits: decimals, maximumFractionDigits: decimals });
  }
  if (typeof value === 'number') return value.toLocaleString(undefined, { maximumFractionDigits: 2 });
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

// A report's own figures under its table (every ageing bucket, the weighted average age).
function figuresList(figures) {
  if (!figures || !figures.length) return null;
  return el('dl', { class: 'figures' },
    figures.flatMap((f) => [el('dt', {}, f.label), el('dd', { class: 'num' }, cell(f.value, f.decimals))]));
}

// A figure opens the documents it was computed from (results.drill, as the signed-in user):
// a row's reference is its stored row's; the previous period's column opens that period's.
function figureRef(rowRef, key) {
  if (!rowRef) return null;
  if (key === 'previous') return rowRef.replace(/\.r(\d+)$/, '.p$1');
  if (key === 'change' || key === 'change_pct') return null;
  return rowRef;
}

function drillButton(content, ref, host) {
  return el('button', {
    type: 'button',
    class: 'drill',
    'data-ref': ref,
    title: 'Open the documents behind this figure',
    onclick: () => openDrill(ref, host),
  }, content);
}

// The documents behind a figure, right after the block it belongs to (one panel per block).
export async function openDrill(ref, host) {
  const next = host.nextElementSibling;
  let panel = next && next.classList.contains('drill-block') ? next : null;
  if (!panel) {
    panel = el('section', { class: 'block drill-block', 'aria-live': 'polite' });
    host.after(panel);
  }
  panel.replaceChildren(el('p', { class: 'progress' }, 'Opening the documents…'));
  try {
    panel.replaceChildren(...drillView(await api('GET', `api/drill/${encodeURIComponent(ref)}`)));
  } catch (error) {
    panel.replaceChildren(el('p', { class: 'error' }, error.message));
  }
}

function drillView(opened) {
  const figure = opened.figure || {};
  const listed = opened.listed || {};
  const unit = figure.currency ? ` ${figure.currency}` : '';
  const records = Number(listed.records ?? 0).toLocaleString();
  const same = listed.matches
    ? ' — the figure, exactly'
    : ` — the figure was ${cell(figure.value)}${unit} over ${figure.records ?? '?'} records`;
  const notes = opened.notes || [];
  return [
    el('h3', {}, opened.title || 'Documents'),
    el('p', { class: 'drill-summary' }, `${records} records · ${cell(listed.value)}${unit}${same}`),
    notes.length ? el('ul', { class: 'drill-notes' }, notes.map((n) => el('li', {}, n))) : null,
    ...(opened.blocks || []).map((b) => tableBlock({ ...b, title: '' })), // titled above
  ].filter(Boolean);
}

function tableBlock(block) {
  const box = el('section', { class: 'block table-block' });
  if (block.title) box.append(el('h3', {}, block.title));
  const wrap = el('div', { class: 'table-wrap' });
  const pager = el('div', { class: 'pager' });
  box.append(wrap, pager);
  const limit = (block.page && block.page.limit) || 20;
  // The first columns are the shared rule's; "More columns" shows every other one too.
  const more = (block.more_columns || []).map((m) => m.key);
  let columns = block.columns || [];
  let start = 0;

  function moreButton() {
    if (!more.length) return null;
    const expanded = columns.length > (block.columns || []).length;
    return el('button', {
      type: 'button',
      class: 'more-columns',
      'aria-expanded': expanded ? 'true' : 'false',
      onclick: () => {
        columns = expanded ? block.columns : [...block.columns, ...more];
        load(start);
      },
    }, expanded ? 'Fewer columns' : `More columns (${more.length})`);
  }

  function draw(page) {
    // Labels from the catalog (the keys only when a result declares none).
    const labels = page.labels || page.columns;
    // Each row links to its record from the cell holding its id.
    const linkAt = Math.max(0, (page.columns || []).indexOf(block.link_column));
    const head = el('tr', {}, labels.map((c) => el('th', { scope: 'col' }, c)));
    const body = page.rows.map((row, i) =>
      el('tr', {}, row.map((value, j) => {
        const href = j === linkAt && page.links ? page.links[i] : null;
        // A financial statement's accounts are indented like the ERP's tree.
        const depth = j === 0 && page.indent ? page.indent[i] || 0 : 0;
        // A value without spaces (a date, a document number) is never broken across lines.
        const word = typeof value === 'string' && !/\s/.test(value) ? 'nowrap' : '';
        const shown = link(href, cell(value, page.decimals ? page.decimals[j] : null));
        const ref = typeof value === 'number' && page.drills
          ? figureRef(page.drills[i], (page.columns || [])[j]) : null;
        return el('td', {
          class: typeof value === 'number' ? 'num' : (depth ? `indent indent-${Math.min(depth, 6)}` : word),
        }, ref ? drillButton(shown, ref, box) : shown);
      })),
    );
    wrap.replaceChildren(el('table', {}, el('thead', {}, head), el('tbody', {}, body)));
    start = page.page ? page.page.start : 0;
    const total = page.total_rows ?? page.rows.length;
    pager.replaceChildren();
    const toggle = moreButton();
    if (toggle) pager.append(toggle);
    if (total > page.rows.length || start > 0) {
      const prev = el('button', { type: 'button', disabled: start === 0, onclick: () => load(Math.max(0, start - limit)) }, '‹ Prev');
      const next = el('button', { type: 'button', disabled: start + limit >= total, onclick: () => load(start + limit) }, 'Next ›');
      pager.append(prev, el('span', {}, `${start + 1}–${Math.min(start + limit, total)} of ${total}`), next);
    }
    if (block.result_id) {
      const base = `api/results/${encodeURIComponent(block.result_id)}/export?format=`;
      pager.append(el('span', { class: 'export' }, 'Export ',
        ...['csv', 'xlsx', 'pdf'].flatMap((f, i) => [i ? ' · ' : '', el('a', { href: base + f, download: true }, f.toUpperCase())])));
    }
  }

  async function load(from) {
    const params = new URLSearchParams({ start: from, limit, columns: columns.join(',') });
    try {
      draw(await api('GET', `api/results/${encodeURIComponent(block.result_id)}?${params}`));
    } catch (error) {
      pager.append(el('span', { class: 'error' }, error.message));
    }
  }

  draw(block);
  const totals = (block.drill_totals || []).filter((t) => t.ref);
  if (totals.length) {
    box.append(el('p', { class: 'drill-totals' }, 'Total: ', ...totals.flatMap((t, i) => [
      i ? ' · ' : '',
      drillButton(`${cell(t.value, t.currency ? 2 : null)}${t.currency ? ` ${t.currency}` : ''}`, t.ref, box),
    ])));
  }
  const figures = figuresList(block.figures);
  if (figures) box.append(figures);
  const how = definitionBlock(block.definition);
  if (how) box.append(how);
  return box;
}

// "How this was computed": the figure's definition, folded under its table or chart.
function definitionBlock(definition) {
  if (!definition || !definition.text) return null;
  const facts = [];
  if (definition.period) facts.push(`Period: ${definition.period}`);
  if (definition.record_count !== null && definition.record_count !== undefined) {
    facts.push(`Records: ${Number(definition.record_count).toLocaleString()}`);
  }
  if (definition.source) facts.push(`Source: ${definition.source}`);
  return el('details', { class: 'definition' },
    el('summary', {}, 'How this was computed'),
    el('p', {}, definition.text),
    (definition.filters || []).length ? el('ul', {}, definition.filters.map((f) => el('li', {}, f))) : null,
    facts.length ? el('p', { class: 'facts' }, facts.join(' · ')) : null,
  );
}

function chartBlock(block) {
  const box = el('section', { class: 'block chart-block' });
  // One chart per currency: amounts in different currencies never share an axis.
  const charts = block.charts && block.charts.length ? block.charts : [{ title: block.title, spec: block.spec }];
  for (const chart of charts) {
    if (chart.title) box.append(el('h3', {}, chart.title));
    const canvas = el('canvas', { role: 'img', 'aria-label': chart.title || 'chart' });
    box.append(el('div', { class: 'chart-wrap' }, canvas));
    // Each bar opens the documents it was computed from.
    const drills = chart.drills && chart.drills.some(Boolean) ? chart.drills : null;
    if (window.Chart && chart.spec) {
      // Chart.js needs the canvas in the document to size it.
      requestAnimationFrame(() => {
        const spec = structuredClone(chart.spec);
        spec.options = { responsive: true, maintainAspectRatio: false, animation: false, ...(spec.options || {}) };
        if (drills) {
          spec.options.onClick = (event, elements) => {
            const ref = elements && elements.length ? drills[elements[0].index] : null;
            if (ref) openDrill(ref, box);
          };
          spec.options.onHover = (event, elements) => {
            canvas.style.cursor = elements && elements.length && drills[elements[0].index] ? 'pointer' : 'default';
          };
        }
        new window.Chart(canvas, spec);
      });
    }
    if (drills && chart.spec) {
      // The same, without a pointer: one button per bar.
      const labels = chart.spec.data.labels || [];
      const values = ((chart.spec.data.datasets || [])[0] || {}).data || [];
      box.append(el('details', { class: 'chart-drills' },
        el('summary', {}, 'Documents behind each bar'),
        el('ul', {}, labels.map((label, i) => (drills[i]
          ? el('li', {}, drillButton(`${label}: ${cell(values[i])}`, drills[i], box)) : null))),
      ));
    }
  }
  const how = definitionBlock(block.definition);
  if (how) box.append(how);
  return box;
}

function cardsBlock(block) {
  const box = el('section', { class: 'block cards-block' });
  if (block.title) box.append(el('h3', {}, block.title));
  const grid = el('div', { class: 'cards' });
  for (const card of block.cards || []) {
    const fields = Object.entries(card.fields || {}).slice(0, 8);
    grid.append(el('article', { class: 'card' },
      el('h4', {}, link(card.link, card.title)),
      el('dl', {}, fields.map(([k, v]) => [el('dt', {}, k), el('dd', {}, cell(v))])),
    ));
  }
  box.append(grid);
  return box;
}

export function proposalDetails(block, options = {}) {
  return proposalView(block, options);
}

// What a scan could not read for sure: each flag names the field and why.
function flagList(flags) {
  if (!flags || !flags.length) return null;
  return el('ul', { class: 'flags', 'aria-label': 'Fields to check' },
    flags.map((f) => el('li', { class: f.level }, el('strong', {}, `${f.field}: `), f.message)));
}

function scanSource(source) {
  if (!source) return null;
  const how = { 'text-layer': 'text layer', ocr: 'OCR', vision: 'vision model' }[source.method] || source.method;
  return el('p', { class: 'scan-source' }, `From ${source.filename || 'the upload'}, read by ${how}`);
}

function scanBlock(block) {
  return el('section', { class: 'block scan-block' },
    el('h3', {}, 'What the scan found'), scanSource(block.source), flagList(block.flags));
}

// A state whose name alone would mislead: said in words.
const STATUS_WORDS = { checking: 'unknown — checking' };
export const statusWords = (status) => STATUS_WORDS[status] || status;

function proposalBlock(block, ctx) {
  const state = block.status || 'pending';
  const status = el('span', { class: `status status-${state}`, title: block.status_text || '' }, statusWords(state));
  const box = el('section', { class: 'block proposal-block', 'data-id': block.id || '' },
    el('h3', {}, 'Proposed change ', status),
    el('p', { class: 'summary' }, block.summary),
    block.unrequested ? el('p', { class: 'unrequested warning' }, block.unrequested.message,
      block.unrequested.reason ? el('small', {}, ` (${block.unrequested.reason})`) : null) : null,
    scanSource(block.source),
    flagList(block.flags),
    ...proposalDetails(block),
  );
  if ((block.status || 'pending') === 'pending' && ctx.onProposal) {
    box.append(el('div', { class: 'actions' },
      el('button', { type: 'button', class: 'primary', onclick: () => ctx.onProposal(block, status) }, 'Review and confirm…'),
    ));
  }
  return box;
}

// A clarifying question: each button answers it.
function choicesBlock(block, ctx) {
  const box = el('section', { class: 'block choices-block' }, el('p', { class: 'question' }, block.question || ''));
  const row = el('div', { class: 'actions' });
  for (const option of block.options || []) {
    row.append(el('button', {
      type: 'button',
      class: 'choice',
      'data-value': option.value,
      // An option that edits a proposal (a scanned party several records fit) changes the
      // draft, through the ERP; any other option is the next message.
      onclick: () => (option.edit && ctx.onEdit
        ? ctx.onEdit(option.edit, box)
        : ctx.onChoice && ctx.onChoice(option.value ?? option.label)),
    }, option.label));
  }
  box.append(row);
  return box;
}

function citationsBlock(block) {
  return el('section', { class: 'block citations' },
    el('h3', {}, 'Sources'),
    el('ol', {}, (block.items || []).map((c) => el('li', {}, c.title || c.source || ''))),
  );
}

function fileBlock(block) {
  const href = block.url || block.href;
  return el('section', { class: 'block file-block' }, link(href, `⬇ ${block.name || block.title || 'Download'}`));
}

const RENDERERS = {
  text: (b) => el('section', { class: 'block text-block' }, renderMarkdown(b.markdown)),
  table: tableBlock,
  chart: chartBlock,
  cards: cardsBlock,
  proposal: proposalBlock,
  scan: scanBlock,
  choices: choicesBlock,
  citations: citationsBlock,
  file: fileBlock,
};

export function renderBlocks(blocks, ctx = {}) {
  return (blocks || []).map((block) => {
    const render = RENDERERS[block.type];
    return render ? render(block, ctx) : el('pre', { class: 'block' }, JSON.stringify(block, null, 2));
  });
}
