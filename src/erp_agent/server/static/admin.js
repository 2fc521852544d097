// The admin console: model provider, tenant switch, policy, budgets and usage, log, feedback,
// one turn in full, search index progress, knowledge, API keys.
import { api } from './api.js';
import { el } from './render.js';

const $ = (selector) => document.querySelector(selector);
let usageChart = null;

function say(target, text, ok = true) {
  const node = $(target);
  node.textContent = text;
  node.className = ok ? 'ok' : 'error';
}

async function loadModel() {
  const model = await api('GET', 'api/admin/model');
  const form = $('#model-form');
  form.elements.provider.value = model.provider;
  form.elements.model.value = model.provider === 'offline' ? '' : model.model || '';
  form.elements.base_url.value = model.base_url || '';
  form.elements.api_key.value = '';
  $('#model-current').textContent =
    `Now: ${model.provider} · ${model.model || ''}${model.key_set ? ' · key set' : ''}` +
    ` · ${model.source === 'environment' ? 'set by environment' : 'set here'}`;
  $('#model-reset').hidden = model.source === 'environment';
  $('#model-problems').textContent = (model.problems || []).join(' ');
}

$('#model-reset').addEventListener('click', async () => {
  try {
    await api('DELETE', 'api/admin/model');
    say('#model-status', "Back to the environment's model from the next question on.");
    await loadModel();
  } catch (error) {
    say('#model-status', error.message, false);
  }
});

$('#model-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const f = event.target.elements;
  const body = { provider: f.provider.value, model: f.model.value, base_url: f.base_url.value || null };
  if (f.api_key.value) body.api_key = f.api_key.value;
  try {
    await api('PUT', 'api/admin/model', body);
    say('#model-status', 'Applied from the next question on.');
    await loadModel();
  } catch (error) {
    say('#model-status', error.message, false);
  }
});

async function loadTenant() {
  const tenant = await api('GET', 'api/admin/tenant');
  $('#read-only').checked = tenant.read_only;
  $('#read-only').title = tenant.source === 'admin console' ? 'set here' : 'set by environment';
}

$('#read-only').addEventListener('change', async (event) => {
  const result = await api('PUT', 'api/admin/tenant', { read_only: event.target.checked });
  say('#tenant-status', result.read_only ? 'Read-only: writes are refused.' : 'Writable.');
});

async function loadPolicy() {
  $('#policy-form').elements.yaml.value = (await api('GET', 'api/admin/policy')).yaml;
}

$('#policy-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  try {
    await api('PUT', 'api/admin/policy', { yaml: event.target.elements.yaml.value });
    say('#policy-status', 'Saved; new sessions use it.');
  } catch (error) {
    say('#policy-status', error.message, false);
  }
});

async function loadBudgets() {
  const budgets = await api('GET', 'api/admin/budgets');
  $('#budgets').replaceChildren(
    el('tr', {}, el('th', {}, 'Organisation'), el('th', {}, 'Budget / month'), el('th', {}, 'Used this month')),
    ...budgets.orgs.map((o) => el('tr', {},
      el('td', {}, o.org),
      el('td', {}, (o.tokens ?? budgets.default ?? 'no limit').toLocaleString()),
      el('td', {}, o.used_this_month.toLocaleString()))),
  );
  const usage = await api('GET', 'api/admin/usage?days=30');
  const days = [...new Set(usage.rows.map((r) => r.day))];
  const orgs = [...new Set(usage.rows.map((r) => r.org))];
  const datasets = orgs.map((org) => ({
    label: org,
    data: days.map((d) => {
      const row = usage.rows.find((r) => r.org === org && r.day === d);
      return row ? row.prompt + row.completion : 0;
    }),
  }));
  if (!window.Chart) return;
  if (usageChart) usageChart.destroy();
  usageChart = new window.Chart($('#usage-chart'), {
    type: 'bar',
    data: { labels: days, datasets },
    options: { responsive: true, maintainAspectRatio: false, animation: false, plugins: { title: { display: true, text: 'Tokens per day' } } },
  });
}

$('#budget-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const f = event.target.elements;
  await api('PUT', 'api/admin/budgets', { org: f.org.value, tokens: f.tokens.value ? Number(f.tokens.value) : null });
  await loadBudgets();
});

const RATING = { up: 'helpful', down: 'not helpful' };
const query = (filters) => new URLSearchParams(Object.entries(filters).filter(([, v]) => v));
const when = (iso) => (iso ? new Date(iso).toLocaleString() : '');

async function loadLog(filters = {}) {
  const rows = await api('GET', `api/admin/log?${query(filters)}`);
  $('#log').replaceChildren(
    el('tr', {}, ['When', 'User', 'Question', 'Tools', 'Outcome', 'Feedback', 'Tokens', 'ms'].map((h) => el('th', {}, h))),
    ...rows.map((r) => el('tr', { class: 'clickable', 'data-turn': r.turn_id, onclick: () => showTurn(r.turn_id) },
      el('td', {}, when(r.at)),
      el('td', {}, r.user),
      el('td', {}, r.message),
      el('td', {}, r.tools.join(', ')),
      el('td', {}, r.outcome),
      el('td', {}, RATING[r.rating] || ''),
      el('td', {}, (r.prompt_tokens + r.completion_tokens).toLocaleString()),
      el('td', {}, Math.round(r.latency_ms)))),
  );
}

$('#log-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const f = event.target.elements;
  loadLog({ user: f.user.value, tool: f.tool.value, outcome: f.outcome.value });
});

// Feedback: every rated answer with its comment and the turn it belongs to (a click opens it).
async function loadFeedback(filters = {}) {
  const { summary, rows } = await api('GET', `api/admin/feedback?${query(filters)}`);
  const count = summary.up + summary.down;
  say('#feedback-summary', count
    ? `${count} rated: ${summary.up} helpful, ${summary.down} not helpful`
    : 'No feedback matches these filters.');
  $('#feedback').replaceChildren(
    el('tr', {}, ['Rated', 'User', 'Rating', 'Comment', 'Question', 'Outcome'].map((h) => el('th', {}, h))),
    ...rows.map((r) => el('tr', { class: 'clickable', 'data-turn': r.turn_id, onclick: () => showTurn(r.turn_id) },
      el('td', {}, when(r.rated_at || r.at)),
      el('td', {}, r.user),
      el('td', { class: `rating-${r.rating}` }, RATING[r.rating]),
      el('td', {}, r.comment || ''),
      el('td', {}, r.message),
      el('td', {}, r.outcome))),
  );
}

$('#feedback-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const f = event.target.elements;
  loadFeedback({ user: f.user.value, rating: f.rating.value, outcome: f.outcome.value, since: f.since.value, until: f.until.value })
    .catch((error) => say('#feedback-summary', error.message, false));
});

// One turn in full: who asked what, what the answer said, its outcome and feedback, the
// gateway's decisions, and the raw log.
function answerParts(response) {
  const blocks = (response && response.blocks) || [];
  if (!blocks.length) return [el('p', {}, 'No answer stored.')];
  return blocks.map((b) => el('p', { class: 'answer-text' },
    b.type === 'text' ? (b.markdown ?? b.text) : `[${b.type}${b.title ? `: ${b.title}` : ''}]`));
}

async function showTurn(turnId) {
  const detail = await api('GET', `api/admin/log/${encodeURIComponent(turnId)}`);
  const feedback = detail.feedback
    ? `${RATING[detail.feedback.rating]}${detail.feedback.comment ? ` — “${detail.feedback.comment}”` : ''}`
    : 'none';
  const facts = [['User', detail.user], ['Outcome', detail.outcome || 'not logged'], ['Status', detail.status], ['Feedback', feedback]];
  $('#turn-id').textContent = detail.id;
  $('#turn-facts').replaceChildren(...facts.flatMap(([k, v]) => [el('dt', {}, k), el('dd', {}, v || '')]));
  $('#turn-question').textContent = detail.message;
  $('#turn-answer').replaceChildren(...('response' in detail
    ? answerParts(detail.response) : [el('p', {}, 'Hidden, as the question is.')]));
  $('#turn-events').replaceChildren(
    el('tr', {}, ['When', 'Tool', 'Decision', 'Reason', 'ms'].map((h) => el('th', {}, h))),
    ...detail.events.map((e) => el('tr', {},
      el('td', {}, when(e.at)), el('td', {}, e.tool), el('td', {}, e.decision),
      el('td', {}, e.reason || ''), el('td', {}, Math.round(e.latency_ms || 0)))),
  );
  $('#log-detail').textContent = JSON.stringify(detail.log ?? null, null, 2);
  $('#turn-panel').hidden = false;
  $('#turn-panel').scrollIntoView({ block: 'start' });
}

const seconds = (s) => (s >= 90 ? `${Math.round(s / 60)} min` : `${Math.round(s)} s`);

// The record sync and the background embedding: progress bar, rate and time left, polled
// while a job runs.
async function loadIndex() {
  let status;
  try {
    status = await api('GET', 'api/admin/index');
  } catch (error) {
    say('#index-summary', error.message, false);
    return;
  }
  if (!status.available) {
    say('#index-summary', 'No search index on this server.');
    return;
  }
  // documents = embedded + keyword-only: the three figures add up.
  const waiting = status.keyword_only
    ? `${status.embedded.toLocaleString()} embedded, ${status.keyword_only.toLocaleString()} found by keyword only until embedded`
    : 'every card embedded';
  say('#index-summary', `${status.documents.toLocaleString()} cards in the index: ${waiting}`);
  const jobs = $('#index-jobs');
  jobs.replaceChildren();
  let running = false;
  for (const job of Object.values(status.jobs)) {
    running = running || job.running;
    const bar = el('progress', { max: job.total || 1, value: job.total ? job.done : 0 });
    bar.setAttribute('aria-label', job.name);
    const eta = job.eta != null ? ` · ${seconds(job.eta)} left` : '';
    const state = job.running ? `${job.rate}/s${eta}` : `done in ${seconds(job.elapsed)}`;
    const total = job.total != null ? ` of ${job.total.toLocaleString()}` : '';
    jobs.append(el('p', { class: 'index-job' }, [
      `${job.name}: ${job.done.toLocaleString()}${total} ${job.detail} · ${state} `, bar,
    ]));
  }
  setTimeout(loadIndex, running || status.keyword_only ? 2000 : 15000);
}

$('#knowledge-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const file = event.target.elements.file.files[0];
  if (!file) return say('#knowledge-status', 'Choose a Markdown file first.', false);
  try {
    const result = await api('POST', 'api/admin/knowledge', { name: file.name, text: await file.text() });
    say('#knowledge-status', `Indexed: ${JSON.stringify(result)}`);
  } catch (error) {
    say('#knowledge-status', error.message, false);
  }
});

$('#reindex').addEventListener('click', async () => {
  try {
    say('#knowledge-status', `Re-indexed: ${JSON.stringify(await api('POST', 'api/admin/knowledge/reindex'))}`);
  } catch (error) {
    say('#knowledge-status', error.message, false);
  }
});

async function loadKeys() {
  const { keys } = await api('GET', 'api/admin/api-keys');
  $('#keys tbody').replaceChildren(...keys.map((k) => el('tr', {},
    el('td', {}, k.id), el('td', {}, k.kind), el('td', {}, k.user || k.org), el('td', {}, k.label),
    el('td', {}, k.created_at), el('td', {}, k.revoked_at || ''),
    el('td', {}, k.revoked_at ? '' : el('button', { type: 'button', onclick: () => revokeKey(k.id) }, 'Revoke')))));
}

async function revokeKey(id) {
  try {
    await api('DELETE', `api/admin/api-keys/${encodeURIComponent(id)}`);
    say('#key-status', `Revoked ${id}.`);
    await loadKeys();
  } catch (error) {
    say('#key-status', error.message, false);
  }
}

// A key is shown once, here; the server keeps only its hash.
function showKey(issued) {
  say('#key-status', `Copy this key now, it is not shown again: ${issued.key}`);
  return loadKeys();
}

$('#key-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const form = event.target;
  try {
    await showKey(await api('POST', 'api/admin/api-keys', { user: form.elements.user.value, label: form.elements.label.value }));
  } catch (error) {
    say('#key-status', error.message, false);
  }
});

$('#org-key').addEventListener('click', async () => {
  try {
    await showKey(await api('POST', 'api/admin/api-keys/org', { label: $('#key-form').elements.label.value }));
  } catch (error) {
    say('#key-status', error.message, false);
  }
});

(async () => {
  try {
    const me = await api('GET', 'api/auth/me');
    $('#who').textContent = me.user;
    if (!me.is_admin) throw new Error('Only a System Manager may use the admin console.');
  } catch (error) {
    $('#denied').hidden = false;
    $('#denied').textContent = error.status === 401 ? 'Sign in on the chat page first.' : error.message;
    return;
  }
  $('#admin').hidden = false;
  await Promise.all([loadModel(), loadTenant(), loadPolicy(), loadBudgets(), loadLog(), loadFeedback(), loadIndex(), loadKeys()]);
})();
