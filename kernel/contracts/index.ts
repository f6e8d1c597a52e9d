// The plugin contracts: one small typed interface per plugin kind, in one module per concern.
// Plugins import them from here; the modules of this folder import each other directly.
export * from './plugins.js';
export * from './identity.js';
export * from './requests.js';
export * from './storage.js';
export * from './observe.js';
export * from './objects.js';
export * from './types.js';
export * from './host.js';
export * from './routes.js';
