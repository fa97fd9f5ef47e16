// A self-signed certificate for a local HTTPS receiver, in a temporary folder. The service trusts it
// through WEBHOOK_CA_FILE; the folder goes at cleanup.

import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { makeSelfSignedCertificate } from '../../src/cli/self-signed-certificate.js'
import { onCleanup } from './cleanup.js'

export interface Certificate {
  /** PEM private key (EC P-256). */
  keyFile: string
  /** PEM self-signed certificate, valid for IP:127.0.0.1: the receiver's certificate and the service's extra CA. */
  certFile: string
  remove(): Promise<void>
}

export function makeLocalCertificate(): Certificate {
  const dir = mkdtempSync(join(tmpdir(), 'flowd-bench-receiver-'))
  const remove = onCleanup(`certificate folder ${dir}`, () => rmSync(dir, { recursive: true, force: true }))
  const keyFile = join(dir, 'key.pem')
  const certFile = join(dir, 'cert.pem')
  makeSelfSignedCertificate({ keyFile, certFile }, { commonName: 'flowd bench receiver', altNames: ['IP:127.0.0.1'], days: 1 })
  return { keyFile, certFile, remove }
}
