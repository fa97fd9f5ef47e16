import { useT } from '../../i18n'
import { usePreferences } from '../../preferences'
import type { CardValue, PipelineField } from './api-types'
import { formatValue } from './card-values'

/** Formats field values and sums in the language the reader chose. */
export function useValueFormatter(): (field: PipelineField, value: CardValue) => string {
  const t = useT()
  const { lang } = usePreferences()
  const locale = lang === 'pt' ? 'pt-BR' : 'en'
  return (field, value) => formatValue(field, value, locale, { yes: t('common.yes'), no: t('common.no') })
}
