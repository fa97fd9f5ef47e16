/** The oldest Node.js the project runs on, as package.json's "engines" says. */
export declare const OLDEST_SUPPORTED: { major: number; minor: number }
/** The sentence to stop with on `version` (as in `process.versions.node`), or undefined where it runs. */
export declare function unsupportedNode(version: string): string | undefined
