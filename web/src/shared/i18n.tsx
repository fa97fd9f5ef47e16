import { createContext, useContext, type ReactNode } from 'react'

/** The two languages of the editor and the dashboard. */
export type Lang = 'en' | 'pt'
export type Theme = 'light' | 'dark'

export type Translate<Key extends string> = (key: Key, params?: Record<string, string | number>) => string

/** Every message of a set, in both languages. */
export interface Dictionaries<Key extends string> {
  en: Record<Key, string>
  pt: Record<Key, string>
}

/** `pt`, `pt-BR`, … are Portuguese; anything else is English. */
export const langOf = (value: string | null | undefined): Lang => {
  const lower = (value ?? '').toLowerCase()
  return lower === 'pt' || lower.startsWith('pt-') ? 'pt' : 'en'
}

const PLURAL = /\{(\w+), plural,((?:\s*[\w=]+\s*\{[^{}]*\})+)\s*\}/g
const PLURAL_FORM = /([\w=]+)\s*\{([^{}]*)\}/g

/**
 * `{count, plural, one {# problem} other {# problems}}` (ICU's plural, `#` for the number): the form
 * the language's rules (Intl.PluralRules) pick for `params.count`, `=N` for exactly N, else `other`.
 */
function pluralize(text: string, params: Record<string, string | number>, rules: Intl.PluralRules): string {
  return text.replace(PLURAL, (all, name: string, forms: string) => {
    const value = params[name]
    if (typeof value !== 'number') return all
    const byForm = new Map([...forms.matchAll(PLURAL_FORM)].map((form) => [form[1]!, form[2]!]))
    const chosen = byForm.get(`=${value}`) ?? byForm.get(rules.select(value)) ?? byForm.get('other') ?? all
    return chosen.replace(/#/g, String(value))
  })
}

/**
 * A translator per language: plurals are chosen and `{name}` placeholders filled from `params`; a
 * key missing in Portuguese falls back to English.
 */
function translators<Key extends string>(dictionaries: Dictionaries<Key>): Record<Lang, Translate<Key>> {
  const inLang = (lang: Lang): Translate<Key> => {
    const rules = new Intl.PluralRules(lang === 'pt' ? 'pt-BR' : 'en')
    return (key, params) => {
      const text = dictionaries[lang][key] ?? dictionaries.en[key] ?? key
      if (!params) return text
      return pluralize(text, params, rules).replace(/\{(\w+)\}/g, (all, name: string) => (name in params ? String(params[name]) : all))
    }
  }
  return { en: inLang('en'), pt: inLang('pt') }
}

/**
 * A translator and its React context for one app's messages. Both apps share this and the theme.
 * `withStrings` adds a part's own messages (a node type's) to the app's, for that part alone.
 */
export function createI18n<Key extends string>(dictionaries: Dictionaries<Key>) {
  const byLang = translators(dictionaries)
  const translator = (lang: Lang): Translate<Key> => byLang[lang]
  const LangContext = createContext<Lang>('en')
  function I18nProvider({ lang, children }: { lang: Lang; children: ReactNode }) {
    return <LangContext.Provider value={lang}>{children}</LangContext.Provider>
  }
  const useLang = () => useContext(LangContext)
  const useT = () => byLang[useLang()]
  const withStrings = <Own extends string>(own: Dictionaries<Own>): Record<Lang, Translate<Key | Own>> =>
    translators<Key | Own>({ en: { ...dictionaries.en, ...own.en }, pt: { ...dictionaries.pt, ...own.pt } })
  return { translator, I18nProvider, useT, useLang, withStrings }
}
