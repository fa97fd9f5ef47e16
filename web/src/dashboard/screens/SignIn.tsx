import { useEffect, useRef, useState, type FormEvent } from 'react'
import { errorText } from '../../shared/api-problems'
import { PreferenceSwitches } from '../components/PreferenceSwitches'
import { Field } from '../components/ui'
import { useT } from '../i18n'
import { useSession } from '../session'

/**
 * Sign-in: by the one-time link's token (`/dashboard/sign-in#token=…`, read from the fragment and
 * removed from the address at once), or by an API key typed here.
 */
export function SignIn({ expired }: { expired: boolean }) {
  const t = useT()
  const { signIn } = useSession()
  const [apiKey, setApiKey] = useState('')
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | undefined>()
  const linkTried = useRef(false)

  useEffect(() => {
    const token = new URLSearchParams(window.location.hash.slice(1)).get('token')
    if (!token || linkTried.current) return
    linkTried.current = true
    window.history.replaceState(null, '', window.location.pathname + window.location.search)
    setBusy(true)
    signIn({ link: token }).catch(() => {
      setError(t('signIn.linkFailed'))
      setBusy(false)
    })
  }, [signIn, t])

  const submit = async (event: FormEvent) => {
    event.preventDefault()
    setBusy(true)
    setError(undefined)
    try {
      await signIn({ apiKey: apiKey.trim() })
    } catch (failure) {
      setError(t('signIn.failed', { message: errorText(failure, t) }))
      setBusy(false)
    }
  }

  return (
    <div className="sign-in">
      <header className="sign-in-bar">
        <span className="brand">{t('app.title')}</span>
        <div className="topbar-end">
          <PreferenceSwitches />
        </div>
      </header>
      <main id="content" className="sign-in-main">
      <form onSubmit={(event) => void submit(event)} className="card" aria-labelledby="sign-in-title">
        <h1 id="sign-in-title">{t('signIn.title')}</h1>
        {expired && (
          <p className="notice" role="status">
            {t('session.expired')}
          </p>
        )}
        <p>{t('signIn.intro')}</p>
        <Field label={t('signIn.apiKey')} hint={t('signIn.apiKeyHint')} error={error}>
          {(props) => <input {...props} type="password" autoComplete="off" spellCheck={false} value={apiKey} onChange={(event) => setApiKey(event.target.value)} required />}
        </Field>
        <button type="submit" className="primary" disabled={busy || apiKey.trim() === ''}>
          {busy ? t('signIn.signingIn') : t('signIn.submit')}
        </button>
      </form>
      </main>
    </div>
  )
}
