/**
 * The compatibility report's cost does not grow in statements with the assigned mailboxes: it reads
 * every mailbox's install input and render source in a few set-based statements, then runs the
 * install's own dry run on them, so each mailbox's size is still the dry run's. Real Postgres; the
 * Gmail integration points at the loopback emulator and is never called (dry runs).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { mailboxFits } from '../../src/install/fit.ts';
import { installMailbox } from '../../src/install/install.ts';
import { generateGoogleTenant, startGoogleEmulator, type GoogleEmulator } from '../../emulators/google.ts';
import { useTestContext } from '../helpers/db.ts';
import { connectGoogle, workspaceWithKey } from '../helpers/fixtures.ts';
import { assignToTeammate, insertSignature } from '../helpers/fixtures/signatures.ts';
import { insertSmartField } from '../helpers/fixtures/smartFields.ts';
import { insertTeammate } from '../helpers/fixtures/teammates.ts';

const MAILBOXES = 40;

/** The pool, counting the statements sent through it. */
function counting(pool: pg.Pool): { pool: pg.Pool; count: () => number } {
  let n = 0;
  const proxy = new Proxy(pool, {
    get(target, prop) {
      if (prop === 'query') {
        return (...args: unknown[]) => {
          n++;
          return (target.query as (...a: unknown[]) => unknown)(...args);
        };
      }
      const v = Reflect.get(target, prop, target) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  return { pool: proxy, count: () => n };
}

describe("the compatibility report's cost", () => {
  const t = useTestContext();
  let google: GoogleEmulator;
  let workspaceId: string;
  let gmailId: string;
  let signatureId: string;
  const emails: string[] = [];

  beforeAll(async () => {
    google = await startGoogleEmulator(generateGoogleTenant(1));
    ({ workspaceId } = await workspaceWithKey(t.ctx));
    gmailId = (await connectGoogle(t.ctx, workspaceId, google.url, { category: 'signatures', name: 'Gmail' })).id;
    const title = await insertSmartField(t.ctx.pool, workspaceId, { label: 'Title', slug: 'title' });
    const tree = {
      type: 'stack',
      children: [
        {
          type: 'text',
          tokens: [
            { type: 'textToken', value: 'Regards, ' },
            { type: 'textToken', smartFieldUuid: title },
          ],
        },
      ],
    };
    signatureId = await insertSignature(t.ctx.pool, workspaceId, { name: 'Everyone', draftContent: tree, published: true });
    const other = await insertSignature(t.ctx.pool, workspaceId, { name: 'Sales', draftContent: tree, published: true });
    for (let i = 0; i < MAILBOXES; i++) {
      const tm = await insertTeammate(t.ctx.pool, workspaceId, {
        displayName: `Person ${i}`,
        emails: [{ address: `person${i}@example.test`, primary: true }],
        values: { [title]: 'Engineer '.repeat(i % 7) },
      });
      emails.push(tm.emailIds[0]!);
      await assignToTeammate(t.ctx.pool, workspaceId, signatureId, tm.id, 1);
      // The first teammate's mailbox gets another signature: it is not this one's to measure.
      if (i === 0) await assignToTeammate(t.ctx.pool, workspaceId, other, tm.id, 5);
    }
  });
  afterAll(async () => {
    await google?.close();
  });

  for (const content of ['published', 'draft'] as const) {
    it(`measures ${MAILBOXES} mailboxes (${content}) in a few statements, each the size of its own dry run`, async () => {
      const counted = counting(t.ctx.pool);
      const fits = await mailboxFits({ ...t.ctx, pool: counted.pool }, { workspaceId, signatureId, kind: 'primary', content });
      expect(fits).toHaveLength(MAILBOXES - 1);
      // A constant, whatever the number of mailboxes: each owner's read is one statement for all of them.
      expect(counted.count()).toBeLessThanOrEqual(11);
      for (const fit of fits) {
        const alone = await installMailbox(
          t.ctx,
          { workspaceId, emailId: fit.emailId, kind: 'primary', integrationId: gmailId, forced: false },
          { dryRun: true, measure: true, content, ...(content === 'draft' ? { signatureId } : {}) },
        );
        expect('rendered' in alone && alone.rendered?.html).toBe(fit.html);
      }
      expect(new Set(fits.map((f) => f.size)).size).toBe(7);
      expect(fits.map((f) => f.emailId)).not.toContain(emails[0]);
    });
  }
});
