// esbuild bundles CSS imports into runsTable.css; to TypeScript they are side-effect imports.
declare module '*.css';
