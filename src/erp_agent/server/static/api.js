// The API client: CSRF double submit on unsafe methods, and the SSE chat stream over fetch
// (EventSource cannot POST).

// The app's root, wherever it is served (ERP_AGENT_ROOT_PATH, a proxy's prefix): this module is
// <root>/static/api.js, so its parent folder is the root, whatever page imported it.
const ROOT = new URL('..', import.meta.url);

// An API path ("api/chat"; a leading slash is dropped) as a URL under the app's root.
export function appUrl(path) {
  return new URL(String(path).replace(/^\/+/, ''), ROOT).href;
}

function cookie(name) {
  const hit = document.cookie.split('; ').find((c) => c.startsWith(name + '='));
  return hit ? decodeURIComponent(hit.slice(name.length + 1)) : '';
}

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

export async function api(method, path, body) {
  const headers = { Accept: 'application/json' };
  if (method !== 'GET') {
    headers['X-CSRF-Token'] = cookie('erp_agent_csrf');
  }
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
  }
  const response = await fetch(appUrl(path), {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: 'same-origin',
  });
  const data = response.headers.get('content-type')?.includes('json') ? await response.json() : null;
  if (!response.ok) {
    const detail = data && data.detail;
    const text = typeof detail === 'string' ? detail : JSON.stringify(detail || response.statusText);
    throw new ApiError(response.status, text);
  }
  return data;
}

export async function ensureCsrf() {
  if (!cookie('erp_agent_csrf')) {
    await api('GET', 'api/auth/csrf');
  }
}

// POST /api/chat and call on(event, data) for each Server-Sent Event as it arrives.
export async function streamChat(body, on) {
  const response = await fetch(appUrl('api/chat'), {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Accept: 'text/event-stream',
      'X-CSRF-Token': cookie('erp_agent_csrf'),
    },
    body: JSON.stringify(body),
    credentials: 'same-origin',
  });
  if (!response.ok) {
    const data = await response.json().catch(() => ({}));
    throw new ApiError(response.status, data.detail || response.statusText);
  }
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    let cut;
    while ((cut = buffer.indexOf('\n\n')) >= 0) {
      const chunk = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      let event = 'message';
      const data = [];
      for (const line of chunk.split('\n')) {
        if (line.startsWith('event: ')) event = line.slice(7);
        else if (line.startsWith('data: ')) data.push(line.slice(6));
      }
      if (data.length) on(event, JSON.parse(data.join('\n')));
    }
  }
}

// POST a file to /api/documents/scan as the request body; the answer is a turn response.
export async function uploadScan(file, conversationId) {
  const query = new URLSearchParams({ filename: file.name || 'upload' });
  if (conversationId) query.set('conversation_id', conversationId);
  const response = await fetch(appUrl(`api/documents/scan?${query}`), {
    method: 'POST',
    headers: {
      Accept: 'application/json',
      'Content-Type': file.type || 'application/octet-stream',
      'X-CSRF-Token': cookie('erp_agent_csrf'),
    },
    body: file,
    credentials: 'same-origin',
  });
  const data = await response.json().catch(() => null);
  if (!response.ok) {
    const detail = data && data.detail;
    throw new ApiError(response.status, typeof detail === 'string' ? detail : response.statusText);
  }
  return data;
}
