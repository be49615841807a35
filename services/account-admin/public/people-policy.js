// Settings → Policy: saves the people policy through the API (portal-api.js: the session's CSRF
// token, and the step-up the API may ask for).
import { api, messageOf } from './portal-api.js';

const form = document.getElementById('people-policy');
if (form) {
  const checkbox = document.getElementById('require-admin-second-factor');
  const error = document.getElementById('policy-error');
  const status = document.getElementById('policy-status');
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    error.hidden = true;
    status.textContent = '';
    const button = form.querySelector('button');
    button.disabled = true;
    const result = await api('PATCH', '/api/v1/settings/people', {
      require_admin_second_factor: checkbox.checked,
    });
    button.disabled = false;
    if (result.status === 200) {
      checkbox.checked = result.body.require_admin_second_factor;
      status.textContent = checkbox.checked
        ? 'Saved: Account Admins need a second factor.'
        : 'Saved: Account Admins may sign in with a password alone.';
      return;
    }
    error.textContent = messageOf(result);
    error.hidden = false;
  });
}
