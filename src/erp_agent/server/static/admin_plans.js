// The admin console's plans, cost and failures, and subscriptions panels (their own module:
// admin.js keeps the rest). Each panel loads once the console is shown to an administrator.
import { api, appUrl } from './api.js';
import { el } from './render.js';

const $ = (selector) => document.querySelector(selector);
const list = (text) => {
  const items = String(text || '').split(',').map((s) => s.trim()).filter(Boolean);
  return items.length ? items : null;
};
const number = (value) => (value === '' || value === undefined ? null : Number(value));
const when = (iso) => (iso ? new Date(iso).toLocaleString() : '');

function say(target, text, ok = true) {
  const node = $(target);
  node.textContent = text;
  node.className = ok ? 'ok' : 'error';
}

// ------------------------------------------------------------------ plans

let planInfo = null;

function renderPlans(info) {
  planInfo = info;
  if (info.available === false) say('#plan-status', info.reason, false);
  const all = (value) => (value === null ? 'all' : value.join(', ') || 'none');
  $('#plans').replaceChildren(
    el('tr', {}, ['Plan', 'Modules', 'Tools', 'Channels', 'Tokens / month', 'Subscriptions', ''].map((h) => el('th', {}, h))),
    ...info.plans.map((p) => el('tr', {},
      el('td', {}, p.label ? `${p.label} (${p.name})` : p.name),
      el('td', {}, all(p.modules)),
      el('td', {}, all(p.tools)),
      el('td', {}, all(p.channels)),
      el('td', {}, p.monthly_tokens === null ? 'no limit' : p.monthly_tokens.toLocaleString()),
      el('td', {}, p.subscriptions === null ? 'no limit' : String(p.subscriptions)),
      el('td', {},
        el('button', { type: 'button', onclick: () => editPlan(p) }, 'Edit'),
        el('button', { type: 'button', onclick: () => deletePlan(p.name) }, 'Delete')))),
  );
  $('#org-plans').replaceChildren(
    el('tr', {}, el('th', {}, 'Organisation'), el('th', {}, 'Plan')),
    ...info.organisations.map((o) => el('tr', {},
      el('td', {}, o.org),
      el('td', {}, o.plan || (info.default_plan ? `${info.default_plan} (default)` : 'not limited')))),
  );
  const form = $('#org-plan-form');
  form.elements.org.replaceChildren(...info.organisations.map((o) => el('option', { value: o.org }, o.org)));
  form.elements.plan.replaceChildren(
    el('option', { value: '' }, 'the default plan'),
    ...info.plans.map((p) => el('option', { value: p.name }, p.label || p.name)),
  );
  $('#plan-modules-hint').textContent = `Modules: ${info.modules.join(', ')}. Channels: ${Object.keys(info.channels).join(', ')}.`;
}

function editPlan(plan) {
  const f = $('#plan-form').elements;
  f.name.value = plan.name;
  f.label.value = plan.label || '';
  f.modules.value = (plan.modules || []).join(', ');
  f.tools.value = (plan.tools || []).join(', ');
  f.channels.value = (plan.channels || []).join(', ');
  f.monthly_tokens.value = plan.monthly_tokens ?? '';
  f.subscriptions.value = plan.subscriptions ?? '';
}

async function deletePlan(name) {
  try {
    renderPlans(await api('DELETE', `api/admin/plans/${encodeURIComponent(name)}`));
    say('#plan-status', `Deleted ${name}.`);
  } catch (error) {
    say('#plan-status', error.message, false);
  }
}

$('#plan-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const f = event.target.elements;
  const body = {
    label: f.label.value,
    modules: list(f.modules.value),
    tools: list(f.tools.value),
    channels: list(f.channels.value),
    monthly_tokens: number(f.monthly_tokens.value),
    subscriptions: number(f.subscriptions.value),
  };
  try {
    renderPlans(await api('PUT', `api/admin/plans/${encodeURIComponent(f.name.value.trim())}`, body));
    say('#plan-status', 'Saved; every worker applies it within seconds.');
  } catch (error) {
    say('#plan-status', error.message, false);
  }
});

$('#org-plan-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const f = event.target.elements;
  try {
    renderPlans(await api('PUT', `api/admin/organisations/${encodeURIComponent(f.org.value)}/plan`, { plan: f.plan.value || null }));
    say('#org-plan-status', 'Assigned.');
  } catch (error) {
    say('#org-plan-status', error.message, false);
  }
});

// ------------------------------------------------------------------ cost and failures

function costQuery(form) {
  const f = form.elements;
  return new URLSearchParams(Object.entries({ group: f.group.value, since: f.since.value, until: f.until.value }).filter(([, v]) => v));
}

async function loadCosts() {
  const form = $('#costs-form');
  const q = costQuery(form);
  const data = await api('GET', `api/admin/costs?${q}`);
  $('#costs-csv').href = appUrl(`api/admin/costs.csv?${q}`);
  const money = (row) => `${Number(row.cost).toLocaleString(undefined, { minimumFractionDigits: 2, maximumFractionDigits: 6 })} ${data.currency}`;
  const cells = (row) => [
    row.key, row.turns, (row.prompt_tokens + row.completion_tokens).toLocaleString(),
    row.cached_tokens.toLocaleString(), money(row), row.unpriced_turns, row.tool_calls,
    row.failed, row.refused, row.average_latency_ms,
  ];
  $('#costs').replaceChildren(
    el('tr', {}, ['Group', 'Turns', 'Tokens', 'Cached', 'Cost', 'Unpriced turns', 'Tool calls', 'Failed', 'Declined', 'Avg ms'].map((h) => el('th', {}, h))),
    ...data.rows.map((r) => el('tr', {}, cells(r).map((c) => el('td', {}, String(c))))),
    el('tr', { class: 'total' }, cells({ ...data.total, key: 'Total' }).map((c) => el('td', {}, String(c)))),
  );
  $('#costs-summary').textContent = `${data.since} – ${data.until}: ${money(data.total)} over ${data.total.turns} turns. ${data.note}`;
  const failures = await api('GET', `api/admin/failures?${new URLSearchParams({ since: data.since, until: data.until })}`);
  $('#failures-csv').href = appUrl(`api/admin/failures.csv?${new URLSearchParams({ since: data.since, until: data.until })}`);
  $('#failures').replaceChildren(
    el('tr', {}, ['Question', 'Times', 'Users', 'Outcomes', 'Last'].map((h) => el('th', {}, h))),
    ...failures.questions.map((q2) => el('tr', {},
      el('td', {}, q2.question), el('td', {}, String(q2.count)), el('td', {}, String(q2.users)),
      el('td', {}, Object.entries(q2.outcomes).map(([k, v]) => `${k === 'refused' ? 'declined' : k} ${v}`).join(', ')),
      el('td', {}, when(q2.last_at)))),
  );
}

$('#costs-form').addEventListener('submit', (event) => {
  event.preventDefault();
  loadCosts().catch((error) => say('#costs-summary', error.message, false));
});

// ------------------------------------------------------------------ subscriptions

async function loadSubscriptions() {
  const data = await api('GET', 'api/admin/subscriptions');
  const act = (id, verb, method = 'POST') => async () => {
    try {
      await api(method, `api/admin/subscriptions/${encodeURIComponent(id)}${verb ? `/${verb}` : ''}`);
      await loadSubscriptions();
    } catch (error) {
      say('#sub-status', error.message, false);
    }
  };
  $('#subscriptions').replaceChildren(
    el('tr', {}, ['User', 'Title', 'When', 'Channels', 'Status', 'Next run', 'Last', ''].map((h) => el('th', {}, h))),
    ...data.subscriptions.map((s) => el('tr', {},
      el('td', {}, s.user + (data.enabled_users[s.user] ? '' : ' (not enabled)')),
      el('td', {}, s.title),
      el('td', {}, s.schedule + (s.condition ? `, ${s.condition}` : '')),
      el('td', {}, s.channels.join(', ')),
      el('td', {}, s.status + (s.status_message ? `: ${s.status_message}` : '')),
      el('td', {}, when(s.next_run)),
      el('td', {}, s.last_value || s.last_outcome || ''),
      el('td', {},
        s.status === 'active'
          ? el('button', { type: 'button', onclick: act(s.id, 'pause') }, 'Pause')
          : el('button', { type: 'button', onclick: act(s.id, 'resume') }, 'Resume'),
        el('button', { type: 'button', onclick: act(s.id, '', 'DELETE') }, 'Delete')))),
  );
  $('#sub-enabled').textContent = `Enabled users: ${Object.keys(data.enabled_users).join(', ') || 'none'}. Email: ${data.email ? 'on' : 'off (ERP_AGENT_SMTP_HOST unset)'}.`;
}

$('#sub-enable-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const user = event.target.elements.user.value.trim();
  try {
    await api('POST', 'api/admin/subscriptions/users', { user });
    say('#sub-status', `Subscriptions of ${user} can run while they are away.`);
    await loadSubscriptions();
  } catch (error) {
    say('#sub-status', error.message, false);
  }
});

// Loaded once the console is shown (admin.js reveals #admin for an administrator).
const start = () => {
  api('GET', 'api/admin/plans').then(renderPlans).catch(() => {});
  loadCosts().catch(() => {});
  loadSubscriptions().catch(() => {});
};
const main = $('#admin');
if (main && !main.hidden) start();
else if (main) new MutationObserver((_, observer) => {
  if (!main.hidden) { observer.disconnect(); start(); }
}).observe(main, { attributes: true, attributeFilter: ['hidden'] });
