/** The v1 routes. Each resource registers its routes from its own file. */
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../context.ts';
import { workspaceRoutes } from './workspace.ts';
import { integrationRoutes } from './integrations.ts';
import { signatureRoutes } from './signatures.ts';
import { signatureCompatibilityRoutes } from './signatureCompatibility.ts';
import { assignmentRoutes } from './assignments.ts';
import { smartFieldRoutes } from './smartFields.ts';
import { teammateRoutes } from './teammates.ts';
import { groupRoutes } from './groups.ts';
import { folderRoutes } from './folders.ts';
import { campaignRoutes } from './campaigns.ts';
import { contentSchemaRoutes } from './contentSchema.ts';
import { assetRoutes } from './assets.ts';
import { financialDocumentRoutes } from './financialDocuments.ts';
import { analyticsEventRoutes } from './analyticsEvents.ts';
import { analyticsReportRoutes } from './analyticsReports.ts';
import { installationRoutes } from './installations.ts';
import { auditRoutes } from './audit.ts';
import { privacyRoutes } from './privacy.ts';
import { experimentRoutes } from './experiments.ts';

/**
 * Operations without a body (publish, install, schedule, pause, resume, the variant publish, the
 * DELETEs) accept a request that says `Content-Type: application/json` but sends no bytes, as many
 * HTTP clients do: the header is dropped before parsing, so the empty body is not read as invalid
 * JSON. Operations with a body still get 422 `body` for an empty one.
 */
function acceptEmptyJsonBodies(v1: FastifyInstance): void {
  v1.addHook('onRequest', async (req) => {
    if (req.routeOptions.schema?.body !== undefined || req.headers['content-type'] === undefined) return;
    const empty = req.headers['content-length'] === '0' || (req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined);
    if (empty) delete req.headers['content-type'];
  });
}

export async function v1Routes(v1: FastifyInstance, app: AppContext): Promise<void> {
  acceptEmptyJsonBodies(v1);
  workspaceRoutes(v1, app);
  integrationRoutes(v1, app);
  signatureRoutes(v1, app);
  signatureCompatibilityRoutes(v1, app);
  assignmentRoutes(v1, app);
  smartFieldRoutes(v1, app);
  teammateRoutes(v1, app);
  groupRoutes(v1, app);
  folderRoutes(v1, app);
  campaignRoutes(v1, app);
  contentSchemaRoutes(v1, app);
  assetRoutes(v1, app);
  financialDocumentRoutes(v1, app);
  analyticsEventRoutes(v1, app);
  analyticsReportRoutes(v1, app);
  installationRoutes(v1, app);
  auditRoutes(v1, app);
  privacyRoutes(v1, app);
  experimentRoutes(v1, app);
}
