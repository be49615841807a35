/**
 * Minimal HTML templating for the server-rendered pages of every service (the portal, the
 * token service's sign-in): every interpolated value goes through `escapeHtml` unless it is
 * already a trusted fragment (`Html`).
 */
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

/** Tagged template: values are escaped unless they are `Html` (or arrays of it); `undefined`, `null` and `false` render nothing. */
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

/**
 * A long token (an email, an address) as one `.token` span that a line may break after its `@`
 * (`<wbr>`), where a reader expects an email to break, and nowhere else on a desktop's width: a
 * table column then needs only the longer half of an email, not all of it.
 */
export function token(value: string): Html {
  return new Html(`<span class="token">${value.split('@').map(escapeHtml).join('@<wbr>')}</span>`);
}
