/**
 * The pages' languages: English and 简体中文, with i18next. The language
 * follows `?lang=`, then the choice saved in this browser, then the
 * browser's own language list; the header's switcher changes it and saves it.
 * Numbers, percentages and times are formatted for the same language.
 *
 * Every string the pages show is in the catalogues en.json and zh.json, as
 * i18next resources: interpolation is `{{name}}`, plurals the `_one` /
 * `_other` suffixes. English defines the keys; the type checker refuses a
 * Chinese catalogue with a key missing or extra (below), the test a dropped
 * placeholder.
 */
import i18next from 'i18next';
import { initReactI18next } from 'react-i18next';
import en from './en.json';
import zh from './zh.json';

/** The catalogues' shape: the English keys, any strings. */
export type Messages = typeof en;
type SameKeys<A, B> = [A] extends [B] ? ([B] extends [A] ? A : never) : never;
/** zh.json, refused (assigned to never) unless it has exactly the keys of en.json. */
const chinese: SameKeys<typeof zh, Messages> = zh;

/** The languages the pages are written in. */
export const LANGUAGES = ['en', 'zh-CN'] as const;
export type Language = (typeof LANGUAGES)[number];

/** Each language's name in itself, for the switcher. */
export const LANGUAGE_NAMES: Readonly<Record<Language, string>> = { en: 'English', 'zh-CN': '简体中文' };

const STORAGE_KEY = 'atomo-swarm.lang';

/** The supported language a BCP 47 tag asks for ("zh", "zh-Hans-CN", "zh-TW" → zh-CN; "en-GB" → en), or null. */
export function matchLanguage(tag: string | null | undefined): Language | null {
  if (tag === null || tag === undefined) return null;
  const primary = tag.trim().toLowerCase().split(/[-_]/)[0];
  if (primary === 'zh') return 'zh-CN';
  if (primary === 'en') return 'en';
  return null;
}

/**
 * The language to show: the address's `?lang=`, else the saved choice, else the first browser language we have, else
 * English.
 */
export function pickLanguage(sources: {
  readonly query: string | null;
  readonly saved: string | null;
  readonly browser: readonly string[];
}): Language {
  return (
    matchLanguage(sources.query) ??
    matchLanguage(sources.saved) ??
    sources.browser.map(matchLanguage).find((l) => l !== null) ??
    'en'
  );
}

function savedLanguage(): string | null {
  try {
    return globalThis.localStorage?.getItem(STORAGE_KEY) ?? null;
  } catch {
    return null; // storage blocked (private mode, sandboxed frame)
  }
}

function initialLanguage(): Language {
  const nav = globalThis.navigator as Navigator | undefined;
  const loc = globalThis.location as Location | undefined;
  return pickLanguage({
    query: loc === undefined ? null : new URLSearchParams(loc.search).get('lang'),
    saved: savedLanguage(),
    browser: nav?.languages ?? (nav?.language === undefined ? [] : [nav.language]),
  });
}

/** The one i18next instance of the page. */
export const i18n = i18next.createInstance();
void i18n.use(initReactI18next).init({
  lng: initialLanguage(),
  fallbackLng: 'en',
  supportedLngs: [...LANGUAGES],
  resources: { en: { translation: en }, 'zh-CN': { translation: chinese } },
  interpolation: { escapeValue: false }, // React escapes
  initAsync: false,
  returnNull: false,
});
syncDocumentLanguage();

function syncDocumentLanguage(): void {
  if (typeof document !== 'undefined') document.documentElement.lang = currentLanguage();
}

/** The language shown now. */
export function currentLanguage(): Language {
  return matchLanguage(i18n.language) ?? 'en';
}

/** Switches the pages' language and remembers the choice in this browser. */
export async function setLanguage(language: Language): Promise<void> {
  try {
    globalThis.localStorage?.setItem(STORAGE_KEY, language);
  } catch {
    // not saved: the choice lasts for this page only
  }
  await i18n.changeLanguage(language);
  syncDocumentLanguage();
}

/** Translates outside React (formatting helpers). */
export const t = i18n.t.bind(i18n);

/**
 * A message the session or the network layer hands to the page, translated when shown (so a language switch
 * re-translates it).
 */
export interface LocalMessage {
  readonly key: MessageKey;
  readonly params?: Readonly<Record<string, string | number>>;
}

/** Dotted paths of the catalogue's strings. */
export type MessageKey = Paths<Messages>;
type Paths<T> = { [K in keyof T & string]: T[K] extends string ? K : `${K}.${Paths<T[K]>}` }[keyof T & string];

/** The message in the language shown now. */
export function translate(message: LocalMessage): string {
  return i18n.t(message.key, { ...message.params }) as string;
}
