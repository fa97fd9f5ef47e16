// The chat transcript's strings; the dashboard's and the editor's dictionaries include them.

export const chatTranscriptEn = {
  'chat.contact': 'Contact',
  'chat.you': 'You',
  'chat.bot': 'Bot',
  'chat.botAt': 'Bot · {node}',
  'chat.pressed': 'Pressed the button',
  'chat.picked': 'Picked from the list',
  'chat.youPressed': 'Tapped',
  'chat.youPicked': 'Picked',
  'chat.buttons': 'Buttons',
  'chat.buttonId': 'Button id: {id}',
  'chat.template': 'Template {id}',
  'chat.templateParams': 'Template parameters',
  'chat.media.image': 'Image',
  'chat.media.video': 'Video',
  'chat.media.audio': 'Audio',
  'chat.media.document': 'Document',
  'chat.media.sticker': 'Sticker',
  'chat.media.open': 'Open the file',
}

export type ChatTranscriptKey = keyof typeof chatTranscriptEn

export const chatTranscriptPt: Record<ChatTranscriptKey, string> = {
  'chat.contact': 'Contato',
  'chat.you': 'Você',
  'chat.bot': 'Bot',
  'chat.botAt': 'Bot · {node}',
  'chat.pressed': 'Tocou no botão',
  'chat.picked': 'Escolheu na lista',
  'chat.youPressed': 'Tocou',
  'chat.youPicked': 'Escolheu',
  'chat.buttons': 'Botões',
  'chat.buttonId': 'Id do botão: {id}',
  'chat.template': 'Template {id}',
  'chat.templateParams': 'Parâmetros do template',
  'chat.media.image': 'Imagem',
  'chat.media.video': 'Vídeo',
  'chat.media.audio': 'Áudio',
  'chat.media.document': 'Documento',
  'chat.media.sticker': 'Figurinha',
  'chat.media.open': 'Abrir o arquivo',
}
