// Markdown for answers: marked (vendored, MIT) with raw HTML escaped and only safe link targets.
import { Marked } from './vendor/marked.esm.js';

const ESCAPES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text) {
  return String(text).replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

export function safeUrl(href) {
  try {
    const url = new URL(href, window.location.href);
    return ['http:', 'https:', 'mailto:'].includes(url.protocol) ? url.href : null;
  } catch {
    return null;
  }
}

const marked = new Marked({
  gfm: true,
  breaks: false,
  renderer: {
    html(token) {
      return escapeHtml(token.text);
    },
    link(token) {
      const text = this.parser.parseInline(token.tokens);
      const href = safeUrl(token.href);
      if (!href) return text;
      return `<a href="${escapeHtml(href)}" target="_blank" rel="noopener noreferrer">${text}</a>`;
    },
    image(token) {
      return escapeHtml(token.text || '');
    },
  },
});

export function renderMarkdown(text) {
  const box = document.createElement('div');
  box.className = 'md';
  box.innerHTML = marked.parse(text || '');
  return box;
}
