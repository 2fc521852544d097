// The web app's inbox: what the user's subscriptions delivered (figure, definition, a link to
// ask the question again) and notices about them; and "?ask=<question>" from such a link puts
// the question in the composer.
import { api, appUrl } from './api.js';
import { el } from './render.js';

const $ = (selector) => document.querySelector(selector);

function item(entry) {
  const data = entry.data || {};
  return el('li', { class: entry.read ? 'inbox-item read' : 'inbox-item', 'data-id': entry.id },
    el('strong', {}, entry.title),
    el('span', { class: 'when' }, ` ${new Date(entry.created_at).toLocaleString()}`),
    el('p', {}, data.headline || entry.body.split('\n')[0]),
    data.definition ? el('p', { class: 'hint' }, data.definition) : null,
    entry.kind === 'notice' ? el('p', { class: 'hint' }, entry.body) : null,
    data.question ? el('a', { href: appUrl(`?${new URLSearchParams({ ask: data.question })}`) }, 'Ask it again') : null,
    entry.read ? null : el('button', { type: 'button', onclick: () => markRead(entry.id) }, 'Mark read'));
}

async function markRead(id) {
  await api('POST', `api/inbox/${encodeURIComponent(id)}/read`);
  await loadInbox();
}

export async function loadInbox() {
  const panel = $('#inbox');
  if (!panel) return;
  let data;
  try {
    data = await api('GET', 'api/inbox?limit=20');
  } catch {
    return; // not signed in, or no subscriptions on this server
  }
  $('#inbox-count').textContent = data.unread ? ` (${data.unread})` : '';
  $('#inbox-items').replaceChildren(...data.items.map(item));
  $('#inbox-empty').hidden = data.items.length > 0;
  panel.hidden = false;
}

const asked = new URLSearchParams(window.location.search).get('ask');
if (asked) {
  const composer = $('#composer textarea');
  if (composer) composer.value = asked;
  window.history.replaceState(null, '', window.location.pathname);
}
loadInbox();
setInterval(loadInbox, 60000);
