/**
 * Every dashboard_url the API gives points at something that exists: an integration's page of the
 * console, or the remediation guide served at GET /help/remediation (an HTML page) at a section it has
 * (src/dashboard.ts, docs/remediation.md).
 */
import { describe, expect, it } from 'vitest';
import { dashboardUrl, type DashboardTarget } from '../../src/dashboard.ts';
import { seedIntegration, useApi } from './helpers.ts';

describe('dashboard URLs', () => {
  const api = useApi();
  /** Fetches `url` from the test server (its host is the config's, port 0 in tests) and checks the section exists. */
  const resolves = async (url: string) => {
    const u = new URL(url);
    const r = await fetch(`${api.base}${u.pathname}${u.search}`);
    if (u.pathname.startsWith('/console/')) {
      // A console page: without a session it answers its sign-in page, not a 404.
      expect(r.status, url).toBe(401);
      expect(r.headers.get('content-type')).toMatch(/^text\/html/);
      expect(await r.text()).toContain('Sign in to the console');
      return;
    }
    expect(r.status, url).toBe(200);
    // The guide is a page: HTML, under the console's policy (no script runs), each section a heading with its id.
    expect(r.headers.get('content-type')).toMatch(/^text\/html/);
    expect(r.headers.get('content-security-policy')).toContain("script-src 'self'");
    const anchor = u.hash.slice(1);
    expect(anchor, url).not.toBe('');
    expect(await r.text()).toMatch(new RegExp(`<h2 id="${anchor}">${anchor}</h2>`));
  };

  it("the remediation of an error and an integration's dashboard_url open a page that exists", async () => {
    const noDirectory = await api.call('POST', '/v1/integrations/sync');
    expect(noDirectory.status).toBe(422);
    await resolves(noDirectory.body.remediation.dashboard_url);
    const id = await seedIntegration(api.t.ctx.pool, api.ws, { status: 'access_lost' });
    const list = await api.call('GET', '/v1/integrations');
    const integration = list.body.data.find((i: { id: string }) => i.id === id);
    expect(integration.dashboard_url).toContain(id);
    await resolves(integration.dashboard_url);
  });

  it('the guide is rendered, not raw Markdown, and no longer says the console does not exist', async () => {
    const html = await (await fetch(`${api.base}/help/remediation`)).text();
    expect(html).toMatch(/^<!doctype html>/);
    expect(html).toContain('<h1 id="fixing-what-the-api-points-at">Fixing what the API points at</h1>');
    expect(html).toContain('<code>sigsync install list --status failed</code>');
    expect(html).not.toMatch(/^#+ /m);
    expect(html).not.toMatch(/until the service has a browser console/i);
    expect(html).toContain('<link rel="stylesheet" href="/console/static/console.css">');
  });

  it('every page the builder knows has its section', async () => {
    const id = '0b5c9a2e-0000-4000-8000-000000000000';
    const targets: DashboardTarget[] = [
      { page: 'integrations' },
      { page: 'integration', id },
      { page: 'teammate', id },
      { page: 'signature', id },
      { page: 'assets' },
      { page: 'event_tracking' },
    ];
    for (const target of targets) await resolves(dashboardUrl(api.t.ctx.config.PUBLIC_BASE_URL, target));
  });
});
