// Why a call outside a conversation (an httpRequest node's) has no answer, by the service's code
// (CALL_ERRORS of src/domain/outside-call.ts); the dashboard's and the editor's dictionaries include them.

export const outsideCallEn = {
  'call.error.timeout': 'No answer in time',
  'call.error.refused_address': 'Address refused (private or local network)',
  'call.error.too_large': 'Answer too large',
  'call.error.network': 'API not reached',
  'call.error.secret': 'A secret could not be read',
  'call.error.limit': 'Over the limit of calls',
}

export const outsideCallPt: Record<keyof typeof outsideCallEn, string> = {
  'call.error.timeout': 'Sem resposta a tempo',
  'call.error.refused_address': 'Endereço recusado (rede privada ou local)',
  'call.error.too_large': 'Resposta grande demais',
  'call.error.network': 'API não alcançada',
  'call.error.secret': 'Um segredo não pôde ser lido',
  'call.error.limit': 'Acima do limite de chamadas',
}
