// Table representation (meta.<brand>/v1 Table): the default Name and Created At columns, or the
// columns the type catalog names. Cells are computed here, once per response or watch event.
import type { Brand } from '../../contracts/brand.js';
import type { KObject, TableColumn, TypeDef } from '../../contracts/index.js';

export const NAME_DESCRIPTION = 'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated.';
const NAME_COLUMN = { name: 'Name', type: 'string', format: 'name', description: NAME_DESCRIPTION, priority: 0 };
const CREATED_AT: TableColumn = { name: 'Created At', type: 'date', description: 'CreationTimestamp is a timestamp representing the server time when this object was created.', path: '.metadata.creationTimestamp' };

function columns(type: TypeDef): TableColumn[] {
  return type.columns && type.columns.length ? type.columns : [CREATED_AT];
}

/** The Name column comes first unless the type places its own, as the reference's event printer does (last, wide). */
const ownName = (type: TypeDef) => !!type.columns?.some((c) => c.isName);

function byPath(obj: unknown, path: string): unknown {
  let cur: unknown = obj;
  for (const seg of path.split('.').filter(Boolean)) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[seg];
  }
  return cur;
}

export type IncludeObject = 'None' | 'Metadata' | 'Object';

export function columnDefinitions(type: TypeDef) {
  return [...(ownName(type) ? [] : [NAME_COLUMN]), ...columns(type).map((c) => ({ name: c.name, type: c.type, format: c.format ?? '', description: c.description ?? '', priority: c.priority ?? 0 }))];
}

export function tableRow(type: TypeDef, obj: KObject, brand: Brand, include: IncludeObject, metaVersion: string, now = Date.now()) {
  const cells: unknown[] = ownName(type) ? [] : [obj.metadata?.name ?? ''];
  for (const c of columns(type)) {
    const v = c.cell ? c.cell(obj, now) : c.path ? byPath(obj, c.path) : undefined;
    cells.push(v === undefined ? (c.type === 'string' ? '' : null) : v);
  }
  const row: Record<string, unknown> = { cells };
  if (include === 'Object') row.object = obj;
  else if (include === 'Metadata') row.object = { kind: 'PartialObjectMetadata', apiVersion: `meta.${brand.domain}/${metaVersion}`, metadata: obj.metadata };
  return row;
}

export function table(type: TypeDef, objs: KObject[], brand: Brand, include: IncludeObject, metaVersion: string, listMeta: Record<string, unknown>) {
  const now = Date.now();
  return {
    kind: 'Table',
    apiVersion: `meta.${brand.domain}/${metaVersion}`,
    metadata: listMeta,
    columnDefinitions: columnDefinitions(type),
    rows: objs.map((o) => tableRow(type, o, brand, include, metaVersion, now)),
  };
}
