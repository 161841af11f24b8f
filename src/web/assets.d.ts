/** Stylesheets imported for esbuild to bundle (they have no exports). */
declare module "*.css";
