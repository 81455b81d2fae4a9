// esbuild bundles CSS imports into preview.css; to TypeScript they are side-effect imports.
declare module '*.css';
