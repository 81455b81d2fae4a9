// esbuild bundles CSS imports into checkpoints.css; to TypeScript they are side-effect imports.
declare module '*.css';
