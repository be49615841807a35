/** Minimal HTML templating: every interpolated value goes through `escapeHtml`. */
export function escapeHtml(value: unknown): string {
  return String(value ?? '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/** A trusted fragment (already escaped). */
export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

/** Tagged template: values are escaped unless they are `Html` (or arrays of it). */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0] ?? '';
  values.forEach((value, i) => {
    out += render(value) + (strings[i + 1] ?? '');
  });
  return new Html(out);
}

function render(value: unknown): string {
  if (value instanceof Html) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  if (value === undefined || value === null || value === false) return '';
  return escapeHtml(value);
}

/** `2026-11-22 05:40 UTC`, in a <time> element with the exact instant. */
export function timeOf(iso: string | null | undefined, empty = 'Never'): Html {
  if (!iso) return html`<span class="muted">${empty}</span>`;
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return html`<span class="muted">${empty}</span>`;
  const text = `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
  return html`<time datetime="${date.toISOString()}">${text}</time>`;
}
