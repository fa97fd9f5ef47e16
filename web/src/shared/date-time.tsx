/** "Nov 30, 2026, 1:27 AM": a date and time in the reader's language, as text. */
export const dateTimeText = (value: string): string =>
  new Date(value).toLocaleString(document.documentElement.lang || undefined, { dateStyle: 'medium', timeStyle: 'short' })

/** A date and time in the reader's language. */
export function DateTime({ value }: { value: string | null | undefined }) {
  if (!value) return <>—</>
  return <time dateTime={value}>{dateTimeText(value)}</time>
}

/** "10:30:00": the time of day in the reader's language, for an instant within the day being read. */
export const clockTime = (value: string): string => new Date(value).toLocaleTimeString(document.documentElement.lang || undefined, { timeStyle: 'medium' })
