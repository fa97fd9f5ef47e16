import { createContext, useContext, type ReactNode } from 'react'

/** The two languages of the editor and the dashboard. */
export type Lang = 'en' | 'pt'
export type Theme = 'light' | 'dark'

export type Translate<Key extends string> = (key: Key, params?: Record<string, string | number>) => string

/** `pt`, `pt-BR`, … are Portuguese; anything else is English. */
export const langOf = (value: string | null | undefined): Lang => {
  const lower = (value ?? '').toLowerCase()
  return lower === 'pt' || lower.startsWith('pt-') ? 'pt' : 'en'
}

/**
 * A translator and its React context for one app's messages: `{name}` placeholders are filled from
 * `params`; a key missing in Portuguese falls back to English. Both apps share this and the theme.
 */
export function createI18n<Key extends string>(dictionaries: { en: Record<Key, string>; pt: Record<Key, string> }) {
  const translator =
    (lang: Lang): Translate<Key> =>
    (key, params) => {
      const text = dictionaries[lang][key] ?? dictionaries.en[key] ?? key
      return params ? text.replace(/\{(\w+)\}/g, (all, name: string) => (name in params ? String(params[name]) : all)) : text
    }
  const Context = createContext<Translate<Key>>(translator('en'))
  function I18nProvider({ lang, children }: { lang: Lang; children: ReactNode }) {
    return <Context.Provider value={translator(lang)}>{children}</Context.Provider>
  }
  const useT = () => useContext(Context)
  return { translator, I18nProvider, useT }
}
