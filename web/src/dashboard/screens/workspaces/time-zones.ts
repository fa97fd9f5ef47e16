/** The IANA time zones this browser knows, offered as a workspace's time zone. */
export const TIME_ZONES: readonly string[] = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : []
