/** The v1 routes. Each resource registers its routes from its own file. */
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../context.ts';
import { workspaceRoutes } from './workspace.ts';
import { integrationRoutes } from './integrations.ts';
import { contentSchemaRoutes } from './contentSchema.ts';

export async function v1Routes(v1: FastifyInstance, app: AppContext): Promise<void> {
  workspaceRoutes(v1, app);
  integrationRoutes(v1, app);
  contentSchemaRoutes(v1, app);
}
