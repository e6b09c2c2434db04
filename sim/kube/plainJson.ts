// Whether a value is already what a JSON round trip (JSON.parse(JSON.stringify(v))) would give back, so
// that the store may keep it as it is instead of keeping such a copy. The store keeps every object
// as the JSON round trip of what it was given; an object the apiserver code has just decoded for a write
// (api.ts commit) is nearly always one already, and copying a whole Node for every heartbeat was a cost
// of its own. Anything the round trip would change answers false, and the store copies as before:
// -0, NaN and ±Infinity (encoded 0 and null), undefined anywhere (dropped, or null in an array), holes,
// functions, symbols, bigints, and objects other than arrays and plain objects (a Date encodes as a
// string, a Map as {}, an object with toJSON as whatever it returns, a prototype's properties vanish).
// Very deep values answer false too (the round trip, not this walk, then meets any cycle).

const maxDepth = 100;

export function isPlainJson(v: unknown, depth = 0): boolean {
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(v) && !Object.is(v, -0);
    case 'object': {
      if (v === null) return true;
      if (depth >= maxDepth) return false;
      if (Array.isArray(v)) {
        if (Object.getPrototypeOf(v) !== Array.prototype) return false;
        for (let i = 0; i < v.length; i++) if (!isPlainJson(v[i], depth + 1)) return false;
        return Object.keys(v).length === v.length;
      }
      if (Object.getPrototypeOf(v) !== Object.prototype) return false;
      const o = v as Record<string, unknown>;
      if ('toJSON' in o) return false;
      for (const k of Object.keys(o)) if (!isPlainJson(o[k], depth + 1)) return false;
      return true;
    }
    default:
      return false;
  }
}
