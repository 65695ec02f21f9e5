/** The header's language menu: English or 简体中文, remembered in this browser. */
import { useTranslation } from 'react-i18next';
import { currentLanguage, LANGUAGE_NAMES, LANGUAGES, matchLanguage, setLanguage } from '../../i18n';

/** A small select (data-testid="language"). */
export function LanguageSwitcher() {
  const { t } = useTranslation();
  return (
    <label className="language">
      <span className="sr-only">{t('common.language')}</span>
      <select
        className="select select--small"
        data-testid="language"
        aria-label={t('common.language')}
        value={currentLanguage()}
        onChange={(e) => {
          const language = matchLanguage(e.target.value);
          if (language !== null) void setLanguage(language);
        }}
      >
        {LANGUAGES.map((language) => (
          <option key={language} value={language} lang={language}>
            {LANGUAGE_NAMES[language]}
          </option>
        ))}
      </select>
    </label>
  );
}
