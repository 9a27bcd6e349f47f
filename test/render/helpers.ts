/** Shared fixtures for the render tests: the fixture smart fields, template, campaign and teammate. */
import fs from 'node:fs';
import path from 'node:path';
import type { VariantSettings } from '../../src/campaigns/choice.ts';
import type { CampaignInput } from '../../src/render/render.ts';
import { renderSignature, type RenderOutput } from '../../src/render/render.ts';
import type { SmartFieldKind } from '../../src/render/compile.ts';
import type { ContentTree } from '../../src/render/schema.ts';

export const FIXTURES = path.resolve(import.meta.dirname, '../../fixtures/render');

export function readFixture<T>(file: string): T {
  return JSON.parse(fs.readFileSync(path.join(FIXTURES, file), 'utf8')) as T;
}

export interface FixtureSmartField {
  id: string;
  slug: string;
  label: string;
  kind: SmartFieldKind;
}

export const smartFields = readFixture<FixtureSmartField[]>('smart-fields.json');
export const smartFieldIds: ReadonlySet<string> = new Set(smartFields.map((f) => f.id));
export const smartFieldKinds: ReadonlyMap<string, SmartFieldKind> = new Map(smartFields.map((f) => [f.id, f.kind]));
export const sf = Object.fromEntries(smartFields.map((f) => [f.slug, f.id])) as Record<string, string>;

export const template = (): ContentTree => readFixture<ContentTree>('template.json');
export const campaign = (): CampaignInput => readFixture<CampaignInput>('campaign.json');
export const teammate = (): Record<string, string> => readFixture<Record<string, string>>('teammate.json');
export const SIGNATURE_ID = 'a0000000-0000-4000-8000-000000000001';

/** A golden case: fixtures/render/cases/<case>/input.json. */
export interface GoldenInput {
  description: string;
  signatureId: string;
  tree: ContentTree;
  values: Record<string, string | null>;
  campaign?: CampaignInput;
  variant?: VariantSettings;
  assets?: Record<string, { url: string }>;
}

export const CASES = path.join(FIXTURES, 'cases');

export function readCase(name: string): GoldenInput {
  return JSON.parse(fs.readFileSync(path.join(CASES, name, 'input.json'), 'utf8')) as GoldenInput;
}

/** A golden case rendered with the fixture smart fields' kinds. */
export function renderCase(input: GoldenInput): RenderOutput {
  return renderSignature({
    tree: input.tree,
    values: input.values,
    smartFieldKinds,
    signatureId: input.signatureId,
    campaign: input.campaign ?? null,
    variant: input.variant ?? null,
    assets: input.assets ? new Map(Object.entries(input.assets)) : undefined,
  });
}
