/** A date and time in the reader's language. */
export function DateTime({ value }: { value: string | null | undefined }) {
  if (!value) return <>—</>
  const date = new Date(value)
  return <time dateTime={value}>{date.toLocaleString(document.documentElement.lang || undefined, { dateStyle: 'medium', timeStyle: 'short' })}</time>
}
