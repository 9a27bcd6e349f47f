/** The v1 routes. Each resource registers its routes from its own file. */
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../context.ts';
import { workspaceRoutes } from './workspace.ts';
import { integrationRoutes } from './integrations.ts';
import { signatureRoutes } from './signatures.ts';
import { assignmentRoutes } from './assignments.ts';
import { smartFieldRoutes } from './smartFields.ts';
import { teammateRoutes } from './teammates.ts';
import { folderRoutes } from './folders.ts';
import { campaignRoutes } from './campaigns.ts';
import { contentSchemaRoutes } from './contentSchema.ts';
import { assetRoutes } from './assets.ts';

export async function v1Routes(v1: FastifyInstance, app: AppContext): Promise<void> {
  workspaceRoutes(v1, app);
  integrationRoutes(v1, app);
  signatureRoutes(v1, app);
  assignmentRoutes(v1, app);
  smartFieldRoutes(v1, app);
  teammateRoutes(v1, app);
  folderRoutes(v1, app);
  campaignRoutes(v1, app);
  contentSchemaRoutes(v1, app);
  assetRoutes(v1, app);
}
