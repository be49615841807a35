// Settings → Credentials and a service account's quota (CSP: script-src 'self'): each form
// sends its change through the REST API with the CSRF header, then the page reloads.
import { api, messageOf } from './portal-api.js';

(function credentialHygiene() {
  const $ = (selector, root = document) => root.querySelector(selector);

  function quotaOf(form) {
    return {
      per_minute: Number($('[name="per_minute"]', form).value),
      mode: $('[name="mode"]', form).value,
    };
  }

  function submitWith(form, send) {
    const error = $('[role="alert"]', form);
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      error.hidden = true;
      for (const button of form.querySelectorAll('button')) button.disabled = true;
      const result = await send();
      for (const button of form.querySelectorAll('button')) button.disabled = false;
      if (result.status === 200) {
        window.location.reload();
        return;
      }
      error.textContent = messageOf(result);
      error.hidden = false;
    });
  }

  const policy = $('form[data-form="credential-policy"]');
  if (policy) {
    submitWith(policy, () => {
      const maxAge = $('[name="secret_max_age_days"]', policy).value.trim();
      return api('PATCH', '/api/v1/settings/credentials', {
        secret_max_age_days: maxAge === '' ? null : Number(maxAge),
        leak_response: $('[name="leak_response"]:checked', policy).value,
        default_quota: quotaOf(policy),
      });
    });
  }

  const quota = $('form[data-form="quota"]');
  if (quota) {
    const path = `/api/v1/service-accounts/${encodeURIComponent(quota.dataset.clientId)}`;
    submitWith(quota, () => api('PATCH', path, { quota: quotaOf(quota) }));
    const clear = $('[data-action="clear-quota"]', quota);
    if (clear)
      clear.addEventListener('click', async () => {
        const result = await api('PATCH', path, { quota: null });
        if (result.status === 200) window.location.reload();
        else {
          const error = $('[role="alert"]', quota);
          error.textContent = messageOf(result);
          error.hidden = false;
        }
      });
  }
})();
