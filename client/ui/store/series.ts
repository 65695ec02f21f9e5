/**
 * Bounded chart histories: a run can last thousands of rounds, a tab must
 * not grow without end. A series keeps at most `capacity` points; when full
 * it keeps every other point (the newest always stays), so it covers the
 * whole run at a coarser step instead of forgetting its beginning.
 */

/** Points kept per chart series. Enough for a smooth line at any screen width. */
export const SERIES_CAPACITY = 240;

/** A downsampled series: the points and the spacing (in pushes) they were kept at. */
export interface Series<T> {
  readonly points: readonly T[];
  /** Keep one point in `stride` pushes; doubles each time the series is thinned. */
  readonly stride: number;
  /** Pushes since the last kept point. */
  readonly skipped: number;
}

/** An empty series. */
export function emptySeries<T>(): Series<T> {
  return { points: [], stride: 1, skipped: 0 };
}

/** Every other point, always keeping the last one. */
function thin<T>(points: readonly T[]): T[] {
  const kept = points.filter((_, i) => i % 2 === 0);
  const last = points[points.length - 1];
  if (last !== undefined && kept[kept.length - 1] !== last) kept.push(last);
  return kept;
}

/**
 * Adds a point. The newest point is always visible: between kept points it
 * replaces the previous newest, so the line ends at the live value.
 */
export function pushPoint<T>(series: Series<T>, point: T, capacity = SERIES_CAPACITY): Series<T> {
  const skipped = series.skipped + 1;
  if (skipped < series.stride && series.points.length > 0) {
    // Not a kept point yet: show it as the live end of the line, in place of the previous live end.
    const isLiveEnd = series.skipped > 0;
    const base = isLiveEnd ? series.points.slice(0, -1) : series.points;
    return { points: [...base, point], stride: series.stride, skipped };
  }
  const base = series.skipped > 0 ? series.points.slice(0, -1) : series.points;
  let points = [...base, point];
  let stride = series.stride;
  if (points.length > capacity) {
    points = thin(points);
    stride *= 2;
  }
  return { points, stride, skipped: 0 };
}

/** A series built from a whole history at once (a dashboard's snapshot). */
export function seriesOf<T>(points: readonly T[], capacity = SERIES_CAPACITY): Series<T> {
  let series = emptySeries<T>();
  for (const point of points) series = pushPoint(series, point, capacity);
  return series;
}
