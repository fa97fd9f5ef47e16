import { useEffect, useRef } from 'react'

/** True when keys typed go to a form control: its own copy, paste, undo and select-all stay its own. */
export const isTyping = (target: EventTarget | null) =>
  target instanceof HTMLElement && (target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName))

/** While mounted, `onKey` (as of the last render) hears each key pressed with Ctrl or ⌘ held, anywhere on the page. */
export function useCtrlKeys(onKey: (event: KeyboardEvent, key: string) => void): void {
  const latest = useRef(onKey)
  latest.current = onKey
  useEffect(() => {
    const listener = (event: KeyboardEvent) => {
      if (event.ctrlKey || event.metaKey) latest.current(event, event.key.toLowerCase())
    }
    window.addEventListener('keydown', listener)
    return () => window.removeEventListener('keydown', listener)
  }, [])
}
