// A self-signed certificate for a local HTTPS receiver, made with the openssl CLI in a temporary
// folder (the same approach as test/helpers/https-receiver.ts, copied rather than imported: bench/
// must not depend on test helpers that change with the tests). The service trusts it through
// WEBHOOK_CA_FILE; the folder goes at cleanup.

import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
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
  execFileSync(
    'openssl',
    [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
      '-keyout', keyFile, '-out', certFile, '-days', '1', '-subj', '/CN=flowd bench receiver',
      '-addext', 'subjectAltName=IP:127.0.0.1',
    ],
    { stdio: 'pipe' },
  )
  return { keyFile, certFile, remove }
}
