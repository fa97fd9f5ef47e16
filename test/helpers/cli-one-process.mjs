// Runs several `flowd` invocations in this one process of the built CLI, for `runCliInOneProcess`
// (cli.ts): each is main() called with its arguments and environment, its stdout and stderr
// captured and its exit code the number main() returns, which is what the CLI's process exits with.
// Reads [mainPath, [{ args, env }, …]] as JSON on stdin; prints [{ code, stdout, stderr }, …].
import { pathToFileURL } from 'node:url'

let input = ''
for await (const chunk of process.stdin) input += chunk
const [mainPath, invocations] = JSON.parse(input)

const writeStdout = process.stdout.write.bind(process.stdout)
const writeStderr = process.stderr.write.bind(process.stderr)
let captured = { stdout: '', stderr: '' }
const capture = (stream) => (chunk, encoding, callback) => {
  captured[stream] += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString(typeof encoding === 'string' ? encoding : 'utf8')
  const done = typeof encoding === 'function' ? encoding : callback
  if (typeof done === 'function') process.nextTick(done)
  return true
}
process.stdout.write = capture('stdout')
process.stderr.write = capture('stderr')

const setEnv = (env) => {
  for (const name of Object.keys(process.env)) delete process.env[name]
  Object.assign(process.env, env)
}

// The module runs main() on its own arguments when loaded: none here, which prints the help.
setEnv(invocations[0]?.env ?? {})
process.argv = [process.argv[0], mainPath]
const { main } = await import(pathToFileURL(mainPath).href)

const results = []
for (const { args, env } of invocations) {
  setEnv(env)
  captured = { stdout: '', stderr: '' }
  const code = await main(args)
  results.push({ code, ...captured })
}
process.stdout.write = writeStdout
process.stderr.write = writeStderr
writeStdout(`${JSON.stringify(results)}\n`, () => process.exit(0))
