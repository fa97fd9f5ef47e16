import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react'
import { langOf, type Lang, type Theme } from '../shared/i18n'

interface Preferences {
  lang: Lang
  theme: Theme
  setLang(lang: Lang): void
  setTheme(theme: Theme): void
}

const PreferencesContext = createContext<Preferences>({ lang: 'en', theme: 'light', setLang() {}, setTheme() {} })

// Only these two preferences are kept in the browser's storage; never a key or a token.
const LANG_KEY = 'flowd.dashboard.lang'
const THEME_KEY = 'flowd.dashboard.theme'

const stored = (key: string): string | null => {
  try {
    return window.localStorage.getItem(key)
  } catch {
    return null
  }
}
const store = (key: string, value: string) => {
  try {
    window.localStorage.setItem(key, value)
  } catch {
    // Storage may be off (private windows): the choice then lasts for this page only.
  }
}

/** `?lang=pt&theme=dark` in the address wins (a shared link), then the last choice, then the browser's. */
export function initialPreferences(): { lang: Lang; theme: Theme } {
  const query = new URLSearchParams(window.location.search)
  const lang = langOf(query.get('lang') ?? stored(LANG_KEY) ?? navigator.language)
  const themeChoice = query.get('theme') ?? stored(THEME_KEY)
  const theme: Theme = themeChoice === 'dark' || themeChoice === 'light' ? themeChoice : window.matchMedia?.('(prefers-color-scheme: dark)').matches ? 'dark' : 'light'
  return { lang, theme }
}

export function PreferencesProvider({ initial, children }: { initial: { lang: Lang; theme: Theme }; children: ReactNode }) {
  const [lang, setLangState] = useState(initial.lang)
  const [theme, setThemeState] = useState(initial.theme)
  useEffect(() => {
    document.documentElement.lang = lang === 'pt' ? 'pt-BR' : 'en'
    document.documentElement.dataset.theme = theme
  }, [lang, theme])
  const setLang = useCallback((next: Lang) => {
    store(LANG_KEY, next)
    setLangState(next)
  }, [])
  const setTheme = useCallback((next: Theme) => {
    store(THEME_KEY, next)
    setThemeState(next)
  }, [])
  const value = useMemo(() => ({ lang, theme, setLang, setTheme }), [lang, theme, setLang, setTheme])
  return <PreferencesContext.Provider value={value}>{children}</PreferencesContext.Provider>
}

export const usePreferences = () => useContext(PreferencesContext)
