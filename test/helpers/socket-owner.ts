import { readFileSync, readdirSync, readlinkSync } from 'node:fs'

// Which child process holds one end of a TCP connection on this machine, read from Linux's /proc:
// a server sees only the sender's port, and the test needs the process behind it.

/** The rows of a /proc TCP table, split into fields (none off Linux). */
function tcpTable(table: string): string[][] {
  try {
    return readFileSync(table, 'utf8').split('\n').slice(1).map((line) => line.trim().split(/\s+/))
  } catch {
    return []
  }
}

/** `0100007F:1F90` → 8080. */
const portIn = (address: string) => Number.parseInt(address.split(':')[1] ?? '', 16)

/** The inodes of the sockets `pid` holds. */
function socketsOf(pid: number): string[] {
  let fds: string[]
  try {
    fds = readdirSync(`/proc/${pid}/fd`)
  } catch {
    return []
  }
  return fds.flatMap((fd) => {
    try {
      const inode = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1]
      return inode ? [inode] : []
    } catch {
      return []
    }
  })
}

/** The inodes of the TCP sockets whose local port is `port`. */
function socketInodes(port: number): Set<string> {
  const inodes = new Set<string>()
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const fields of tcpTable(table)) if (fields[1] && fields[9] && portIn(fields[1]) === port) inodes.add(fields[9])
  }
  return inodes
}

/** The one of `pids` holding the TCP socket whose local port is `port`; undefined if none does (or not on Linux). */
export function processOfLocalPort(port: number, pids: readonly number[]): number | undefined {
  const inodes = socketInodes(port)
  if (inodes.size === 0) return undefined
  return pids.find((pid) => socketsOf(pid).some((inode) => inodes.has(inode)))
}

/** The local ports of the TCP connections `pid` holds to `remotePort` (Linux: /proc). */
export function localPortsTo(pid: number, remotePort: number): Set<number> {
  const portOf = new Map<string, number>()
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const fields of tcpTable(table)) {
      const [local, remote, inode] = [fields[1], fields[2], fields[9]]
      if (local && remote && inode && portIn(remote) === remotePort) portOf.set(inode, portIn(local))
    }
  }
  const ports = new Set<number>()
  for (const inode of socketsOf(pid)) {
    const port = portOf.get(inode)
    if (port !== undefined) ports.add(port)
  }
  return ports
}
