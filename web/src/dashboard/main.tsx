import { StrictMode } from 'react'
import { createRoot } from 'react-dom/client'
import '../shared/theme.css'
import './dashboard.css'
import { App } from './App'
import { I18nProvider } from './i18n'
import { initialPreferences, PreferencesProvider, usePreferences } from './preferences'
import { SessionProvider } from './session'
import type { ReactNode } from 'react'

function Translated({ children }: { children: ReactNode }) {
  const { lang } = usePreferences()
  return <I18nProvider lang={lang}>{children}</I18nProvider>
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <PreferencesProvider initial={initialPreferences()}>
      <Translated>
        <SessionProvider>
          <App />
        </SessionProvider>
      </Translated>
    </PreferencesProvider>
  </StrictMode>,
)
