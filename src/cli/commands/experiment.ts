/**
 * `sigsync experiment list|show|create|start|stop|promote`: banner experiments on a campaign
 * (docs/experiments.md), through the same owner and rules as the API; every write is in the audit
 * trail with the CLI's actor. Values from the database are printed escaped (src/output.ts).
 */
import fs from 'node:fs/promises';
import type { Command } from 'commander';
import { out, table } from '../../output.ts';
import { UsageError } from '../errors.ts';
import { cliActor, requireUuid, withContext } from './admin.ts';
import type { AppContext } from '../../context.ts';
import type pg from 'pg';

/** Runs a write in one transaction with its audit entry; an API error (404, 422) is a usage error naming the field. */
async function audited<T extends { id: string }>(
  workspaceId: string,
  action: string,
  target: string | null,
  fn: (c: pg.PoolClient, ctx: AppContext) => Promise<T>,
  details?: Record<string, unknown>,
): Promise<T> {
  const [{ withTx }, { recordAudit }, { ApiError }] = await Promise.all([import('../../db/tx.ts'), import('../../db/audit.ts'), import('../../errors.ts')]);
  return withContext(async (ctx) => {
    try {
      return await withTx(ctx.pool, async (c) => {
        const result = await fn(c, ctx);
        await recordAudit(c, workspaceId, cliActor(), { action, targetKind: 'experiment', target: target ?? result.id, ...(details ? { details } : {}) });
        return result;
      });
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      const details = (e.extra.details ?? []).map((d) => `${d.field}: ${d.message}`);
      throw new UsageError([e.message, ...details].join('\n'));
    }
  });
}

const pct = (x: number) => `${(x * 100).toFixed(2)}%`;

/** Prints an experiment with its arms and results. */
async function show(ctx: AppContext, workspaceId: string, id: string): Promise<void> {
  const [{ getExperiment }, { withResults }] = await Promise.all([import('../../experiments/queries.ts'), import('../../api/v1/experiments.ts')]);
  const e = await getExperiment(ctx.pool, workspaceId, id);
  if (!e) throw new UsageError(`no experiment ${id} in workspace ${workspaceId}`);
  const x = await withResults(ctx.pool, e);
  out(`experiment ${x.id}: ${x.name}`);
  out(`campaign   ${x.marketing_campaign_id}`);
  out(
    `status     ${x.status} (mode ${x.mode}, unit sender, metric human clicks per exposure: ${x.exposure === 'human_views' ? 'human views' : 'sender-days'})`,
  );
  out(`window     ${x.started_at ?? 'not started'} to ${x.concluded_at ?? x.end_time ?? 'open'}`);
  const byId = new Map(x.results.arms.map((a) => [a.id, a]));
  table(
    x.arms.map((a) => {
      const r = byId.get(a.id);
      return {
        arm: a.id,
        name: a.name,
        weight: a.weight,
        senders: r?.senders,
        exposures: r?.exposures,
        clicks: r?.clicks,
        rate: r ? `${pct(r.rate)} [${pct(r.interval.low)}, ${pct(r.interval.high)}]` : null,
        lift: r?.lift ? `${pct(r.lift.estimate)} [${pct(r.lift.low)}, ${pct(r.lift.high)}]` : null,
        chance_to_win: r ? pct(r.chance_to_win) : null,
        expected_loss: r ? pct(r.expected_loss) : null,
      };
    }),
    ['arm', 'name', 'weight', 'senders', 'exposures', 'clicks', 'rate', 'lift', 'chance_to_win', 'expected_loss'],
  );
  const d = x.results.decision;
  out(`decision   ${d.status}${d.winner ? ` (${d.winner})` : ''}: ${d.reason}`);
  if (x.results.srm.mismatch) out(`split      does not match the weights (p = ${x.results.srm.p_value.toPrecision(3)})`);
  if (x.results.exposures_needed_per_arm !== null) out(`needs      about ${Math.ceil(x.results.exposures_needed_per_arm)} more exposures per arm`);
  if (x.promoted_arm_id) out(`promoted   ${x.promoted_arm_id} at ${x.promoted_at}`);
}

async function readArms(file: string): Promise<unknown> {
  try {
    return JSON.parse(await fs.readFile(file, 'utf8'));
  } catch (e) {
    throw new UsageError(`--arms: cannot read ${file} as JSON: ${(e as Error).message}`);
  }
}

export function experimentCommands(program: Command): void {
  const experiment = program.command('experiment').description('Banner experiments on a campaign: split its banner between arms, analyse, promote.');
  readCommands(experiment);
  createCommand(experiment);
  stateCommands(experiment);
}

/** `experiment list` and `experiment show`. */
function readCommands(experiment: Command): void {
  experiment
    .command('list')
    .description("List the workspace's experiments, or one campaign's, newest first.")
    .requiredOption('--workspace <id>', 'workspace id')
    .option('--campaign <id>', 'only this campaign')
    .action(async (opts: { workspace: string; campaign?: string }) => {
      const workspaceId = requireUuid(opts.workspace, '--workspace');
      const campaignId = opts.campaign === undefined ? null : requireUuid(opts.campaign, '--campaign');
      const { listExperiments } = await import('../../experiments/queries.ts');
      await withContext(async (ctx) => {
        const { rows } = await listExperiments(ctx.pool, workspaceId, campaignId, { limit: 1000, offset: 0 });
        table(
          rows.map((e) => ({
            id: e.id,
            campaign: e.campaign_id,
            name: e.name,
            status: e.status,
            mode: e.mode,
            winner: e.winner_arm_id,
            started_at: e.started_at,
            concluded_at: e.concluded_at,
          })),
          ['id', 'campaign', 'name', 'status', 'mode', 'winner', 'started_at', 'concluded_at'],
        );
      });
    });

  experiment
    .command('show <id>')
    .description("An experiment with each arm's figures (rate with its interval, lift, chance to win, expected loss) and the decision.")
    .requiredOption('--workspace <id>', 'workspace id')
    .action(async (id: string, opts: { workspace: string }) => {
      const workspaceId = requireUuid(opts.workspace, '--workspace');
      await withContext((ctx) => show(ctx, workspaceId, requireUuid(id, 'ID')));
    });
}

/** `experiment create`: a draft from a JSON file of arms. */
function createCommand(experiment: Command): void {
  experiment
    .command('create')
    .description('Create a draft experiment on a campaign.')
    .requiredOption('--workspace <id>', 'workspace id')
    .requiredOption('--campaign <id>', 'the campaign')
    .requiredOption('--name <name>', "the experiment's name")
    .requiredOption(
      '--arms <file>',
      'a JSON file with 2 to 4 arms: [{"name": "A", "weight": 1, "content": {...banner tree...}}, ...]; the first is the control',
    )
    .option('--mode <mode>', 'ab (each arm its banner) or aa (the same banner: a check of the method)', 'ab')
    .option('--auto-promote', 'promote the winner when the analysis declares one')
    .option('--start-time <iso>', 'start at this time (the campaign tick starts it)')
    .option('--end-time <iso>', 'conclude at this time')
    .action(
      async (opts: {
        workspace: string;
        campaign: string;
        name: string;
        arms: string;
        mode: string;
        autoPromote?: boolean;
        startTime?: string;
        endTime?: string;
      }) => {
        const workspaceId = requireUuid(opts.workspace, '--workspace');
        const campaignId = requireUuid(opts.campaign, '--campaign');
        const [{ ExperimentCreate }, { fieldPath }, { createFromBody }] = await Promise.all([
          import('../../api/v1/experimentSchemas.ts'),
          import('../../errors.ts'),
          import('../../api/v1/experiments.ts'),
        ]);
        const body = {
          experiment: {
            name: opts.name,
            mode: opts.mode,
            arms: await readArms(opts.arms),
            auto_promote: opts.autoPromote ?? false,
            start_time: opts.startTime,
            end_time: opts.endTime,
          },
        };
        const parsed = ExperimentCreate.safeParse(body);
        if (!parsed.success) throw new UsageError(parsed.error.issues.map((i) => `${fieldPath(i.path) || 'experiment'}: ${i.message}`).join('\n'));
        const made = await audited(
          workspaceId,
          'experiment.create',
          null,
          async (c) => (await createFromBody(c, workspaceId, campaignId, parsed.data.experiment)).experiment,
          {
            marketing_campaign_id: campaignId,
          },
        );
        out(`experiment ${made.id} created (draft); start it with: sigsync experiment start ${made.id} --workspace ${workspaceId}`);
      },
    );
}

/** `experiment start`, `stop` and `promote`: the moves of an experiment's state. */
function stateCommands(experiment: Command): void {
  for (const [name, description] of [
    ['start', "Start a draft: each sender's signature shows its arm's banner (reinstalls the campaign's signatures)."],
    ['stop', "Stop a draft or running experiment: the campaign's banner shows again."],
  ] as const) {
    experiment
      .command(`${name} <id>`)
      .description(description)
      .requiredOption('--workspace <id>', 'workspace id')
      .action(async (id: string, opts: { workspace: string }) => {
        const workspaceId = requireUuid(opts.workspace, '--workspace');
        const experimentId = requireUuid(id, 'ID');
        const { runExperimentAction } = await import('../../experiments/states.ts');
        const e = await audited(workspaceId, `experiment.${name}`, experimentId, (c) => runExperimentAction(c, workspaceId, experimentId, name, new Date()));
        out(`experiment ${e.id} ${e.status}`);
      });
  }

  experiment
    .command('promote <id>')
    .description("The campaign continues with this arm's banner; its signatures are reinstalled.")
    .requiredOption('--workspace <id>', 'workspace id')
    .requiredOption('--arm <id>', 'the arm to promote')
    .action(async (id: string, opts: { workspace: string; arm: string }) => {
      const workspaceId = requireUuid(opts.workspace, '--workspace');
      const experimentId = requireUuid(id, 'ID');
      const armId = requireUuid(opts.arm, '--arm');
      const { runPromotion } = await import('../../experiments/states.ts');
      const e = await audited(workspaceId, 'experiment.promote', experimentId, (c) => runPromotion(c, workspaceId, experimentId, armId, new Date()), {
        arm_id: armId,
      });
      out(`experiment ${e.id}: arm ${armId} promoted; the campaign shows its banner`);
    });
}
