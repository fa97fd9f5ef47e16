import { readFileSync, readdirSync, readlinkSync } from 'node:fs'

// Which child process holds one end of a TCP connection on this machine, read from Linux's /proc:
// a server sees only the sender's port, and the test needs the process behind it.

/** The inodes of the TCP sockets whose local port is `port`. */
function socketInodes(port: number): Set<string> {
  const inodes = new Set<string>()
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string
    try {
      text = readFileSync(table, 'utf8')
    } catch {
      continue
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/)
      const localAddress = fields[1]
      const inode = fields[9]
      if (localAddress && inode && Number.parseInt(localAddress.split(':')[1] ?? '', 16) === port) inodes.add(inode)
    }
  }
  return inodes
}

/** The one of `pids` holding the TCP socket whose local port is `port`; undefined if none does (or not on Linux). */
export function processOfLocalPort(port: number, pids: readonly number[]): number | undefined {
  const inodes = socketInodes(port)
  if (inodes.size === 0) return undefined
  return pids.find((pid) => {
    let fds: string[]
    try {
      fds = readdirSync(`/proc/${pid}/fd`)
    } catch {
      return false
    }
    return fds.some((fd) => {
      try {
        return inodes.has(/^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1] ?? '')
      } catch {
        return false
      }
    })
  })
}
