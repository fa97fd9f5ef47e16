/**
 * How the canvas fits a flow into view. A large flow is not shrunk past readable text (minZoom):
 * the view then shows its middle, and the rest is panned to.
 */
export const READABLE_FIT_VIEW = { padding: 0.15, maxZoom: 1, minZoom: 0.6 }
