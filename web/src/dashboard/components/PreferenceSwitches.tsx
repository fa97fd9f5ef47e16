import type { Lang, Theme } from '../../shared/i18n'
import { useT } from '../i18n'
import { usePreferences } from '../preferences'

/** The language and theme choices, in the signed-in header and on the sign-in page alike. */
export function PreferenceSwitches() {
  const t = useT()
  const { lang, theme, setLang, setTheme } = usePreferences()
  return (
    <>
      <label className="compact">
        <span>{t('prefs.language')}</span>
        <select value={lang} onChange={(event) => setLang(event.target.value as Lang)}>
          <option value="en">English</option>
          <option value="pt">Português</option>
        </select>
      </label>
      <label className="compact">
        <span>{t('prefs.theme')}</span>
        <select value={theme} onChange={(event) => setTheme(event.target.value as Theme)}>
          <option value="light">{t('prefs.light')}</option>
          <option value="dark">{t('prefs.dark')}</option>
        </select>
      </label>
    </>
  )
}
