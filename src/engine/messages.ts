import type { OutgoingMessage } from '../domain/flow-definition.js'
import { LIMITS } from '../domain/message-limits.js'

type Interactive = Extract<OutgoingMessage, { type: 'interactive' }>['interactive']
/** Interpolates `template`; `limit` is the channel's length limit of the field (`LIMITS`), where it has one. */
type Text = (template: string, limit?: number) => string

/**
 * A node's outgoing message with every human-facing string interpolated. Identifiers stay as
 * written: `type`s, button and row ids (they are the question's handles), the template id,
 * `action.name` and the tags.
 */
export const interpolateMessage = (message: OutgoingMessage, text: Text): OutgoingMessage => {
  const tags = message.tags && { tags: [...message.tags] }
  switch (message.type) {
    case 'text':
      return { type: 'text', text: { body: text(message.text.body, LIMITS.textBody) }, ...tags }
    case 'media': {
      const { caption, ...media } = message.media
      return {
        type: 'media',
        media: { ...media, mimeType: text(media.mimeType), url: text(media.url), ...(caption !== undefined && { caption: text(caption, LIMITS.caption) }) },
        ...tags,
      }
    }
    case 'template':
      return { type: 'template', template: { id: message.template.id, params: message.template.params.map((param) => text(param)) }, ...tags }
    case 'interactive':
      return { type: 'interactive', interactive: interpolateInteractive(message.interactive, text), ...tags }
    default: {
      const unknown: never = message
      throw new Error(`unknown outgoing message type in ${JSON.stringify(unknown)}`)
    }
  }
}

const interpolateInteractive = (interactive: Interactive, text: Text): Interactive => {
  switch (interactive.type) {
    case 'button':
      return {
        type: 'button',
        body: { text: text(interactive.body.text, LIMITS.interactiveBody) },
        ...(interactive.footer && { footer: { text: text(interactive.footer.text, LIMITS.footer) } }),
        action: { buttons: interactive.action.buttons.map((button) => ({ id: button.id, title: text(button.title, LIMITS.buttonTitle) })) },
      }
    case 'list':
      return {
        type: 'list',
        body: { text: text(interactive.body.text, LIMITS.interactiveBody) },
        ...(interactive.footer && { footer: { text: text(interactive.footer.text, LIMITS.footer) } }),
        action: {
          button: text(interactive.action.button, LIMITS.listButton),
          sections: interactive.action.sections.map((section) => ({
            title: text(section.title, LIMITS.sectionTitle),
            rows: section.rows.map((row) => ({
              id: row.id,
              title: text(row.title, LIMITS.rowTitle),
              ...(row.description !== undefined && { description: text(row.description, LIMITS.rowDescription) }),
            })),
          })),
        },
      }
    case 'cta_url':
      return {
        type: 'cta_url',
        body: { text: text(interactive.body.text, LIMITS.interactiveBody) },
        action: {
          name: 'cta_url',
          parameters: { display_text: text(interactive.action.parameters.display_text, LIMITS.ctaDisplayText), url: text(interactive.action.parameters.url) },
        },
      }
    default: {
      const unknown: never = interactive
      throw new Error(`unknown interactive type in ${JSON.stringify(unknown)}`)
    }
  }
}
