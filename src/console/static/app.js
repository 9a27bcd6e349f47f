// The console's entry module: reads the session (workspace, CSRF token), marks the current page in
// the navigation, wires sign-out, then hands the page to its module (integrations.js, ...).
import { api, h, setCsrf, notice } from './lib.js';

const [, , page, id] = location.pathname.split('/');
const content = document.getElementById('content');
const title = document.getElementById('title');

async function main() {
  // The session and the page's module load together (the shell preloads the module).
  const [{ data }, mod] = await Promise.all([api('/console/api/session'), import(`./${page}.js`)]);
  setCsrf(data.csrf_token);
  document.getElementById('workspace').textContent = data.workspace.name;
  for (const a of document.querySelectorAll('nav a')) if (a.dataset.page === page) a.setAttribute('aria-current', 'page');
  document.getElementById('sign-out').addEventListener('click', async () => {
    await api('/console/sign-out', { method: 'POST' });
    location.assign('/console/integrations');
  });
  await mod.render({ content, title, id: id ? decodeURIComponent(id) : undefined, workspace: data.workspace });
  document.body.dataset.ready = page;
}

main().catch((e) => {
  title.textContent = 'Something went wrong';
  notice(content, e.message, 'error');
  content.append(h('p', {}, 'Reload the page to try again.'));
});
