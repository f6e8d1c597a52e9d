// A quantity as a plain number (approximate), enough to compare requests and limits in defaulting and
// HPA validation; the reference's grammar is workers/body/quantity.ts's (NaN when it does not parse).
import { parseQuantity, quantityValue } from '../../../workers/body/quantity.js';

export function quantity(q: unknown): number {
  const p = parseQuantity(q);
  return typeof p === 'string' ? NaN : quantityValue(p);
}
