/** A date and time in the reader's language. */
export function DateTime({ value }: { value: string | null | undefined }) {
  if (!value) return <>—</>
  const date = new Date(value)
  return <time dateTime={value}>{date.toLocaleString(document.documentElement.lang || undefined, { dateStyle: 'medium', timeStyle: 'short' })}</time>
}

/** "10:30:00": the time of day in the reader's language, for an instant within the day being read. */
export const clockTime = (value: string): string => new Date(value).toLocaleTimeString(document.documentElement.lang || undefined, { timeStyle: 'medium' })
