// esbuild bundles CSS imports into dashboard.css; to TypeScript they are side-effect imports.
declare module '*.css';
