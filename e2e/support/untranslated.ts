/**
 * Finds English left on a page shown in Chinese: every visible text node,
 * and the text of labels a screen reader or a tooltip shows (aria-label,
 * title, placeholder, option), split into Latin words. A word passes only if
 * it is a name the Chinese page keeps as is (a scheme, an API, a unit), or it
 * sits inside an element marked translate="no" (user data: run names, device
 * and adapter names). A string added to the pages without going through the
 * catalogue shows up here as its English words.
 */
import type { Page } from '@playwright/test';

/** Names and units that stay in Latin script in the Chinese pages. */
export const KEPT_AS_IS: ReadonlySet<string> = new Set([
  'atomo',
  'swarm',
  'ATOMO',
  'QSGD',
  'TernGrad',
  'PowerSGD',
  'float',
  'WebGPU',
  'GPU',
  'CPU',
  'MLP',
  'CNN',
  'IID',
  'Dirichlet',
  'CSV',
  'JSON',
  'SwiftShader',
  'Chrome',
  'Edge',
  'chrome',
  'gpu',
  'http',
  'https',
  'localhost',
  'npm',
  'start',
  'cpu',
  'webgpu',
  'atomo-swarm',
  'kB',
  'MB',
  'GB',
  'QR',
  'Mbit',
  'Gbit',
]);

/** One piece of text with its English words. */
export interface Finding {
  readonly text: string;
  readonly words: readonly string[];
}

/**
 * Text on `page` with Latin words outside KEPT_AS_IS and outside
 * translate="no"; `data` lists strings users typed (run names) that labels
 * may quote, e.g. "删除 default".
 */
export async function untranslatedText(page: Page, data: readonly string[] = []): Promise<Finding[]> {
  const texts = await page.evaluate(() => {
    const out: string[] = [];
    const skipped = (element: Element | null): boolean =>
      element === null || element.closest('[translate="no"], script, style, noscript') !== null;
    const visible = (element: Element): boolean => {
      const box = element.getBoundingClientRect();
      const style = getComputedStyle(element);
      // Screen-reader-only text counts: it is read aloud.
      return (
        (box.width > 0 || box.height > 0 || element.closest('.sr-only') !== null) &&
        style.visibility !== 'hidden' &&
        style.display !== 'none'
      );
    };
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node !== null; node = walker.nextNode()) {
      const parent = node.parentElement;
      const text = node.textContent?.trim() ?? '';
      if (text === '' || skipped(parent) || !visible(parent!)) continue;
      out.push(text);
    }
    for (const element of document.body.querySelectorAll('[aria-label], [title], [placeholder]')) {
      // Recharts labels each legend swatch "<series> legend icon" with no way to translate it; the series name is
      // checked as text.
      if (skipped(element) || element.closest('.recharts-legend-wrapper') !== null) continue;
      for (const name of ['aria-label', 'title', 'placeholder']) {
        const value = element.getAttribute(name);
        if (value !== null && value.trim() !== '') out.push(value);
      }
    }
    out.push(document.title);
    return out;
  });
  const findings: Finding[] = [];
  for (const raw of texts) {
    const text = data.reduce((t, quoted) => t.split(quoted).join(' '), raw);
    // Latin words of two letters or more (single letters are maths: ‖g‖², 1/p).
    const words = (text.match(/[A-Za-z][A-Za-z'’-]*[A-Za-z]/g) ?? []).filter((word) => !KEPT_AS_IS.has(word));
    if (words.length > 0) findings.push({ text: raw, words });
  }
  return findings;
}
