import type { Lang } from './i18n'
import './text-length.css'

/** A text's length as the service counts it against its limits: in characters (Unicode code points), not UTF-16 units. */
export const textLength = (text: string): number => [...text].length

/**
 * How much of a limit a text uses ("12 / 4,096"), shown under a message box. The box carries the
 * limit as `maxLength` too; this says how near it is. `id` lets the box name it in `aria-describedby`.
 */
export function LengthCounter({ text, max, lang, id }: { text: string; max: number; lang: Lang; id?: string }) {
  const format = new Intl.NumberFormat(lang === 'pt' ? 'pt-BR' : 'en-US')
  const used = textLength(text)
  return (
    <span className={used >= max ? 'length-counter full' : 'length-counter'} id={id} data-testid="length-counter">
      {`${format.format(used)} / ${format.format(max)}`}
    </span>
  )
}
