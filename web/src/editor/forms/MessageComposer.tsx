import { useT } from '../i18n'
import { LIMITS, MEDIA_KINDS, MESSAGE_KINDS, type Button, type Interactive, type ListSection, type MediaKind, type MessageKind, type OutgoingMessage } from '../flow-definition'
import { ListControls, Select, TagsInput, TextInput, VarText, moveItem, replaceAt } from './fields'

export function kindOf(message: OutgoingMessage): MessageKind {
  return message.type === 'interactive' ? message.interactive.type : message.type
}

/** The message's main text, carried over when its kind changes. */
function mainText(message: OutgoingMessage): string {
  switch (message.type) {
    case 'text':
      return message.text.body
    case 'media':
      return message.media.caption ?? ''
    case 'interactive':
      return message.interactive.body.text
    default:
      return ''
  }
}

const DEFAULT_MIME: Record<MediaKind, string> = {
  image: 'image/jpeg',
  video: 'video/mp4',
  audio: 'audio/mpeg',
  document: 'application/pdf',
  sticker: 'image/webp',
}

export function messageOfKind(kind: MessageKind, from?: OutgoingMessage): OutgoingMessage {
  const text = from ? mainText(from) : ''
  const tags = from?.tags ? { tags: from.tags } : {}
  switch (kind) {
    case 'text':
      return { type: 'text', text: { body: text }, ...tags }
    case 'media':
      return { type: 'media', media: { type: 'image', mimeType: DEFAULT_MIME.image, url: '', ...(text ? { caption: text } : {}) }, ...tags }
    case 'template':
      return { type: 'template', template: { id: '', params: [] }, ...tags }
    case 'button':
      return { type: 'interactive', interactive: { type: 'button', body: { text }, action: { buttons: [{ id: 'option_1', title: '' }] } }, ...tags }
    case 'list':
      return {
        type: 'interactive',
        interactive: { type: 'list', body: { text }, action: { button: '', sections: [{ title: '', rows: [{ id: 'row_1', title: '' }] }] } },
        ...tags,
      }
    case 'cta_url':
      return { type: 'interactive', interactive: { type: 'cta_url', body: { text }, action: { name: 'cta_url', parameters: { display_text: '', url: '' } } }, ...tags }
  }
}

/** A fresh id with `prefix` not among `taken`: option_2, option_3… */
const nextId = (prefix: string, taken: string[]) => {
  for (let n = taken.length + 1; ; n++) if (!taken.includes(`${prefix}_${n}`)) return `${prefix}_${n}`
}

export interface ComposerProps {
  value: OutgoingMessage
  onChange(message: OutgoingMessage): void
  /** Told when a reply id (a button or row id, an exit of a choice question) is renamed. */
  onRenameId?(from: string, to: string): void
  kinds?: MessageKind[]
}

/** Edits one outgoing message in any of the spec's shapes (§6.3). */
export function MessageComposer({ value, onChange, onRenameId, kinds = MESSAGE_KINDS }: ComposerProps) {
  const t = useT()
  const kind = kindOf(value)
  return (
    <div className="composer">
      <Select
        label={t('msg.kind')}
        value={kind}
        options={kinds.map((k) => ({ value: k, label: t(`kind.${k}`) }))}
        onChange={(next) => next !== kind && onChange(messageOfKind(next, value))}
      />
      <ComposerBody value={value} onChange={onChange} onRenameId={onRenameId} />
      <TagsInput label={t('msg.tags')} value={value.tags} onChange={(tags) => onChange(withTags(value, tags))} />
    </div>
  )
}

const withTags = (message: OutgoingMessage, tags: string[] | undefined): OutgoingMessage => {
  const { tags: _old, ...rest } = message
  return (tags ? { ...rest, tags } : rest) as OutgoingMessage
}

function ComposerBody({ value, onChange, onRenameId }: ComposerProps) {
  const t = useT()
  switch (value.type) {
    case 'text':
      return <VarText label={t('msg.text')} multiline max={LIMITS.textBody} value={value.text.body} onChange={(body) => onChange({ ...value, text: { body } })} />
    case 'media': {
      const media = value.media
      const set = (patch: Partial<typeof media>) => onChange({ ...value, media: { ...media, ...patch } })
      return (
        <>
          <Select
            label={t('msg.mediaType')}
            value={media.type}
            options={MEDIA_KINDS.map((k) => ({ value: k, label: t(`media.${k}`) }))}
            onChange={(type) => set({ type, mimeType: Object.values(DEFAULT_MIME).includes(media.mimeType) || !media.mimeType ? DEFAULT_MIME[type] : media.mimeType })}
          />
          <VarText label={t('msg.url')} value={media.url} placeholder="https://…" onChange={(url) => set({ url })} />
          <TextInput label={t('msg.mimeType')} value={media.mimeType} onChange={(mimeType) => set({ mimeType })} />
          <VarText
            label={t('msg.caption')}
            multiline
            max={LIMITS.caption}
            value={media.caption ?? ''}
            onChange={(caption) => {
              const { caption: _c, ...rest } = media
              onChange({ ...value, media: caption ? { ...rest, caption } : rest })
            }}
          />
        </>
      )
    }
    case 'template': {
      const template = value.template
      const setParams = (params: string[]) => onChange({ ...value, template: { ...template, params } })
      return (
        <>
          <TextInput label={t('msg.templateId')} value={template.id} onChange={(id) => onChange({ ...value, template: { ...template, id } })} />
          <fieldset className="group">
            <legend>{t('msg.params')}</legend>
            {template.params.map((param, i) => (
              <div className="row" key={i}>
                <VarText label={t('msg.param', { n: i + 1 })} value={param} onChange={(p) => setParams(replaceAt(template.params, i, p))} />
                <ListControls index={i} count={template.params.length} onMove={(a, b) => setParams(moveItem(template.params, a, b))} onRemove={() => setParams(template.params.filter((_, j) => j !== i))} />
              </div>
            ))}
            <button type="button" className="add" onClick={() => setParams([...template.params, ''])}>
              + {t('msg.addParam')}
            </button>
          </fieldset>
        </>
      )
    }
    case 'interactive':
      return <InteractiveBody value={value.interactive} onChange={(interactive) => onChange({ ...value, interactive })} onRenameId={onRenameId} />
  }
}

function InteractiveBody({ value, onChange, onRenameId }: { value: Interactive; onChange(value: Interactive): void; onRenameId?(from: string, to: string): void }) {
  const t = useT()
  const body = <VarText label={t('msg.body')} multiline max={LIMITS.interactiveBody} value={value.body.text} onChange={(text) => onChange({ ...value, body: { text } })} />
  const footer =
    value.type === 'cta_url' ? null : (
      <VarText
        label={t('msg.footer')}
        max={LIMITS.footer}
        value={value.footer?.text ?? ''}
        onChange={(text) => {
          const { footer: _f, ...rest } = value
          onChange(text ? { ...rest, footer: { text } } : rest)
        }}
      />
    )
  switch (value.type) {
    case 'button':
      return (
        <>
          {body}
          {footer}
          <ButtonsEditor buttons={value.action.buttons} onChange={(buttons) => onChange({ ...value, action: { buttons } })} onRenameId={onRenameId} />
        </>
      )
    case 'list':
      return (
        <>
          {body}
          {footer}
          <VarText label={t('msg.listButton')} max={LIMITS.listButton} value={value.action.button} onChange={(button) => onChange({ ...value, action: { ...value.action, button } })} />
          <SectionsEditor sections={value.action.sections} onChange={(sections) => onChange({ ...value, action: { ...value.action, sections } })} onRenameId={onRenameId} />
        </>
      )
    case 'cta_url': {
      const parameters = value.action.parameters
      const set = (patch: Partial<typeof parameters>) => onChange({ ...value, action: { name: 'cta_url', parameters: { ...parameters, ...patch } } })
      return (
        <>
          {body}
          <VarText label={t('msg.displayText')} max={LIMITS.ctaDisplayText} value={parameters.display_text} onChange={(display_text) => set({ display_text })} />
          <VarText label={t('msg.url')} value={parameters.url} placeholder="https://…" onChange={(url) => set({ url })} />
        </>
      )
    }
  }
}

function ButtonsEditor({ buttons, onChange, onRenameId }: { buttons: Button[]; onChange(buttons: Button[]): void; onRenameId?(from: string, to: string): void }) {
  const t = useT()
  const ids = buttons.map((b) => b.id)
  return (
    <fieldset className="group">
      <legend>{t('msg.buttons')}</legend>
      {buttons.map((button, i) => (
        <div className="item" key={i}>
          <div className="item-head">
            <span>#{i + 1}</span>
            <ListControls index={i} count={buttons.length} canRemove={buttons.length > 1} onMove={(a, b) => onChange(moveItem(buttons, a, b))} onRemove={() => onChange(buttons.filter((_, j) => j !== i))} />
          </div>
          <VarText label={t('msg.title')} max={LIMITS.buttonTitle} value={button.title} onChange={(title) => onChange(replaceAt(buttons, i, { ...button, title }))} />
          <TextInput
            label={t('msg.replyId')}
            value={button.id}
            onChange={(id) => {
              onRenameId?.(button.id, id)
              onChange(replaceAt(buttons, i, { ...button, id }))
            }}
          />
        </div>
      ))}
      {buttons.length < LIMITS.buttons ? (
        <button type="button" className="add" onClick={() => onChange([...buttons, { id: nextId('option', ids), title: '' }])}>
          + {t('msg.addButton')}
        </button>
      ) : (
        <p className="hint">{t('msg.maxButtons', { max: LIMITS.buttons })}</p>
      )}
    </fieldset>
  )
}

function SectionsEditor({ sections, onChange, onRenameId }: { sections: ListSection[]; onChange(sections: ListSection[]): void; onRenameId?(from: string, to: string): void }) {
  const t = useT()
  const rowIds = sections.flatMap((s) => s.rows.map((r) => r.id))
  const canAddRow = rowIds.length < LIMITS.rows
  return (
    <fieldset className="group">
      <legend>{t('msg.sections')}</legend>
      {sections.map((section, s) => {
        const setSection = (next: ListSection) => onChange(replaceAt(sections, s, next))
        return (
          <div className="item" key={s}>
            <div className="item-head">
              <span>{t('msg.section', { n: s + 1 })}</span>
              <ListControls index={s} count={sections.length} canRemove={sections.length > 1} onMove={(a, b) => onChange(moveItem(sections, a, b))} onRemove={() => onChange(sections.filter((_, j) => j !== s))} />
            </div>
            <VarText label={t('msg.sectionTitle')} max={LIMITS.sectionTitle} value={section.title} onChange={(title) => setSection({ ...section, title })} />
            {section.rows.map((row, r) => {
              const setRow = (next: typeof row) => setSection({ ...section, rows: replaceAt(section.rows, r, next) })
              return (
                <div className="subitem" key={r}>
                  <div className="item-head">
                    <span>
                      {s + 1}.{r + 1}
                    </span>
                    <ListControls
                      index={r}
                      count={section.rows.length}
                      canRemove={section.rows.length > 1}
                      onMove={(a, b) => setSection({ ...section, rows: moveItem(section.rows, a, b) })}
                      onRemove={() => setSection({ ...section, rows: section.rows.filter((_, j) => j !== r) })}
                    />
                  </div>
                  <VarText label={t('msg.title')} max={LIMITS.rowTitle} value={row.title} onChange={(title) => setRow({ ...row, title })} />
                  <VarText
                    label={t('msg.rowDescription')}
                    max={LIMITS.rowDescription}
                    value={row.description ?? ''}
                    onChange={(description) => {
                      const { description: _d, ...rest } = row
                      setRow(description ? { ...rest, description } : rest)
                    }}
                  />
                  <TextInput
                    label={t('msg.replyId')}
                    value={row.id}
                    onChange={(id) => {
                      onRenameId?.(row.id, id)
                      setRow({ ...row, id })
                    }}
                  />
                </div>
              )
            })}
            {canAddRow && (
              <button type="button" className="add" onClick={() => setSection({ ...section, rows: [...section.rows, { id: nextId('row', rowIds), title: '' }] })}>
                + {t('msg.addRow')}
              </button>
            )}
          </div>
        )
      })}
      {canAddRow && sections.length < LIMITS.sections && (
        <button type="button" className="add" onClick={() => onChange([...sections, { title: '', rows: [{ id: nextId('row', rowIds), title: '' }] }])}>
          + {t('msg.addSection')}
        </button>
      )}
      {!canAddRow && <p className="hint">{t('msg.maxRows', { max: LIMITS.rows })}</p>}
    </fieldset>
  )
}
