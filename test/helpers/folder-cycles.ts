import { fileURLToPath } from 'node:url'
import { cruise, type ICruiseResult } from 'dependency-cruiser'

const root = fileURLToPath(new URL('../../', import.meta.url))

/** One import of one file by another, both under the folder cruised. */
export interface FileImport {
  from: string
  to: string
}

/** The imports among a folder's files, as the folder-cycles tests read them. */
export interface SourceGraph {
  /** How many files the graph holds (those of the folder and those they import). */
  files: number
  /** Every import of a file of the folder by another. */
  imports: FileImport[]
  /** Relative imports that name no file: each would be an import missing from `imports`. */
  unresolved: string[]
  /** Whether type-only imports are among the dependencies. */
  hasTypeOnly: boolean
}

/** The imports among the files of `folder` (relative to the repository), type-only ones included. */
export async function sourceGraph(folder: string, extensions: string[]): Promise<SourceGraph> {
  const { output } = await cruise(
    [folder],
    {
      baseDir: root,
      // Type-only imports count: they vanish from the compiled JavaScript, but the importing folder is
      // still written in the other folder's terms and breaks when those change, which is the coupling
      // a cycle between folders is about.
      tsPreCompilationDeps: true,
      exclude: { path: 'node_modules/' },
    },
    { extensions },
  )
  const modules = (output as ICruiseResult).modules
  const dependencies = modules.flatMap((module) => module.dependencies.map((dependency) => ({ from: module.source, dependency })))
  return {
    files: modules.length,
    imports: dependencies
      .filter(({ dependency }) => dependency.resolved.startsWith(`${folder}/`))
      .map(({ from, dependency }) => ({ from, to: dependency.resolved })),
    unresolved: dependencies
      .filter(({ dependency }) => dependency.couldNotResolve && dependency.module.startsWith('.'))
      .map(({ from, dependency }) => `${from} → ${dependency.module}`),
    hasTypeOnly: dependencies.some(({ dependency }) => dependency.dependencyTypes.includes('type-only')),
  }
}

/**
 * Every cycle between units (folders, as `unitOf` names them): each strongly connected group of two
 * or more units, as one cycle through them followed by every file-level import between them. Each
 * such import lies on a cycle, so removing them all (or reversing them) is what breaks it.
 */
export function folderCycles(imports: readonly FileImport[], unitOf: (file: string) => string): string[] {
  const between = new Map<string, Map<string, FileImport[]>>()
  for (const fileImport of imports) {
    const from = unitOf(fileImport.from)
    const to = unitOf(fileImport.to)
    if (from === to) continue
    const targets = between.get(from) ?? new Map<string, FileImport[]>()
    between.set(from, targets.set(to, [...(targets.get(to) ?? []), fileImport]))
    if (!between.has(to)) between.set(to, new Map())
  }
  const successors = (unit: string): string[] => [...(between.get(unit)?.keys() ?? [])].sort()

  return stronglyConnected([...between.keys()].sort(), successors)
    .filter((group) => group.length > 1)
    .map((group) => {
      const members = new Set(group)
      const lines = [...group]
        .sort()
        .flatMap((from) => successors(from).filter((to) => members.has(to)).flatMap((to) => between.get(from)?.get(to) ?? []))
        .map(({ from, to }) => `  ${from} → ${to}`)
      return [cycleThrough(group, successors).join(' → '), ...lines].join('\n')
    })
}

/** Tarjan's algorithm: the strongly connected groups of a directed graph. */
function stronglyConnected(nodes: readonly string[], successors: (node: string) => string[]): string[][] {
  const index = new Map<string, number>()
  const lowLink = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const groups: string[][] = []
  const visit = (node: string): void => {
    index.set(node, index.size)
    lowLink.set(node, index.get(node)!)
    stack.push(node)
    onStack.add(node)
    for (const next of successors(node)) {
      if (!index.has(next)) {
        visit(next)
        lowLink.set(node, Math.min(lowLink.get(node)!, lowLink.get(next)!))
      } else if (onStack.has(next)) {
        lowLink.set(node, Math.min(lowLink.get(node)!, index.get(next)!))
      }
    }
    if (lowLink.get(node) !== index.get(node)) return
    const group: string[] = []
    let member: string | undefined
    do {
      member = stack.pop()!
      onStack.delete(member)
      group.push(member)
    } while (member !== node)
    groups.push(group)
  }
  for (const node of nodes) if (!index.has(node)) visit(node)
  return groups
}

/** The shortest cycle from the group's first unit back to itself, staying inside the group. */
function cycleThrough(group: readonly string[], successors: (node: string) => string[]): string[] {
  const members = new Set(group)
  const start = [...group].sort()[0]!
  const cameFrom = new Map<string, string>()
  const queue = [start]
  while (queue.length > 0) {
    const node = queue.shift()!
    for (const next of successors(node).filter((unit) => members.has(unit))) {
      if (next === start) {
        const path = [node]
        while (path[0] !== start) path.unshift(cameFrom.get(path[0]!)!)
        return [...path, start]
      }
      if (!cameFrom.has(next)) {
        cameFrom.set(next, node)
        queue.push(next)
      }
    }
  }
  return [...group]
}
