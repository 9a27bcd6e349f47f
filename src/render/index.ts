/** Signature content: validation (schema.ts), rendering (render.ts), size limits (limits.ts). */
export { contentTreeSchema, LIMITS, type ContentTree } from './schema.ts';
export { validateContent, type ValidationResult } from './validate.ts';
export { compileTemplate, CompiledTemplate, type AssetRef, type SmartFieldKind, type SmartFieldValues } from './compile.ts';
export { renderSignature, hashHtml, type RenderInput, type RenderOutput } from './render.ts';
export { SIGNATURE_SIZE_LIMITS, assertSignatureFits, sizeReport, type Destination } from './limits.ts';
export { SOCIAL_ICONS, SOCIAL_NETWORKS } from './social.ts';
