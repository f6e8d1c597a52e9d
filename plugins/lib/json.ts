/** A JSON object (not null, not an array): the check every reader of untyped objects starts with. */
export const isObj = (v: unknown): v is Record<string, any> => typeof v === 'object' && v !== null && !Array.isArray(v);
