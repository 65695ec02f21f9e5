import { describe, expect, it } from 'vitest';
import en from './en.json';
import { matchLanguage, pickLanguage } from './index';
import zh from './zh.json';

/** Every string of a catalogue by its dotted key. */
function flatten(tree: object, prefix = ''): Map<string, string> {
  const out = new Map<string, string>();
  for (const [key, value] of Object.entries(tree)) {
    if (typeof value === 'string') out.set(prefix + key, value);
    else for (const [k, v] of flatten(value as object, `${prefix}${key}.`)) out.set(k, v);
  }
  return out;
}

const placeholders = (text: string) => [...text.matchAll(/\{\{(\w+)\}\}/g)].map((m) => m[1]).sort();

describe('language choice', () => {
  it('maps browser tags to the two languages', () => {
    const languages = { zh: 'zh-CN', 'zh-Hans-CN': 'zh-CN', zh_TW: 'zh-CN', 'en-GB': 'en', 'fr-FR': null };
    for (const [tag, language] of Object.entries(languages)) expect(matchLanguage(tag)).toBe(language);
    expect(matchLanguage(null)).toBeNull();
  });

  it('prefers the address, then the saved choice, then the first browser language it has', () => {
    expect(pickLanguage({ query: 'zh', saved: 'en', browser: ['en-US'] })).toBe('zh-CN');
    expect(pickLanguage({ query: null, saved: 'zh-CN', browser: ['en-US'] })).toBe('zh-CN');
    expect(pickLanguage({ query: 'xx', saved: null, browser: ['fr', 'zh-CN', 'en'] })).toBe('zh-CN');
    expect(pickLanguage({ query: null, saved: null, browser: ['fr', 'de'] })).toBe('en');
  });
});

describe('the catalogues', () => {
  const english = flatten(en);
  const chinese = flatten(zh);

  it('have the same keys', () => {
    expect([...chinese.keys()].sort()).toEqual([...english.keys()].sort());
  });

  it('keep every placeholder of the English string in its translation', () => {
    const dropped = [...english].filter(
      ([key, text]) => JSON.stringify(placeholders(text)) !== JSON.stringify(placeholders(chinese.get(key) ?? '')),
    );
    expect(dropped).toEqual([]);
  });

  it(
    'translate every sentence: no Chinese string equals its ' +
      'English one unless it is only names, symbols and placeholders',
    () => {
      const symbols = String.raw`[\s\d{}().,:;/×=%–→?+\-‖ĝ²÷]`;
      const words = 'ATOMO|QSGD|TernGrad|float32|WebGPU|GPU|CPU|MB|Dirichlet|α';
      const names = new RegExp(String.raw`^(?:${symbols}|${words}|\w+(?=\}\}))*$`);
      const same = [...english]
        .filter(([key, text]) => chinese.get(key) === text && !names.test(text))
        .map(([key]) => key);
      expect(same).toEqual([]);
    },
  );
});
