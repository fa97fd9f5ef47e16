import { execFileSync } from 'node:child_process'

export interface SelfSignedCertificate {
  /** The certificate (PEM, EC P-256 key): a local receiver's certificate and, through WEBHOOK_CA_FILE, the CA the service trusts for it. */
  certFile: string
  keyFile: string
}

/**
 * Writes a self-signed certificate and its key with the openssl CLI (Node can sign but not issue
 * X.509 certificates). `altNames` are subjectAltName entries, e.g. `IP:127.0.0.1`.
 */
export function makeSelfSignedCertificate(files: SelfSignedCertificate, options: { commonName: string; altNames: string[]; days: number }): SelfSignedCertificate {
  try {
    execFileSync(
      'openssl',
      [
        'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
        '-keyout', files.keyFile, '-out', files.certFile, '-days', String(options.days), '-subj', `/CN=${options.commonName}`,
        '-addext', `subjectAltName=${options.altNames.join(',')}`,
      ],
      { stdio: 'pipe' },
    )
  } catch (error) {
    throw new Error(`could not make a certificate with the openssl command: ${error instanceof Error ? error.message : String(error)}`)
  }
  return files
}
