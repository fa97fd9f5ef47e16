// Which test files tap measures coverage in (.taprc `coverage-map`): [] is every source file the
// test process runs; null is none. Measuring costs a fifth of a process's CPU or more, so it is
// left off where it would find nothing the other files do not:
// - the browser files (their code under test runs in Chromium) and the files that drive commands
//   and services as child processes (children are never measured);
// - the folders that read the repository rather than run it;
// - the fuzz files, which run code the other files cover thousands of times more.
const unmeasured = [
  /^test\/by-folder\/(editor|dashboard|cli|docs|meta|architecture)(-\d+)?\.test\.ts$/,
  /^test\/roles\/(deployment|engine-partitions|roles)\.test\.ts$/,
  /^test\/faults\/(kill|call-kill|timer-kill|rebuild-kill|rebuild-beside-service|pg-restart)\.test\.ts$/,
  /^test\/faults\/fuzz-[a-z-]+\.test\.ts$/,
]

export default (testFile) => (unmeasured.some((pattern) => pattern.test(testFile)) ? null : [])
