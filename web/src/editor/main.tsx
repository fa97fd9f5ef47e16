import { StrictMode } from 'react'
import { createRoot } from 'react-dom/client'
import '@xyflow/react/dist/style.css'
import '../shared/theme.css'
import './styles.css'
import { App } from './App'
import { I18nProvider, translator } from './i18n'
import { parseRoute } from './route'

const route = parseRoute(window.location.pathname, window.location.search)
document.documentElement.lang = route.lang === 'pt' ? 'pt-BR' : 'en'
document.documentElement.dataset.theme = route.theme
document.title = translator(route.lang)('app.title')

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <I18nProvider lang={route.lang}>
      <App route={route} />
    </I18nProvider>
  </StrictMode>,
)
