// The chat page: sign-in, conversations, a streamed turn with live progress, proposals, feedback.
import { api, ensureCsrf, streamChat, uploadScan } from './api.js';
import { el, openDrill, proposalDetails, renderBlocks, statusWords } from './render.js';
import { icon, readEdits } from './proposal.js';

const $ = (selector) => document.querySelector(selector);
let conversationId = null;

function showSignedIn(me) {
  $('#sign-in').hidden = true;
  $('#sign-in-key').hidden = true;
  $('#workspace').hidden = false;
  $('#sign-out').hidden = false;
  $('#toggle-history').hidden = false;
  $('#admin-link').hidden = !me.is_admin;
  $('#my-data').hidden = false;
  $('#who').textContent = me.user + (me.read_only ? ' · read-only' : '');
  loadConversations().catch(sessionEnded);
  openLinkedDrill();
  openLinkedProposal();
}

// A figure's link from an MCP or OpenAI-API client (/?drill=REF): its documents are listed here
// as the signed-in user, and only if the figure was computed for them.
let linkedDrill = new URLSearchParams(window.location.search).get('drill');
async function openLinkedDrill() {
  const ref = linkedDrill;
  if (!ref) return;
  linkedDrill = null;
  if (!new URLSearchParams(window.location.search).get('proposal')) {
    window.history.replaceState(null, '', window.location.pathname);
  }
  const anchor = el('section', { class: 'block' }, el('p', {}, 'The documents behind a figure you were sent:'));
  addAgentMessage().replaceChildren(anchor);
  await openDrill(ref, anchor);
}

// A confirm link from an MCP or OpenAI-API client (/?proposal=ID): the proposal is shown here,
// where only its owner can confirm it; nothing was written before.
async function openLinkedProposal() {
  const id = new URLSearchParams(window.location.search).get('proposal');
  if (!id) return;
  window.history.replaceState(null, '', window.location.pathname);
  const box = addAgentMessage();
  try {
    const proposal = await api('GET', `api/proposals/${encodeURIComponent(id)}`);
    showResponse(box, { blocks: [{ type: 'proposal', ...proposal }] }, null, false);
  } catch (error) {
    box.replaceChildren(el('p', { class: 'error' }, error.message));
  }
}

async function showSignIn() {
  $('#sign-in').hidden = false;
  let options = { password: true, api_key: false, sso: false };
  try {
    options = await api('GET', 'api/auth/options');
  } catch {
    // an older server: password only
  }
  $('#sso').hidden = !options.sso;
  $('#password-sign-in').hidden = !options.password;
  for (const input of $('#password-sign-in').querySelectorAll('input')) input.required = options.password;
  $('#sign-in-key').hidden = !options.api_key;
  $('#workspace').hidden = true;
  $('#sign-out').hidden = true;
  $('#admin-link').hidden = true;
  $('#my-data').hidden = true;
  $('#who').textContent = '';
}

// A session that ended while the page showed it (signed out in another tab, expired): the
// sign-in form again, not a dead workspace.
function sessionEnded(error) {
  if (error.status !== 401) throw error;
  conversationId = null;
  $('#messages').replaceChildren();
  showSignIn();
}

async function loadConversations() {
  const list = await api('GET', 'api/conversations');
  $('#conversations').replaceChildren(...list.map((c) =>
    el('li', {}, el('button', {
      type: 'button',
      class: c.id === conversationId ? 'current' : '',
      onclick: () => openConversation(c.id),
    }, c.title || 'Untitled'), el('button', {
      type: 'button',
      class: 'delete-conversation',
      title: 'Delete this conversation',
      'aria-label': `Delete ${c.title || 'Untitled'}`,
      onclick: () => deleteConversation(c.id),
    }, '×'))));
}

async function deleteConversation(id) {
  if (!window.confirm('Delete this conversation? It cannot be undone.')) return;
  await api('DELETE', `api/conversations/${encodeURIComponent(id)}`);
  if (id === conversationId) {
    conversationId = null;
    $('#messages').replaceChildren();
  }
  loadConversations().catch(sessionEnded);
}

async function openConversation(id) {
  const conversation = await api('GET', `api/conversations/${encodeURIComponent(id)}`);
  conversationId = conversation.id;
  $('#messages').replaceChildren();
  for (const turn of conversation.turns) {
    // An outcome (what a confirm or reject did) has no user message of its own.
    if (turn.kind !== 'outcome') addUserMessage(turn.user_message);
    const box = addAgentMessage();
    if (turn.response) showResponse(box, turn.response, turn.feedback, turn.kind !== 'outcome');
  }
  document.body.classList.remove('show-history');
  loadConversations().catch(sessionEnded);
}

function addUserMessage(text) {
  const node = el('div', { class: 'msg user' }, el('p', {}, text));
  $('#messages').append(node);
  return node;
}

function addAgentMessage() {
  const progress = el('p', { class: 'progress', role: 'status' });
  const node = el('div', { class: 'msg agent' }, progress);
  $('#messages').append(node);
  node.scrollIntoView({ block: 'end' });
  return node;
}

function feedbackBar(turnId, given) {
  const bar = el('div', { class: 'feedback' });
  const comment = el('input', { type: 'text', placeholder: 'Comment (optional)', 'aria-label': 'Feedback comment' });
  const send = (rating) => async () => {
    await api('POST', `api/turns/${encodeURIComponent(turnId)}/feedback`, { rating, comment: comment.value });
    bar.replaceChildren(el('span', { class: 'thanks' }, icon(rating), rating === 'up' ? ' Thanks' : ' Thanks, noted'));
  };
  if (given) {
    bar.append(el('span', { class: 'thanks' }, icon(given.rating === 'up' ? 'up' : 'down'), given.comment ? ` ${given.comment}` : ''));
    return bar;
  }
  bar.append(
    el('button', { type: 'button', class: 'icon', 'aria-label': 'Helpful', onclick: send('up') }, icon('up')),
    el('button', { type: 'button', class: 'icon', 'aria-label': 'Not helpful', onclick: send('down') }, icon('down')),
    comment,
  );
  return bar;
}

// A choice that edits a proposal: the ERP re-fills it; the new proposal replaces the old card.
async function editFromChoice(edit, choicesBox) {
  const card = [...document.querySelectorAll('.proposal-block')].find((c) => c.dataset.id === edit.proposal);
  const { proposal: _, ...body } = edit;
  const outcome = await api('POST', `api/proposals/${encodeURIComponent(edit.proposal)}/edit`, body);
  if (!outcome.proposal) {
    choicesBox.append(el('p', { class: 'error' }, outcome.message || 'The change was not applied.'));
    return;
  }
  const badge = card?.querySelector('.status');
  if (badge) {
    badge.textContent = 'superseded';
    badge.className = 'status status-superseded';
  }
  card?.querySelector('.actions')?.remove();
  const [fresh] = renderBlocks([{ type: 'proposal', ...outcome.proposal }], { onProposal: reviewProposal });
  (card || choicesBox).after(fresh);
  choicesBox.remove();
  reviewProposal(outcome.proposal, fresh.querySelector('.status'));
}

function showResponse(box, response, feedback, withFeedback = true) {
  box.replaceChildren(...renderBlocks(response.blocks, {
    onProposal: reviewProposal, onChoice: (value) => send(value), onEdit: editFromChoice,
  }));
  if (withFeedback) box.append(feedbackBar(response.turn_id, feedback));
  box.dataset.turn = response.turn_id;
}

// The outcome of a decision, as the message now stored in the conversation.
function addOutcomeMessage(markdown) {
  if (!markdown) return;
  const box = addAgentMessage();
  box.classList.add('outcome');
  box.replaceChildren(...renderBlocks([{ type: 'text', markdown }]));
}

// Ask the server how a "checking" proposal was decided, until it is; then say so on its card.
async function followChecking(id, statusBadge) {
  for (;;) {
    await new Promise((resolve) => { setTimeout(resolve, 5000); });
    let proposal;
    try {
      proposal = await api('GET', `api/proposals/${encodeURIComponent(id)}`);
    } catch {
      continue;
    }
    if (proposal.status === 'checking') continue;
    statusBadge.textContent = statusWords(proposal.status);
    statusBadge.className = `status status-${proposal.status}`;
    statusBadge.title = proposal.status_text || '';
    const said = proposal.error?.message || proposal.status_text;
    if (said) addOutcomeMessage(said);
    return;
  }
}

function reviewProposal(block, statusBadge, notice = []) {
  const dialog = $('#proposal-dialog');
  const details = dialog.querySelector('.details');
  const editable = (block.status || 'pending') === 'pending' && Array.isArray(block.document?.items);
  dialog.querySelector('.summary').textContent = block.summary;
  details.replaceChildren(...proposalDetails(block, { editable }));
  const result = dialog.querySelector('.result');
  result.replaceChildren(...notice);
  const confirm = dialog.querySelector('.confirm');
  const reject = dialog.querySelector('.reject');
  const apply = dialog.querySelector('.apply');
  const close = dialog.querySelector('.close');
  const card = statusBadge.closest('.proposal-block');
  confirm.hidden = reject.hidden = false;
  apply.hidden = true;
  close.hidden = true;
  confirm.disabled = reject.disabled = false;
  // Suggested by content, not by the user: confirming needs the warning acknowledged (the
  // server refuses a flagged proposal's confirm without it).
  const acknowledged = el('input', { type: 'checkbox', class: 'acknowledge' });
  const unacknowledged = () => Boolean(block.unrequested) && !acknowledged.checked;
  details.oninput = () => {
    // Edited values are not what was proposed: confirm only after the ERP re-validated them.
    const edited = editable && readEdits(details, block);
    apply.hidden = !edited;
    confirm.disabled = Boolean(edited) || unacknowledged();
  };
  const finished = () => {
    confirm.hidden = reject.hidden = apply.hidden = true;
    close.hidden = false;
    close.focus();
  };
  const decide = (action) => async () => {
    confirm.disabled = reject.disabled = true;
    const path = `api/proposals/${encodeURIComponent(block.id)}/${action}`;
    try {
      const body = action === 'confirm'
        ? { payload_hash: block.payload_hash, acknowledge_warning: Boolean(block.unrequested) && acknowledged.checked }
        : {};
      const outcome = await api('POST', path, body);
      if (outcome.proposal) {
        // The record changed since it was shown: nothing was written. The same change, prepared
        // against the record as it is now, takes this one's place in the conversation and here.
        statusBadge.textContent = 'stale';
        statusBadge.className = 'status status-stale';
        card?.querySelector('.actions')?.remove();
        addOutcomeMessage(outcome.conversation_message);
        const [fresh] = renderBlocks([{ type: 'proposal', ...outcome.proposal }], { onProposal: reviewProposal });
        if (card) card.after(fresh);
        reviewProposal(outcome.proposal, fresh.querySelector('.status'), [el('p', { class: 'error' }, outcome.message)]);
        return;
      }
      result.replaceChildren(outcome.message || outcome.status);
      if (outcome.status === 'checking') {
        // The ERP did not answer: unknown until it can be asked. Never "not done", never retried.
        statusBadge.textContent = statusWords('checking');
        statusBadge.className = 'status status-checking';
        card?.querySelector('.actions')?.remove();
        followChecking(block.id, statusBadge);
        finished();
        return;
      }
      if (outcome.link) result.append(' ', el('a', { href: outcome.link, target: '_blank', rel: 'noopener' }, 'Open in the ERP'));
      if (outcome.erp_refusal) result.append(el('div', { class: 'error' }, outcome.erp_refusal.message));
      statusBadge.textContent = outcome.ok ? (action === 'confirm' ? 'executed' : 'rejected') : 'not done';
      statusBadge.className = `status status-${outcome.ok ? (action === 'confirm' ? 'executed' : 'rejected') : 'failed'}`;
      const button = card?.querySelector('.actions');
      if (button && (outcome.ok || outcome.conversation_message)) button.remove();
      addOutcomeMessage(outcome.conversation_message);
      finished();
    } catch (error) {
      result.textContent = error.message;
      confirm.disabled = reject.disabled = false;
    }
  };
  apply.onclick = async () => {
    const edits = readEdits(details, block);
    if (!edits) return;
    apply.disabled = true;
    try {
      const outcome = await api('POST', `api/proposals/${encodeURIComponent(block.id)}/edit`, edits);
      if (!outcome.proposal) {
        result.replaceChildren(el('span', { class: 'error' }, outcome.message || 'The edit was not applied.'));
        return;
      }
      statusBadge.textContent = 'superseded';
      statusBadge.className = 'status status-superseded';
      card?.querySelector('.actions')?.remove();
      const [fresh] = renderBlocks([{ type: 'proposal', ...outcome.proposal }], { onProposal: reviewProposal });
      if (card) card.after(fresh);
      reviewProposal({ ...outcome.proposal }, fresh.querySelector('.status'));
      dialog.querySelector('.result').textContent = 'Edited and checked by the ERP: a new proposal. Confirm it if it is right.';
    } catch (error) {
      result.textContent = error.message;
    } finally {
      apply.disabled = false;
    }
  };
  close.onclick = () => dialog.close();
  dialog.onclose = () => $('#composer').elements.message.focus();
  confirm.textContent = 'Confirm';
  confirm.onclick = decide('confirm');
  if (block.unrequested) {
    const { message, reason } = block.unrequested;
    result.replaceChildren(
      ...notice,
      el('p', { class: 'unrequested warning' }, message, reason ? el('small', {}, ` (${reason})`) : null),
      el('label', { class: 'acknowledge-warning' }, acknowledged,
        ' I know this change was not in my request, and I still want it'),
    );
    confirm.textContent = 'Yes, make this change';
    confirm.disabled = true;
    acknowledged.onchange = () => { confirm.disabled = unacknowledged(); };
  }
  reject.onclick = decide('reject');
  if (!dialog.open) dialog.showModal();
}

// The model's text as it arrives; the structured response replaces it when the turn is done.
function showStreamed(box, text) {
  let node = box.querySelector('.streamed');
  if (!node) {
    node = el('p', { class: 'streamed', 'aria-live': 'polite' });
    box.append(node);
  }
  node.textContent = text;
}

async function send(message) {
  addUserMessage(message);
  const box = addAgentMessage();
  const progress = box.querySelector('.progress');
  progress.textContent = 'Sending…';
  let streamed = '';
  try {
    await streamChat({ message, conversation_id: conversationId }, (event, data) => {
      if (event === 'progress') {
        // A figure the guard could not trace is being corrected: the text streamed so far goes.
        if (data.type === 'GuardTriggered' && data.guard === 'provenance') streamed = '';
        if (data.label) progress.textContent = data.label;
        showStreamed(box, streamed);
      } else if (event === 'delta') {
        streamed += data.text;
        showStreamed(box, streamed);
      } else if (event === 'response') {
        conversationId = data.conversation_id;
        showResponse(box, data);
      } else if (event === 'error') {
        box.replaceChildren(el('p', { class: 'error' }, data.message));
      }
      box.scrollIntoView({ block: 'end' });
    });
  } catch (error) {
    if (error.status === 401) return showSignIn();
    box.replaceChildren(el('p', { class: 'error' }, error.message));
  }
  loadConversations().catch(sessionEnded);
}

async function scanFile(file) {
  addUserMessage(`Scan ${file.name}`);
  const box = addAgentMessage();
  box.querySelector('.progress').textContent = 'Reading the document…';
  try {
    const data = await uploadScan(file, conversationId);
    conversationId = data.conversation_id;
    showResponse(box, data);
  } catch (error) {
    if (error.status === 401) return showSignIn();
    box.replaceChildren(el('p', { class: 'error' }, error.message));
  }
  box.scrollIntoView({ block: 'end' });
  loadConversations().catch(sessionEnded);
}

$('#scan-file').addEventListener('change', (event) => {
  const file = event.target.files && event.target.files[0];
  event.target.value = '';
  if (file) scanFile(file);
});

$('#composer').addEventListener('submit', (event) => {
  event.preventDefault();
  const field = event.target.elements.message;
  const text = field.value.trim();
  if (!text) return;
  field.value = '';
  send(text);
});

$('#composer').elements.message.addEventListener('keydown', (event) => {
  if (event.key === 'Enter' && !event.shiftKey) {
    event.preventDefault();
    $('#composer').requestSubmit();
  }
});

$('#sign-in').addEventListener('submit', async (event) => {
  event.preventDefault();
  const form = event.target;
  $('#sign-in-error').textContent = '';
  try {
    await ensureCsrf();
    const me = await api('POST', 'api/auth/sign-in', {
      user: form.elements.user.value,
      password: form.elements.password.value,
    });
    form.reset();
    showSignedIn(me);
  } catch (error) {
    $('#sign-in-error').textContent = error.message;
  }
});

$('#sign-in-key').addEventListener('submit', async (event) => {
  event.preventDefault();
  const form = event.target;
  $('#sign-in-key-error').textContent = '';
  try {
    await ensureCsrf();
    const me = await api('POST', 'api/auth/sign-in-key', {
      api_key: form.elements.api_key.value.trim(),
      api_secret: form.elements.api_secret.value.trim(),
    });
    form.reset();
    showSignedIn(me);
  } catch (error) {
    $('#sign-in-key-error').textContent = error.message;
  }
});

$('#sign-out').addEventListener('click', async () => {
  await api('POST', 'api/auth/sign-out');
  conversationId = null;
  $('#messages').replaceChildren();
  showSignIn();
});

$('#new-chat').addEventListener('click', () => {
  conversationId = null;
  $('#messages').replaceChildren();
  document.body.classList.remove('show-history');
  loadConversations().catch(sessionEnded);
});

$('#toggle-history').addEventListener('click', () => document.body.classList.toggle('show-history'));

(async () => {
  try {
    showSignedIn(await api('GET', 'api/auth/me'));
  } catch {
    await ensureCsrf();
    showSignIn();
  }
})();
