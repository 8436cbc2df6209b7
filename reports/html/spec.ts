// What a chart draws, as plain data: the report builds these from a result document and embeds
// them as JSON in the page; the inlined chart code (charts.ts) turns them into SVG.

/** How an axis formats its ticks: seconds as ms/s/min/h, bytes as KB/MB/GB/TB, counts as k/M/B, shares as %. */
export type Unit = 'time' | 'seconds' | 'bytes' | 'count' | 'share';

export interface AxisSpec {
  label: string;
  unit: Unit;
  log?: boolean;
  /** Include zero in a linear axis (default true for y, false for x). */
  zero?: boolean;
  /** A fixed [min, max] (a linear time axis from the start to the end of the run). */
  domain?: [number, number];
}

export interface SeriesSpec {
  label: string;
  color: string;
  x: number[];
  y: number[];
  /** 'line' (default), 'dashed', 'points' (dots, no line) or 'linepoints'. */
  style?: 'line' | 'dashed' | 'points' | 'linepoints';
  /** One tooltip per point, for point styles. */
  titles?: string[];
  /** Label the line at its right end (default true). */
  endLabel?: boolean;
}

/** A horizontal line: an SLO, a budget, another policy's value. */
export interface ReferenceSpec {
  label: string;
  value: number;
  color: string;
  dash?: string;
  /** Stroke width (default 1.5). */
  width?: number;
  /**
   * 'note': on a linear axis, a line far above the data (over 4x its maximum) is not drawn to
   * scale but noted at the top of the panel; 'include': the axis always stretches to it.
   */
  fit: 'note' | 'include';
}

/** A point to ring and label: the recommended policy. */
export interface HighlightSpec {
  x: number;
  y: number;
  label: string;
  color: string;
}

export interface PanelSpec {
  title: string;
  y: AxisSpec;
  series: SeriesSpec[];
  refs: ReferenceSpec[];
  highlights?: HighlightSpec[];
  height?: number;
}

/** A vertical line across every panel: a scenario event, or the fitted tail's xmin. */
export interface MarkerSpec {
  x: number;
  label: string;
  detail: string;
}

export interface ChartSpec {
  x: AxisSpec;
  panels: PanelSpec[];
  markers: MarkerSpec[];
  /** Where marker labels go: 'top' of the first panel (default) or 'bottom' of the last, away from the data. */
  markerLabels?: 'top' | 'bottom';
  /** Crosshair tooltip showing every series at the nearest x (time series). */
  crosshair?: boolean;
}

/** The page's data block: chart name -> spec. Each `[data-chart=name]` container draws its spec. */
export type ChartData = Record<string, ChartSpec>;
