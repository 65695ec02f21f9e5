/** The labelled inputs of the dashboard's forms: a number field and a select. */

/** The bounds and step of a number input, as the schema's bounds give them. */
export interface NumberRange {
  readonly min: number | string;
  readonly max?: number | string;
  readonly step: string;
}

/** A number input under its label. */
export function NumberField(props: {
  label: string;
  value: string;
  onChange: (value: string) => void;
  range: NumberRange;
  testId?: string | undefined;
}) {
  const { min, max, step } = props.range;
  return (
    <label>
      {props.label}
      <input
        type="number"
        min={min}
        max={max}
        step={step}
        value={props.value}
        onChange={(e) => props.onChange(e.target.value)}
        data-testid={props.testId}
      />
    </label>
  );
}

/** A select's option: its value and what it shows. */
export type Option<V extends string> = readonly [value: V, text: string];

/** A select under its label. */
export function ChoiceField<V extends string>(props: {
  label: string;
  value: V;
  options: readonly Option<V>[];
  onChange: (value: V) => void;
  testId?: string;
}) {
  return (
    <label>
      {props.label}
      <select value={props.value} onChange={(e) => props.onChange(e.target.value as V)} data-testid={props.testId}>
        {props.options.map(([value, text]) => (
          <option key={value} value={value}>
            {text}
          </option>
        ))}
      </select>
    </label>
  );
}
