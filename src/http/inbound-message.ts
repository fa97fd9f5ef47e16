import { Type, type Static } from '@sinclair/typebox'
import type { InboundMessage } from '../domain/turn.js'
import { LIMITS } from '../domain/message-limits.js'
import { BadRequestError } from '../errors.js'
import { OneOf } from './schemas.js'

const MEDIA_TYPES = ['image', 'video', 'audio', 'document', 'sticker'] as const
const Reply = Type.Object({ id: Type.String({ minLength: 1 }), title: Type.String({ minLength: 1 }) })

/** The send body as the spec's table gives it; which part is required depends on `type`. */
export const SendMessageBody = Type.Object({
  type: OneOf(['text', 'interactive', ...MEDIA_TYPES] as const),
  text: Type.Optional(Type.Object({ body: Type.String({ minLength: 1, maxLength: LIMITS.textBody }) })),
  media: Type.Optional(
    Type.Object({
      mimeType: Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*$', description: 'a MIME type such as image/jpeg' }),
      url: Type.String({ pattern: '^https?://', format: 'uri', description: 'public http(s) URL of the file' }),
      caption: Type.Optional(Type.String({ maxLength: 1024 })),
    }),
  ),
  interactive: Type.Optional(
    Type.Object({
      type: OneOf(['button_reply', 'list_reply'] as const),
      button_reply: Type.Optional(Reply),
      list_reply: Type.Optional(Reply),
    }),
  ),
}, { examples: [{ type: 'text', text: { body: 'I want to buy' } }] })
export type SendMessageBody = Static<typeof SendMessageBody>

const required = (path: string, type: string) => new BadRequestError(`body/${path} is required when type is ${type}`)
// Only the named fields go into the event: validation keeps properties a schema does not name.
const reply = ({ id, title }: Static<typeof Reply>) => ({ id, title })

/** The inbound message of a send body, or a 400 naming the part its `type` requires. */
export function toInboundMessage(body: SendMessageBody): InboundMessage {
  switch (body.type) {
    case 'text':
      if (!body.text) throw required('text', 'text')
      return { type: 'text', text: { body: body.text.body } }
    case 'interactive': {
      const interactive = body.interactive
      if (!interactive) throw required('interactive', 'interactive')
      if (interactive.type === 'button_reply') {
        if (!interactive.button_reply) throw new BadRequestError('body/interactive/button_reply is required when interactive.type is button_reply')
        return { type: 'interactive', interactive: { type: 'button_reply', button_reply: reply(interactive.button_reply) } }
      }
      if (!interactive.list_reply) throw new BadRequestError('body/interactive/list_reply is required when interactive.type is list_reply')
      return { type: 'interactive', interactive: { type: 'list_reply', list_reply: reply(interactive.list_reply) } }
    }
    default: {
      if (!body.media) throw required('media', body.type)
      const { mimeType, url, caption } = body.media
      return { type: body.type, media: caption === undefined ? { mimeType, url } : { mimeType, url, caption } }
    }
  }
}
