/**
 * The console's mailbox routes (session auth and CSRF from src/api/console.ts; the session's
 * workspace only):
 *
 *   GET  /console/api/mailboxes?q=            up to 20 addresses that contain q
 *   GET  /console/api/mailboxes/:address      the teammate, each installation per destination and
 *                                             kind, with the provider's last answer, and each
 *                                             Outlook add-in platform that fetched its signature
 *                                             (src/addin/clients.ts)
 *   POST /console/api/mailboxes/:address/replay  {kind?, dry_run?}: the replay report
 *                                             (src/install/replay.ts), with the HTML before and after,
 *                                             and `next_replay_at`. A replay that installs writes to
 *                                             the provider: one mailbox replays once per
 *                                             CONSOLE_REPLAY_COOLDOWN_SECONDS (429 with Retry-After
 *                                             and the time it may run again); a dry run is not limited
 *                                             but by the console's action limit. Recorded in the
 *                                             audit trail with its outcome, right after the replay.
 *   GET  /console/api/signatures/:id/preview?teammate=&kind=   the published signature rendered for
 *                                             one teammate (no tracked links)
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { AppContext } from '../context.ts';
import { SIGNATURE_KINDS, type SignatureKind } from '../domain.ts';
import { ApiError, detail } from '../errors.ts';
import { findMailboxes, replayMailbox } from '../install/replay.ts';
import { redactDeep } from '../log.ts';
import { renderForAddress } from '../analytics/addressRender.ts';
import { installationsOfEmail } from '../installations/queries.ts';
import { signatureAndTeammateExist } from '../signatures/queries.ts';
import { searchAddresses } from '../teammates/queries.ts';
import { clientVersionsOf } from '../addin/clients.ts';
import { auditConsole } from './consoleSignIn.ts';
import { rateLimited } from './rateLimits.ts';

const SEARCH_LIMIT = 20;
/** A transparent pixel: what a tracked view image shows in a console preview. */
const BLANK = 'data:image/gif;base64,R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7';

/**
 * The HTML as the console previews it: tracked view images (`PUBLIC_BASE_URL/v/...`) become a blank
 * pixel, so that looking at a signature in the console does not count as a view of it.
 */
export function previewHtml(html: string | null, publicBaseUrl: string): string | null {
  if (html === null) return null;
  const prefix = `${publicBaseUrl.replace(/\/+$/, '')}/v/`.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return html.replace(new RegExp(`(<img\\b[^>]*\\bsrc=")${prefix}[^"]*"`, 'g'), `$1${BLANK}"`);
}
const ReplayBody = z.object({ kind: z.enum(SIGNATURE_KINDS as [SignatureKind, ...SignatureKind[]]).optional(), dry_run: z.boolean().optional() }).strict();

async function mailboxOf(app: AppContext, workspaceId: string, address: string) {
  const [mailbox] = await findMailboxes(app.pool, address, workspaceId);
  if (!mailbox) throw ApiError.notFound('mailbox');
  return mailbox;
}

const PreviewQuery = z.object({ teammate: z.uuid(), kind: z.enum(SIGNATURE_KINDS as [SignatureKind, ...SignatureKind[]]).optional() });

/**
 * When each mailbox may be replayed again (by `workspace:email id`), in this API process. Checked and
 * set before the replay starts, with no await between, so concurrent replays of one mailbox get one run.
 */
class Cooldown {
  private readonly until = new Map<string, number>();
  private readonly ms: number;
  constructor(ms: number) {
    this.ms = ms;
  }

  /** Claims the mailbox now; answers when the claim ends, or the time it may run again when taken. */
  claim(key: string, now = Date.now()): { ok: true; next: Date } | { ok: false; next: Date } {
    const until = this.until.get(key);
    if (until !== undefined && until > now) return { ok: false, next: new Date(until) };
    if (this.until.size > 10_000) for (const [k, t] of this.until) if (t <= now) this.until.delete(k);
    this.until.set(key, now + this.ms);
    return { ok: true, next: new Date(now + this.ms) };
  }
}

export function consoleMailboxRoutes(api: FastifyInstance, app: AppContext): void {
  previewRoute(api, app);
  mailboxRoutes(api, app);
}

function previewRoute(api: FastifyInstance, app: AppContext): void {
  // A signature's published content rendered for one teammate, as an install would write it but
  // without tracked links (a preview is no mailbox). 404 for another workspace's signature or teammate.
  api.get('/signatures/:id/preview', async (req) => {
    const { id } = req.params as { id: string };
    const q = PreviewQuery.safeParse(req.query);
    if (!q.success) throw ApiError.validation(q.error.issues.map((i) => detail(i.path.join('.') || 'query', i.code, i.message)));
    const found = await signatureAndTeammateExist(app.pool, req.workspaceId, z.uuid().safeParse(id).success ? id : null, q.data.teammate);
    if (!found) throw ApiError.notFound('signature or teammate');
    const r = await renderForAddress(app, { workspaceId: req.workspaceId, teammateId: q.data.teammate, signatureId: id, kind: q.data.kind ?? 'primary' });
    return {
      data: {
        available: r.available,
        reason: r.unavailableReason ?? null,
        html: r.available ? previewHtml(r.html, app.config.PUBLIC_BASE_URL) : null,
        values: r.values,
      },
    };
  });
}

function mailboxRoutes(api: FastifyInstance, app: AppContext): void {
  const cooldown = new Cooldown(app.config.CONSOLE_REPLAY_COOLDOWN_SECONDS * 1000);

  api.get('/mailboxes', async (req) => {
    const q = String((req.query as { q?: unknown }).q ?? '')
      .trim()
      .toLowerCase()
      .slice(0, 320);
    if (!q) return { data: [] };
    return { data: await searchAddresses(app.pool, req.workspaceId, q, SEARCH_LIMIT) };
  });

  api.get('/mailboxes/:address', async (req) => {
    const mailbox = await mailboxOf(app, req.workspaceId, (req.params as { address: string }).address);
    const rows = await installationsOfEmail(app.pool, req.workspaceId, mailbox.id);
    const clients = await clientVersionsOf(app, req.workspaceId, mailbox);
    return {
      data: {
        address: mailbox.address,
        teammate: { id: mailbox.teammate_id, display_name: mailbox.display_name, removed: !!mailbox.deleted_at },
        installations: redactDeep(rows),
        addin_clients: clients.map((c) => ({
          platform: c.platform,
          client_version: c.client_version,
          last_fetched_at: c.last_fetched_at,
          version: c.served_hash,
          current: c.current,
        })),
      },
    };
  });

  api.post('/mailboxes/:address/replay', async (req, reply) => {
    const parsed = ReplayBody.safeParse(req.body ?? {});
    if (!parsed.success) throw ApiError.validation(parsed.error.issues.map((i) => detail(i.path.join('.') || 'body', i.code, i.message)));
    const mailbox = await mailboxOf(app, req.workspaceId, (req.params as { address: string }).address);
    const dryRun = parsed.data.dry_run ?? false;
    const kind = parsed.data.kind ?? 'primary';
    let next: Date | null = null;
    if (!dryRun && app.config.CONSOLE_REPLAY_COOLDOWN_SECONDS > 0) {
      const claim = cooldown.claim(`${req.workspaceId}:${mailbox.id}`);
      if (!claim.ok) {
        const ms = claim.next.getTime() - Date.now();
        reply.header('retry-after', Math.max(1, Math.ceil(ms / 1000)));
        throw rateLimited(
          `${mailbox.address} was replayed less than ${app.config.CONSOLE_REPLAY_COOLDOWN_SECONDS} s ago; it may be replayed again at ${claim.next.toISOString()}.`,
          ms,
        );
      }
      next = claim.next;
    }
    const report = await replayMailbox(app, mailbox, { kind, dryRun });
    await auditConsole(app, req, {
      action: dryRun ? 'mailbox.replay_dry_run' : 'mailbox.replay',
      targetKind: 'mailbox',
      target: mailbox.address,
      details: { kind, installs: report.installs.map((i) => ({ integration: i.integration.name, kind: i.integration.kind, outcome: i.outcome })) },
    });
    const base = app.config.PUBLIC_BASE_URL;
    return {
      data: {
        ...report,
        next_replay_at: next,
        installs: report.installs.map((i) => ({ ...i, previous_html: previewHtml(i.previous_html, base), html: previewHtml(i.html, base) })),
      },
    };
  });
}
