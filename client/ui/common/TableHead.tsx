/** The header row of the pages' tables, written once from a list of columns. */

/**
 * One <th> per column, in order: `label` gives its text, `numeric` the columns right-aligned like their numbers,
 * `titles` any tooltips.
 */
export function TableHead<K extends string>({
  columns,
  label,
  numeric = [],
  titles = {},
}: {
  columns: readonly K[];
  label: (column: K) => string;
  numeric?: readonly K[];
  titles?: Partial<Record<K, string>>;
}) {
  return (
    <thead>
      <tr>
        {columns.map((column) => (
          <th key={column} className={numeric.includes(column) ? 'num' : undefined} title={titles[column]}>
            {label(column)}
          </th>
        ))}
      </tr>
    </thead>
  );
}
