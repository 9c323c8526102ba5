// Types of manifest-types.mjs, for the test that imports it.

export declare const SCHEMA_FILE: URL;
export declare const TYPES_FILE: URL;
export declare function generateManifestTypes(): Promise<string>;
