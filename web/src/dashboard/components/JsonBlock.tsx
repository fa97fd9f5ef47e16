/** A value as indented JSON, for auditors. */
export function JsonBlock({ value }: { value: unknown }) {
  // Focusable, so a long value can be scrolled with the keyboard.
  return (
    <pre className="snippet json-block" tabIndex={0}>
      {JSON.stringify(value, null, 2)}
    </pre>
  )
}
