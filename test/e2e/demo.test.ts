/**
 * `npm start` on a fresh data directory, as a newcomer runs it: the server seeds the sandbox, syncs,
 * publishes and installs by itself; the emulated mailboxes are read through the inspection API, and
 * the Outlook ones (add-in mode: nothing is written to them) as the add-in reads them.
 * Then the CLI changes the emulated directory and a sync through the printed API call carries the
 * change into the mailbox.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readSandboxRecord } from '../../src/sandbox/demo.ts';
import { startReceiver, verify, type Receiver } from '../webhooks/receiver.ts';
import { acmePeople, acmeSharedMailboxes } from '../../emulators/acme.ts';
import { loadAcme } from '../../src/sandbox/seed.ts';
import { childEnv, DEADLINE_MS, HEAVY_TEST_MS, runCli, runProcess, spawnCli, waitFor } from '../helpers/cli.ts';

interface State {
  gmail: Record<string, string>;
  outlook: Record<string, string>;
  slack_dms: { email: string }[];
}

describe('npm start on a fresh data directory', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sigsync-demo-'));
  // Embedded Postgres runs as the postgres user when the tests run as root: it must reach the directory.
  fs.chmodSync(dataDir, 0o755);
  // No ALLOW_INSECURE_OUTBOUND_URLS: sandbox mode alone must allow the loopback receiver below.
  const env = { DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'info', ALLOW_INSECURE_OUTBOUND_URLS: '' };
  let child = spawnCli(['serve'], env);
  let exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const acme = { ...loadAcme(), people: acmePeople(), shared_mailboxes: acmeSharedMailboxes() };
  let receiver: Receiver | undefined;
  const newcomer = 'nora.quinn@acme.test';

  afterAll(async () => {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await exited;
    }
    await receiver?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  /** The address's signature as the Outlook add-in on the web fetches it, with the sandbox's add-in key. */
  const addinFetch = async (email: string) => {
    const record = readSandboxRecord({ DATA_DIR: dataDir })!;
    const r = await fetch(`${record.base_url}/v1/addin/signature?email=${encodeURIComponent(email)}&platform=web&client_version=20260101001.01`, {
      headers: { authorization: `Bearer ${record.addin_key}` },
    });
    expect(r.status, email).toBe(200);
    return ((await r.json()) as { data: { html: string; variants: Record<string, { html: string }> } }).data;
  };

  const state = async () => {
    const record = readSandboxRecord({ DATA_DIR: dataDir });
    if (!record?.control_url) return undefined;
    return (await (await fetch(`${record.control_url}/_sandbox/state`)).json()) as State;
  };

  it(
    'installs the demo signatures and prints the API key and working curl commands',
    async () => {
      const google = acme.people.filter((p) => p.provider === 'google');
      // The Microsoft tenant's shared mailbox is signed in Outlook too (and DMed nowhere).
      const microsoft = [...acme.people.filter((p) => p.provider === 'microsoft'), ...acme.shared_mailboxes];
      const s = await waitFor(
        async () => {
          const st = await state();
          return st && Object.keys(st.gmail).filter((k) => st.gmail[k]).length === google.length - 1 && st.slack_dms.length === acme.people.length
            ? st
            : undefined;
        },
        DEADLINE_MS,
        250,
      );
      // Outlook is in add-in mode, as in a default tenant: no mailbox item is written.
      expect(s.outlook).toEqual({});
      // Event tracking is on in the sandbox: every web link, the banner's too, is a tracked link.
      for (const p of google.filter((x) => !x.no_mailbox)) {
        expect(s.gmail[p.email], p.email).toMatch(/<a href="http:\/\/[^"]+\/c\/[\w-]+"/);
        expect(s.gmail[p.email], p.email).not.toContain(acme.campaign.href);
      }

      const output = await waitFor(async () => (/\/v1\/integrations\/sync\/[0-9a-f-]{36}\n/.test(child.output()) ? child.output() : undefined));
      expect(output).toMatch(new RegExp(`synced ${acme.people.length + acme.shared_mailboxes.length} teammates`));
      expect(output).toMatch(/installed \d+ signatures \(Gmail \(sandbox\): 13, Slack \(sandbox\): 25\)/);
      expect(output).toContain(`${microsoft.length} mailboxes in Outlook (sandbox) wait for the Outlook add-in`);
      expect(output).toMatch(/install failed: hannah\.cole@acme\.test in Gmail \(sandbox\): .*Mail service not enabled/);
      const record = readSandboxRecord({ DATA_DIR: dataDir })!;
      expect(output).toContain(`  Workspace id: ${record.workspace_id}\n`);
      expect(output).toContain(`sync --workspace ${record.workspace_id} --follow`);
      // The welcome's commands carry this server's DATA_DIR: copied into a shell in the project directory, they work.
      const another = /\(another one: (.+ console link --workspace \S+)\)\n/.exec(output)?.[1];
      expect(another).toBe(`DATA_DIR=${dataDir} ./bin/sigsync.js console link --workspace ${record.workspace_id}`);
      const copied = await runProcess('sh', ['-c', another!], { env: childEnv({}), cwd: path.resolve(import.meta.dirname, '../..') });
      expect(copied.code, copied.stderr).toBe(0);
      expect(copied.stdout).toMatch(/\/console\/sign-in\?token=sgl_\w+/);
      expect(output).toMatch(/sandbox mode: webhook endpoints may use http on loopback/);
      const key = /API key:\s+(sgs_\w+)/.exec(output)?.[1];
      const base = /API base URL:\s+(\S+)/.exec(output)?.[1];
      expect(key).toBeDefined();
      const curls = [...output.matchAll(/curl (-X POST )?-H "Authorization: Bearer (sgs_\w+)" (\S+)/g)];
      expect(curls).toHaveLength(4);
      for (const [, post, k, url] of curls) {
        expect(k).toBe(key);
        expect(url!.startsWith(base!)).toBe(true);
        const res = await fetch(url!, { method: post ? 'POST' : 'GET', headers: { authorization: `Bearer ${k}` } });
        expect(res.status, url).toBe(200);
      }
      // The compose-window demo: its page, the served handler with the sandbox's add-in key, and the
      // shared mailbox's signature with its reply variant, which that key reads.
      const composeUrl = /\n {2}(http\S+\/sandbox\/outlook)\n/.exec(output)?.[1];
      expect(composeUrl, 'the compose-window demo').toBe(`${base}/sandbox/outlook`);
      const composePage = await (await fetch(composeUrl!)).text();
      expect(composePage).toContain(`<script src="/addin/launchevent.js?key=${encodeURIComponent(record.addin_key!)}"></script>`);
      expect(composePage).toContain(`data-shared="${acme.shared_mailboxes[0]!.email}"`);
      const shared = await fetch(`${base}/v1/addin/signature?email=${acme.shared_mailboxes[0]!.email}`, {
        headers: { authorization: `Bearer ${record.addin_key}` },
      });
      const sharedBody = (await shared.json()) as { data: { html: string; variants: Record<string, { html: string }> } };
      expect(sharedBody.data.html).toContain(acme.shared_mailboxes[0]!.title);
      expect(Object.keys(sharedBody.data.variants).sort()).toEqual(['internal', 'primary', 'reply']);
      // Every Outlook mailbox's signature, as the add-in fetches it; each fetch turns its variants installed, per platform.
      const outlook: Record<string, string> = {};
      for (const p of microsoft) {
        outlook[p.email] = (await addinFetch(p.email)).html;
        expect(outlook[p.email], p.email).toContain(p.title);
      }
      const status = await runCli(['install', 'status', '--email', acme.shared_mailboxes[0]!.email], { ...env, LOG_LEVEL: 'warn' });
      expect(status.code, status.stderr).toBe(0);
      for (const kind of ['primary', 'reply', 'internal']) expect(status.stdout, kind).toMatch(new RegExp(`\\s${kind}\\s+microsoft_entra\\s+installed\\s`));
      expect(status.stdout).not.toContain('not_supported');
      expect(status.stdout).toMatch(/\nweb\s+20260101001\.01\s+\S.*\scurrent\n/);
      // The demo followed two tracked links (one as a crawler) and recorded a conversion against the other.
      expect(output).toMatch(
        /followed 2 tracked links of grace\.liu@acme\.test's signature: \S+ as a browser \(a person's click\), \S+ as Googlebot \(counted as a bot\)/,
      );
      expect(output).toMatch(/recorded a 490 USD conversion against that click/);
      // The console's sign-in link opens a session of the Acme workspace, once.
      const signIn = /\n {2}(http\S+\/console\/sign-in\?token=(sgl_\w+))\n/.exec(output);
      expect(signIn, 'a console sign-in link').not.toBeNull();
      // Posted as the sign-in page's own form is (a browser says so in Sec-Fetch-Site); from elsewhere it is refused.
      const redeem = () =>
        fetch(`${base}/console/sign-in`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin' },
          body: `token=${signIn![2]}`,
          redirect: 'manual',
        });
      const opened = await redeem();
      expect(opened.status).toBe(303);
      const cookie = opened.headers.get('set-cookie')!.split(';')[0]!;
      const session = (await (await fetch(`${base}/console/api/session`, { headers: { cookie } })).json()) as {
        data: { workspace: { id: string; name: string } };
      };
      expect(session.data.workspace).toEqual({ id: record.workspace_id, name: 'Acme' });
      expect((await redeem()).status).toBe(401);
      const overview = (await (await fetch(`${base}/v1/analytics/overview`, { headers: { authorization: `Bearer ${key}` } })).json()) as {
        data: { totals: Record<string, unknown> };
      };
      expect(output).toMatch(/opened grace\.liu@acme\.test's signature as Gmail shows it/);
      expect(overview.data.totals).toMatchObject({
        // People's figures: the Gmail proxy's view is beside them (proxied_views), not in the CTR's denominator.
        views: 0,
        all_views: 1,
        proxied_views: 1,
        ctr: null,
        clicks: 1,
        all_clicks: 2,
        human_clicks: 1,
        bot_clicks: 1,
        visitors: 1,
        conversions: 1,
        conversion_value: [{ currency: 'USD', value: 490, conversions: 1 }],
      });
      const teammates = (await (await fetch(`${base}/v1/teammates?per_page=100`, { headers: { authorization: `Bearer ${key}` } })).json()) as {
        data: unknown[];
      };
      expect(teammates.data).toHaveLength(acme.people.length + acme.shared_mailboxes.length);

      // The uploaded company logo is in every installed signature, served by /assets/{token}.
      const get = async (p: string) => (await (await fetch(`${base}${p}`, { headers: { authorization: `Bearer ${key}` } })).json()) as { data: any }; // eslint-disable-line @typescript-eslint/no-explicit-any
      const [logo] = (await get('/v1/assets')).data as { file: { url: string; content_type: string }; role: string; signature_template_count: number }[];
      expect(logo).toMatchObject({ role: 'company_logo', signature_template_count: 1, file: { content_type: 'image/png' } });
      for (const p of microsoft) expect(outlook[p.email], p.email).toContain(`<img src="${logo!.file.url}"`);
      for (const p of google.filter((x) => !x.no_mailbox)) expect(s.gmail[p.email], p.email).toContain(`<img src="${logo!.file.url}"`);
      // file.url is PUBLIC_BASE_URL's; with PORT=0 that names port 0, so ask the server at its real address.
      const served = await fetch(`${base}${new URL(logo!.file.url).pathname}`);
      expect([served.status, served.headers.get('content-type')]).toEqual([200, 'image/png']);
      // The emulated payment provider: a subscription and two invoices.
      expect(output).toMatch(/connected the emulated payment provider: a business subscription of 26 seats and 2 invoices/);
      expect((await get('/v1/financial_documents')).data.map((d: { number: string; status: string }) => `${d.number} ${d.status}`)).toEqual([
        'SIG-0002 open',
        'SIG-0001 paid',
      ]);
      expect((await get('/v1/workspace')).data).toMatchObject({
        plan: { tier: 'business', kind: 'paid', status: 'active', billing_interval: 'monthly' },
        seat_count: 26,
      });
    },
    HEAVY_TEST_MS,
  );

  it(
    'sigsync sandbox directory changes the running emulators; the next sync reinstalls that mailbox',
    async () => {
      const who = acme.people.find((p) => p.provider === 'microsoft')!;
      const r = await runCli(['sandbox', 'directory', 'title', who.email, 'Chief Revenue Officer'], env);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain(`changed the title of ${who.email}`);
      const record = readSandboxRecord({ DATA_DIR: dataDir })!;
      const res = await waitFor(
        async () => {
          const x = await fetch(`${record.base_url}/v1/integrations/sync`, { method: 'POST', headers: { authorization: `Bearer ${record.api_key}` } });
          return x.status === 200 ? x : undefined;
        },
        DEADLINE_MS,
        250,
      );
      expect(res.status).toBe(200);
      // What the add-in inserts follows (its render cache keeps an answer at most ADDIN_CACHE_SECONDS).
      await waitFor(async () => (await addinFetch(who.email)).html.includes('Chief Revenue Officer'), DEADLINE_MS, 250);
      // One mailbox instead of the whole state.
      const one = await runCli(['sandbox', 'state', '--email', who.email.toUpperCase()], env);
      expect(one.code, one.stderr).toBe(0);
      const mailbox = JSON.parse(one.stdout);
      expect(Object.keys(mailbox)).toEqual(['email', 'gmail', 'outlook', 'slack_dms', 'directory']);
      // No OWA write in add-in mode: the emulated mailbox holds no Outlook signature.
      expect(mailbox).toMatchObject({
        email: who.email.toLowerCase(),
        gmail: null,
        outlook: null,
        directory: { microsoft: { title: 'Chief Revenue Officer' }, google: null },
      });
      expect(mailbox.slack_dms.every((d: { email: string }) => d.email === who.email.toLowerCase())).toBe(true);
      expect(one.stdout.length).toBeLessThan(20_000);
      const nobody = await runCli(['sandbox', 'state', '--email', 'nobody@nowhere.test'], env);
      expect(nobody.code).toBe(2);
      expect(nobody.stderr).toBe('--email: the sandbox has no mailbox nobody@nowhere.test (sigsync sandbox state lists them all)\n');
    },
    HEAVY_TEST_MS,
  );

  it(
    'delivers webhook events to a loopback receiver in sandbox mode; the directory hint names the real key and base URL',
    async () => {
      const record = readSandboxRecord({ DATA_DIR: dataDir })!;
      const cli = { ...env, LOG_LEVEL: 'warn' };
      receiver = await startReceiver();
      const add = await runCli(['webhook', 'add', '--workspace', record.workspace_id, '--url', `${receiver.url}/hooks`, '--events', 'teammate.created'], cli);
      expect(add.stderr).toBe('');
      expect(add.code).toBe(0);
      const secret = /signing secret\s+(whsec_\S+)/.exec(add.stdout)![1]!;

      const r = await runCli(['sandbox', 'directory', 'add', newcomer, '--name', 'Nora Quinn', '--title', 'Solutions Engineer'], cli);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain(`Run a sync to pick it up: curl -X POST -H "Authorization: Bearer ${record.api_key}" ${record.base_url}/v1/integrations/sync`);
      await waitFor(
        async () => {
          const x = await fetch(`${record.base_url}/v1/integrations/sync`, { method: 'POST', headers: { authorization: `Bearer ${record.api_key}` } });
          return x.status === 200;
        },
        DEADLINE_MS,
        250,
      );
      const got = await waitFor(async () => receiver!.received.find((q) => q.body.includes(newcomer)), DEADLINE_MS, 250);
      expect(verify(secret, got)).toMatchObject({ type: 'teammate.created', teammate: { display_name: 'Nora Quinn' } });

      const deliveries = await runCli(['webhook', 'list', '--workspace', record.workspace_id], cli);
      const endpointId = /^([0-9a-f-]{36})\s/m.exec(deliveries.stdout)![1]!;
      const listed = await runCli(['webhook', 'deliveries', endpointId], cli);
      expect(listed.stdout).toMatch(/teammate\.created\s+succeeded\s+1\s+succeeded\s+204|teammate\.created\s+succeeded\s+1\s+succeeded\s+200/);
    },
    HEAVY_TEST_MS,
  );

  it(
    'a restart keeps the people added by hand: the next sync does not remove them',
    async () => {
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      child = spawnCli(['serve'], env);
      exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      const output = await waitFor(
        async () => (/is ready\.[\s\S]*\/v1\/integrations\/sync\/[0-9a-f-]{36}\n/.test(child.output()) ? child.output() : undefined),
        DEADLINE_MS,
        250,
      );
      expect(output).toMatch(/restored 2 directory change\(s\) made with sigsync sandbox directory/);
      const s = await state();
      expect((s as unknown as { directory: { google: { email: string }[] } }).directory.google.map((u) => u.email)).toContain(newcomer);
      const record = readSandboxRecord({ DATA_DIR: dataDir })!;
      const teammates = (await (
        await fetch(`${record.base_url}/v1/teammates?per_page=100`, { headers: { authorization: `Bearer ${record.api_key}` } })
      ).json()) as { data: unknown[] };
      expect(teammates.data).toHaveLength(acme.people.length + acme.shared_mailboxes.length + 1);
      expect(JSON.stringify(teammates.data)).toContain('Nora Quinn');

      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    },
    HEAVY_TEST_MS,
  );
});
