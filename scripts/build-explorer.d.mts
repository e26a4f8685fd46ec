/** Writes the explorer's files (index.html, app.js, app.css, counties-10m.json) into `outDir`; answers app.js's size. */
export function buildExplorer(outDir: string): Promise<{ bytes: number }>;
