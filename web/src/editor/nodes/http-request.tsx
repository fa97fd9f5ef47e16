import { useState } from 'react'
import * as httpRequest from '../../../../src/domain/nodes/http-request.js'
import { wholePlaceholder } from '../../../../src/domain/interpolate.js'
import { parseJsonPath } from '../../../../src/domain/json-path.js'
import { CALL_LIMITS, HTTP_METHODS } from '../../../../src/domain/outside-call.js'
import { ListControls, Select, TextInput, VarText, WholeInRange, moveItem, replaceAt } from '../forms/fields'
import { useWorkspace } from '../workspace'
import { HttpTry } from './http-request-try'
import { httpRequestStrings as strings } from './http-request-strings'
import { clip, type FormProps, type NodeUi } from './node-ui'

type Data = httpRequest.Data
type Header = NonNullable<Data['headers']>[number]
type Mapping = NonNullable<Data['saveResponse']>[number]
type BodyKind = 'none' | 'json' | 'text'

const bodyKind = (body: unknown): BodyKind => (body === undefined ? 'none' : typeof body === 'string' ? 'text' : 'json')
const sendsNoBody = (method: Data['method'] | undefined) => method === 'GET' || method === 'DELETE'
const bytes = (text: string) => new TextEncoder().encode(text).length

function HttpRequestSummary({ data }: { data: Partial<Data> }) {
  const t = strings.useT()
  const saved = [...(data.saveResponse ?? []).map((m) => m.variable), data.saveStatusAs].filter((name): name is string => Boolean(name))
  return (
    <>
      <p className="preview">
        <strong>{data.method ?? 'GET'}</strong> {data.url ? clip(data.url.replace(/^https:\/\//, ''), 44) : t('http.noUrl')}
      </p>
      {saved.length > 0 && <p className="muted">{t('http.savesTo', { names: clip(saved.join(', '), 40) })}</p>}
    </>
  )
}

function HttpRequestForm({ data, onChange }: FormProps<Data>) {
  const t = strings.useT()
  const { variables } = useWorkspace()
  const headers = data.headers ?? []
  const mappings = data.saveResponse ?? []
  // The value to save that a click in the answer of "Try it" fills: the one last touched.
  const [target, setTarget] = useState<number>()
  const [picked, setPicked] = useState<string>()

  const setHeaders = (next: Header[]) => {
    const { headers: _h, ...rest } = data
    onChange(next.length ? { ...rest, headers: next } : rest)
  }
  const setMappings = (next: Mapping[]) => {
    const { saveResponse: _s, ...rest } = data
    onChange(next.length ? { ...rest, saveResponse: next } : rest)
  }
  const pickPath = (path: string) => {
    const index = target !== undefined && target < mappings.length ? target : mappings.length
    setMappings(index < mappings.length ? replaceAt(mappings, index, { ...mappings[index]!, path }) : [...mappings, { path, variable: '' }])
    setTarget(index)
    setPicked(t('try.picked', { path, n: index + 1 }))
  }

  const url = data.url ?? ''
  const urlWrong = url !== '' && !url.startsWith('https://') && wholePlaceholder(url) === undefined
  return (
    <>
      <Select
        label={t('http.method')}
        value={data.method ?? 'GET'}
        options={HTTP_METHODS.map((method) => ({ value: method, label: method }))}
        onChange={(method) => {
          // A GET or DELETE sends no body: the body goes with the change (the form keeps its text).
          const { body: _b, ...rest } = data
          onChange(sendsNoBody(method) ? { ...rest, method } : { ...data, method })
        }}
      />
      <VarText label={t('http.url')} value={url} secrets placeholder="https://api.example.com/orders/{{order}}" hint={urlWrong ? undefined : t('http.urlHint')} error={urlWrong ? t('http.urlNotHttps') : undefined} onChange={(next) => onChange({ ...data, url: next.trim() })} />

      <fieldset className="group">
        <legend>{t('http.headers')}</legend>
        {headers.map((header, i) => {
          const reserved = (httpRequest.RESERVED_HEADERS as readonly string[]).includes(header.name.trim().toLowerCase())
          return (
            <div className="item" key={i} role="group" aria-label={t('http.header', { n: i + 1 })}>
              <div className="item-head">
                <span>{t('http.header', { n: i + 1 })}</span>
                <ListControls index={i} count={headers.length} onMove={(a, b) => setHeaders(moveItem(headers, a, b))} onRemove={() => setHeaders(headers.filter((_, j) => j !== i))} />
              </div>
              <TextInput label={t('http.headerName')} value={header.name} placeholder="Authorization" onChange={(name) => setHeaders(replaceAt(headers, i, { ...header, name: name.trim() }))} />
              {reserved && <p className="field-error">{t('http.headerReserved')}</p>}
              <VarText label={t('http.headerValue')} value={header.value} secrets placeholder="Bearer {{secrets.API_TOKEN}}" onChange={(value) => setHeaders(replaceAt(headers, i, { ...header, value }))} />
            </div>
          )
        })}
        <button type="button" className="add" onClick={() => setHeaders([...headers, { name: '', value: '' }])}>
          + {t('http.addHeader')}
        </button>
      </fieldset>

      <BodyEditor data={data} onChange={onChange} />

      <WholeInRange
        label={t('http.timeout')}
        min={CALL_LIMITS.timeoutMs.min}
        max={CALL_LIMITS.timeoutMs.max}
        value={data.timeoutMs}
        rangeText={t('http.timeoutRange', { min: CALL_LIMITS.timeoutMs.min, max: CALL_LIMITS.timeoutMs.max, default: CALL_LIMITS.timeoutMs.default })}
        onChange={(timeoutMs) => {
          const { timeoutMs: _t, ...rest } = data
          onChange(timeoutMs === undefined ? rest : { ...rest, timeoutMs })
        }}
      />

      <fieldset className="group">
        <legend>{t('http.mappings')}</legend>
        <p className="hint">{t('http.mappingsHint')}</p>
        {mappings.map((mapping, i) => {
          const badPath = mapping.path !== '' && typeof parseJsonPath(mapping.path) === 'string'
          return (
            <div className={`item${target === i ? ' target' : ''}`} key={i} role="group" aria-label={t('http.mapping', { n: i + 1 })} onFocus={() => setTarget(i)} data-testid={`mapping-${i}`}>
              <div className="item-head">
                <span>{t('http.mapping', { n: i + 1 })}</span>
                <ListControls index={i} count={mappings.length} onMove={(a, b) => setMappings(moveItem(mappings, a, b))} onRemove={() => setMappings(mappings.filter((_, j) => j !== i))} />
              </div>
              <TextInput label={t('http.path')} value={mapping.path} placeholder="$.order.status" error={badPath ? t('http.badPath') : undefined} onChange={(path) => setMappings(replaceAt(mappings, i, { ...mapping, path: path.trim() }))} />
              <Select
                label={t('http.variable')}
                value={mapping.variable}
                placeholder={t('vars.choose')}
                options={variables.map((v) => ({ value: v.name, label: `${v.name} (${t(`vtype.${v.type}`)})` }))}
                onChange={(variable) => setMappings(replaceAt(mappings, i, { ...mapping, variable }))}
              />
            </div>
          )
        })}
        <button
          type="button"
          className="add"
          onClick={() => {
            setTarget(mappings.length)
            setMappings([...mappings, { path: '', variable: '' }])
          }}
        >
          + {t('http.addMapping')}
        </button>
      </fieldset>

      <Select
        label={t('http.saveStatusAs')}
        value={data.saveStatusAs ?? '-'}
        options={[{ value: '-', label: t('vars.dontSave') }, ...variables.filter((v) => v.type === 'number').map((v) => ({ value: v.name, label: v.name }))]}
        hint={t('http.saveStatusHint')}
        onChange={(name) => {
          const { saveStatusAs: _s, ...rest } = data
          onChange(name === '-' ? rest : { ...rest, saveStatusAs: name })
        }}
      />

      <HttpTry data={data} onPick={pickPath} picked={picked} />
    </>
  )
}

/** The body: none, JSON (checked as it is typed) or text; a GET or DELETE has none. */
function BodyEditor({ data, onChange }: Pick<FormProps<Data>, 'data' | 'onChange'>) {
  const t = strings.useT()
  const kind = bodyKind(data.body)
  const [json, setJson] = useState(() => (kind === 'json' ? JSON.stringify(data.body, null, 2) : '{}'))
  const [jsonError, setJsonError] = useState<string>()
  const [lastText, setLastText] = useState(() => (kind === 'text' ? (data.body as string) : ''))
  const setBody = (body: unknown) => {
    const { body: _b, ...rest } = data
    onChange(body === undefined ? rest : { ...rest, body })
  }
  // Typing keeps its own layout; a change from elsewhere (undo, another node) shows the body.
  const parsedJson = (() => {
    try {
      return { value: JSON.parse(json) as unknown }
    } catch {
      return undefined
    }
  })()
  const shownJson = kind === 'json' && parsedJson && JSON.stringify(parsedJson.value) !== JSON.stringify(data.body) ? JSON.stringify(data.body, null, 2) : json

  if (sendsNoBody(data.method)) {
    return (
      <fieldset className="group">
        <legend>{t('http.body')}</legend>
        {data.body === undefined ? <p className="hint">{t('http.noBodyFor', { method: data.method ?? 'GET' })}</p> : <p className="field-error">{t('http.bodyHasNoPlace', { method: data.method ?? 'GET' })}</p>}
      </fieldset>
    )
  }
  const tooLong = data.body !== undefined && bytes(typeof data.body === 'string' ? data.body : JSON.stringify(data.body)) > CALL_LIMITS.requestBytes
  const limitError = tooLong ? t('http.bodyTooLong', { limit: CALL_LIMITS.requestBytes }) : undefined
  return (
    <fieldset className="group">
      <legend>{t('http.body')}</legend>
      <Select
        label={t('http.bodyKind')}
        value={kind}
        options={(['none', 'json', 'text'] as const).map((k) => ({ value: k, label: t(`http.body.${k}`) }))}
        onChange={(next) => {
          setJsonError(undefined)
          if (next === 'none') setBody(undefined)
          else if (next === 'text') setBody(lastText)
          else {
            const fromText = parsedJson && typeof parsedJson.value !== 'string' ? parsedJson.value : {}
            if (!parsedJson || typeof parsedJson.value === 'string') setJson('{}')
            setBody(fromText)
          }
        }}
      />
      {kind === 'json' && (
        <VarText
          label={t('http.body.json')}
          multiline
          code
          rows={8}
          secrets
          value={shownJson}
          hint={t('http.jsonHint')}
          error={jsonError ?? limitError}
          onChange={(text) => {
            setJson(text)
            try {
              const value: unknown = JSON.parse(text)
              if (typeof value === 'string') return setJsonError(t('http.jsonIsText'))
              setJsonError(undefined)
              setBody(value)
            } catch (error) {
              setJsonError(t('http.jsonInvalid', { detail: error instanceof Error ? error.message : String(error) }))
            }
          }}
        />
      )}
      {kind === 'text' && (
        <VarText
          label={t('http.body.text')}
          multiline
          rows={5}
          secrets
          value={data.body as string}
          error={limitError}
          onChange={(text) => {
            setLastText(text)
            setBody(text)
          }}
        />
      )}
    </fieldset>
  )
}

export const httpRequestUi: NodeUi<Data> = {
  icon: '⇅',
  strings,
  exits: httpRequest.exits,
  newData: () => ({ method: 'GET', url: '' }),
  Summary: HttpRequestSummary,
  Form: HttpRequestForm,
  exitLabel: (_data, exit, lang) => {
    const t = strings.translator(lang)
    if (exit.id === httpRequest.SUCCESS_HANDLE) return t('exit.success')
    if (exit.id === httpRequest.ERROR_HANDLE) return t('exit.error')
    return undefined
  },
}
