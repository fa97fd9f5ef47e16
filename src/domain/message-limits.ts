/**
 * WhatsApp's limits on messages, in characters (Unicode code points). The flow validator enforces
 * them on what a flow sends, and the API `textBody` on a text sent into a session; the editor and
 * the dashboard import this same file to count against them as people type.
 */
export const LIMITS = {
  textBody: 4096,
  caption: 1024,
  interactiveBody: 1024,
  footer: 60,
  buttons: 3,
  buttonTitle: 20,
  listButton: 20,
  sections: 10,
  rows: 10,
  sectionTitle: 24,
  rowTitle: 24,
  rowDescription: 72,
  ctaDisplayText: 20,
} as const
