/** axe-core's engine as source text, evaluated in the page by the tests (the page's CSP does not govern that). */
import fs from 'node:fs';
import { createRequire } from 'node:module';

export const axeSource = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
