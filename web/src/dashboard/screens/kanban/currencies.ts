import type { Lang } from '../../../shared/i18n'

/** The currencies most boards count in, first in the picker; the person's own leads (BRL in Portuguese, USD in English). */
const COMMON: Record<Lang, readonly string[]> = {
  pt: ['BRL', 'USD', 'EUR', 'ARS', 'CLP', 'COP', 'MXN', 'PEN', 'UYU', 'PYG', 'BOB', 'GBP'],
  en: ['USD', 'EUR', 'GBP', 'BRL', 'CAD', 'AUD', 'MXN', 'ARS', 'CLP', 'COP', 'JPY', 'INR'],
}

/** The currency a new currency field starts with. */
export const defaultCurrency = (lang: Lang): string => COMMON[lang][0]!

export interface CurrencyChoice {
  code: string
  label: string
}

/**
 * The picker's choices: the common currencies, then every ISO 4217 code the browser knows, each
 * with its name in the person's language ("BRL · Brazilian real"). `kept`, a code a field already
 * has, is among them even when the browser does not know it.
 */
export function currencyChoices(lang: Lang, kept?: string): { common: CurrencyChoice[]; all: CurrencyChoice[] } {
  const names = new Intl.DisplayNames([lang === 'pt' ? 'pt-BR' : 'en'], { type: 'currency' })
  const choice = (code: string): CurrencyChoice => {
    const name = names.of(code)
    return { code, label: name && name !== code ? `${code} · ${name}` : code }
  }
  const common = COMMON[lang]
  const known = Intl.supportedValuesOf('currency')
  const others = [...new Set([...known, ...(kept ? [kept] : [])])].filter((code) => !common.includes(code)).sort()
  return { common: common.map(choice), all: others.map(choice) }
}
