// A proposal as a person reads it: who, when, the lines (item, qty, UOM, rate, amount), taxes
// and totals; for an update, what changes; for a workflow action, the transition. Figures are
// the server's (the ERP's rates, amounts computed from them); nothing is recomputed here.
// With `editable`, quantities, rates and the date are inputs and lines can be removed; the
// edits are read back with `readEdits` and sent to the server, which re-validates them.

function make(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'class') node.className = value;
    else node.setAttribute(key, value === true ? '' : value);
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

const money = (value) => (typeof value === 'number'
  ? value.toLocaleString(undefined, { minimumFractionDigits: 2, maximumFractionDigits: 2 })
  : (value ?? ''));
const plain = (value) => (value === null || value === undefined ? ''
  : typeof value === 'object' ? JSON.stringify(value) : String(value));
const words = (key) => key.replace(/_/g, ' ').replace(/^./, (c) => c.toUpperCase());

const HEAD_FIELDS = [
  ['Party', (d) => d.customer_name || d.supplier_name || d.party || d.customer || d.supplier],
  ['Company', (d) => d.company],
  ['Currency', (d) => d.currency],
  ['Price list', (d) => d.price_list],
  ['Taxes', (d) => d.taxes_template],
];
const SHOWN = new Set(['items', 'taxes', 'customer_name', 'supplier_name', 'party', 'customer', 'supplier',
  'company', 'currency', 'price_list', 'taxes_template', 'net_total', 'tax_total', 'total', 'total_qty',
  'quotation_to']);

function dateField(doc) {
  return ['date', 'posting_date', 'transaction_date'].find((k) => typeof doc[k] === 'string') || null;
}

function header(doc, editable) {
  const list = make('dl', { class: 'doc-head' });
  for (const [label, pick] of HEAD_FIELDS) {
    const value = pick(doc);
    if (value) list.append(make('dt', {}, label), make('dd', {}, plain(value)));
  }
  const key = dateField(doc);
  if (key) {
    const value = editable
      ? make('input', { type: 'date', value: doc[key], 'data-edit': 'date', 'aria-label': 'Date' })
      : doc[key];
    list.append(make('dt', {}, 'Date'), make('dd', {}, value));
  }
  for (const [k, v] of Object.entries(doc)) {
    if (SHOWN.has(k) || k === key || v === null || v === '' || typeof v === 'object') continue;
    list.append(make('dt', {}, words(k)), make('dd', {}, plain(v)));
  }
  return list;
}

function lines(doc, editable) {
  const head = ['#', 'Item', 'Qty', 'UOM', 'Rate', 'Amount', ...(editable ? ['Remove'] : [])];
  const rows = (doc.items || []).map((line, index) => {
    const qty = editable
      ? make('input', { type: 'number', step: 'any', min: '0', value: line.qty, 'data-edit': 'qty',
        'data-index': index, 'aria-label': `Quantity of line ${index + 1}` })
      : plain(line.qty);
    const rate = editable
      ? make('input', { type: 'number', step: 'any', min: '0', value: line.rate, 'data-edit': 'rate',
        'data-index': index, 'aria-label': `Rate of line ${index + 1}` })
      : money(line.rate);
    const name = line.item_name && line.item_name !== line.item
      ? [line.item_name, make('small', {}, ` ${line.item}`)] : [plain(line.item)];
    return make('tr', { 'data-line': index },
      make('td', {}, index + 1), make('td', {}, ...name), make('td', { class: 'num' }, qty),
      make('td', {}, plain(line.uom)), make('td', { class: 'num' }, rate),
      make('td', { class: 'num' }, money(line.amount)),
      ...(editable ? [make('td', {}, make('input', { type: 'checkbox', 'data-edit': 'remove',
        'data-index': index, 'aria-label': `Remove line ${index + 1}` }))] : []));
  });
  return make('table', { class: 'doc-lines' },
    make('thead', {}, make('tr', {}, head.map((h) => make('th', {}, h)))), make('tbody', {}, rows));
}

function totals(doc) {
  const list = make('table', { class: 'doc-totals' });
  const cur = doc.currency ? `${doc.currency} ` : '';
  const add = (label, value) => list.append(make('tr', {}, make('th', { scope: 'row' }, label),
    make('td', { class: 'num' }, `${cur}${money(value)}`)));
  if (typeof doc.net_total === 'number') add('Net total', doc.net_total);
  for (const tax of doc.taxes || []) {
    const named = String(tax.description || '').includes('%');
    const rate = typeof tax.rate === 'number' && tax.charge_type !== 'Actual' && !named ? ` (${tax.rate}%)` : '';
    add(`${tax.description || tax.account || 'Tax'}${rate}`, tax.amount);
  }
  if (typeof doc.total === 'number') add('Total', doc.total);
  return list;
}

function diffTable(diff) {
  return make('table', { class: 'diff' },
    make('thead', {}, make('tr', {}, make('th', {}, 'Field'), make('th', {}, 'Now'), make('th', {}, 'After'))),
    make('tbody', {}, diff.map((d) => make('tr', {}, make('td', {}, d.label || words(d.field)),
      make('td', { class: 'before' }, plain(d.before)), make('td', { class: 'after' }, plain(d.after))))));
}

export function proposalView(block, { editable = false } = {}) {
  const parts = [];
  if (block.diff && block.diff.length) parts.push(diffTable(block.diff));
  const doc = block.document;
  if (doc && Array.isArray(doc.items)) {
    parts.push(header(doc, editable), lines(doc, editable), totals(doc));
  } else if (doc && typeof doc === 'object' && !(block.diff && block.diff.length)) {
    parts.push(header(doc, false));
  } else if (!doc && !(block.diff && block.diff.length) && block.payload) {
    parts.push(header(block.payload, false));
  }
  if (block.projection && Array.isArray(block.projection.ledger)) parts.push(projectionView(block.projection));
  return parts;
}

function small(head, rows, numeric) {
  return make('table', { class: 'projection-lines' },
    make('thead', {}, make('tr', {}, head.map((h) => make('th', {}, h)))),
    make('tbody', {}, rows.map((row) => make('tr', {}, row.map((v, i) => make('td',
      { class: numeric.includes(i) ? 'num' : null }, numeric.includes(i) ? money(v) : plain(v)))))));
}

// What the ERP computed the submit or cancel will post, for the version proposed: a
// projection, labelled as one, never a record of what happened.
function projectionView(p) {
  const cur = p.currency ? ` (${p.currency})` : '';
  const box = make('section', { class: 'projection', 'aria-label': 'Projection' },
    make('h4', {}, p.label || 'Projected by the ERP'),
    make('p', { class: 'projection-text' }, `${p.text || ''}${p.modified ? ` (the record as of ${String(p.modified).replace(/\.\d+$/, '')})` : ''}.`));
  if (p.refusal) box.append(make('p', { class: 'projection-refusal warning' }, make('strong', {}, 'The ERP says: '), p.refusal));
  if ((p.blocked_by || []).length) {
    box.append(make('p', {}, 'Submitted documents linked to it, to cancel first:'),
      make('ul', { class: 'projection-blocked' }, p.blocked_by.map((b) => make('li', {}, `${b.doctype} ${b.id}`))));
  }
  if ((p.ledger || []).length) {
    box.append(make('h5', {}, p.action === 'cancel' ? 'Ledger entries it reverses' : 'Ledger entries it posts'),
      small(['Account', `Debit${cur}`, `Credit${cur}`, 'Party', 'Cost centre'],
        p.ledger.map((e) => [e.account, e.debit, e.credit, [e.party_type, e.party].filter(Boolean).join(' '), e.cost_center]), [1, 2]));
  }
  if ((p.stock || []).length) {
    box.append(make('h5', {}, 'Stock movements'),
      small(['Item', 'Warehouse', 'In', 'Out', 'Value change'],
        p.stock.map((m) => [m.item, m.warehouse, m.in_qty, m.out_qty, m.value_change]), [4]));
  }
  if ((p.payment_schedule || []).length) {
    box.append(make('h5', {}, 'Payment schedule'),
      small(['Due date', 'Portion (%)', `Amount${cur}`],
        p.payment_schedule.map((r) => [r.due_date, r.portion, r.amount]), [2]));
  }
  if (!(p.ledger || []).length && !(p.stock || []).length && !(p.payment_schedule || []).length
      && !(p.blocked_by || []).length && !p.refusal) {
    box.append(make('p', {}, 'It posts no ledger entries or stock movements.'));
  }
  for (const note of p.notes || []) box.append(make('p', { class: 'projection-note' }, note));
  return box;
}

// What the user changed in an editable view: {date?, lines: [{index, qty?, rate?, remove?}]}.
export function readEdits(root, block) {
  const doc = block.document || {};
  const edits = { lines: [] };
  const byIndex = new Map();
  const line = (index) => {
    if (!byIndex.has(index)) byIndex.set(index, { index });
    return byIndex.get(index);
  };
  for (const input of root.querySelectorAll('[data-edit]')) {
    const kind = input.dataset.edit;
    const index = Number(input.dataset.index);
    const original = kind === 'date' ? doc[dateField(doc)] : (doc.items || [])[index]?.[kind];
    if (kind === 'remove') {
      if (input.checked) line(index).remove = true;
    } else if (kind === 'date') {
      if (input.value !== original) edits.date = input.value;
    } else if (input.value.trim() !== String(original)) {
      line(index)[kind] = input.value.trim();
    }
  }
  edits.lines = [...byIndex.values()];
  return edits.date || edits.lines.length ? edits : null;
}

// Inline icons: they render without an emoji font.
const ICON_PATHS = {
  up: 'M2 21h4V9H2v12zm20-11a2 2 0 0 0-2-2h-6.3l1-4.6v-.3c0-.4-.2-.8-.4-1.1L13.2 1 6.6 7.6C6.2 8 6 8.5 6 9v10a2 2 0 0 0 2 2h9c.8 0 1.5-.5 1.8-1.2l3-7.1c.1-.2.2-.5.2-.7v-2z',
  down: 'M22 3h-4v12h4V3zM2 14a2 2 0 0 0 2 2h6.3l-1 4.6v.3c0 .4.2.8.4 1.1l1.1 1 6.6-6.6c.4-.4.6-.9.6-1.4V5a2 2 0 0 0-2-2H7c-.8 0-1.5.5-1.8 1.2l-3 7.1c-.1.2-.2.5-.2.7v2z',
};

export function icon(name) {
  const ns = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(ns, 'svg');
  svg.setAttribute('viewBox', '0 0 24 24');
  svg.setAttribute('width', '16');
  svg.setAttribute('height', '16');
  svg.setAttribute('aria-hidden', 'true');
  svg.setAttribute('class', `icon-svg icon-${name}`);
  const path = document.createElementNS(ns, 'path');
  path.setAttribute('d', ICON_PATHS[name]);
  path.setAttribute('fill', 'currentColor');
  svg.append(path);
  return svg;
}
