/** Matrix shapes for the factorisation tests. */

/**
 * Each rows×cols shape followed by its transpose (a square one once): a factorisation is tested on the tall and on the
 * wide side.
 */
export function bothWays(...shapes: readonly (readonly [number, number])[]): [number, number][] {
  return shapes.flatMap(([rows, cols]): [number, number][] =>
    rows === cols
      ? [[rows, cols]]
      : [
          [rows, cols],
          [cols, rows],
        ],
  );
}
